package redact

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// allowlist is a gitleaks allowlist, for what it can check in a value: its
// regexes (on the secret, the whole match or the line, per its target)
// and its stop words (in the secret). memfs has no commits, and its keys
// are not repository paths: conditions on those never hold, so an
// allowlist that needs them (AND) never applies, and one that has nothing
// else (OR) has nothing to apply.
type allowlist struct {
	and       bool   // every check must hold (else any one)
	target    string // "" (the secret), "match" or "line"
	regexes   []string
	stopwords []string // lower case
	never     bool

	once  sync.Once
	res   []*regexp.Regexp // compiled at first use, apart ("^a$|^b$" would not be anchored)
	stops map[string][]string
	bad   bool // a regex does not compile: the list allows nothing
}

func newAllowlist(a gitleaksAllowlist) *allowlist {
	al := &allowlist{
		and:     strings.EqualFold(a.Condition, "and") || a.Condition == "&&",
		target:  a.RegexTarget,
		regexes: a.Regexes,
	}
	for _, w := range a.StopWords {
		al.stopwords = append(al.stopwords, strings.ToLower(w))
	}
	al.never = al.and && (len(a.Paths) > 0 || len(a.Commits) > 0) ||
		len(al.regexes) == 0 && len(al.stopwords) == 0
	return al
}

// regexesOnly returns the allowlist without its stop words (nil when
// nothing is left, or when it needs them), for memfs's own rules: a stop
// word list drops random secrets that happen to hold a short word.
func (a *allowlist) regexesOnly() *allowlist {
	if a.never || len(a.regexes) == 0 || a.and && len(a.stopwords) > 0 {
		return nil
	}
	if len(a.stopwords) == 0 {
		return a
	}
	return &allowlist{and: a.and, target: a.target, regexes: a.regexes}
}

func (a *allowlist) build() {
	for _, r := range a.regexes {
		re, err := regexp.Compile(r)
		if err != nil {
			a.bad = true
			return
		}
		a.res = append(a.res, re)
	}
	if len(a.stopwords) > 0 {
		a.stops = map[string][]string{}
		for _, w := range a.stopwords {
			k := w[:min(len(w), 2)]
			a.stops[k] = append(a.stops[k], w)
		}
	}
}

// allows reports whether the allowlist lets a finding through: secret is
// what the rule found, match its whole match, line the line it is on.
func (a *allowlist) allows(secret, match, line []byte) bool {
	if a.never {
		return false
	}
	a.once.Do(a.build)
	if a.bad {
		return false
	}
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	reOK := len(target) > 0 && a.matches(target)
	stopOK := a.stops != nil && a.hasStopword(secret)
	if a.and {
		return (a.res == nil || reOK) && (a.stops == nil || stopOK)
	}
	return reOK || stopOK
}

// matches reports whether one of the regexes matches the target.
func (a *allowlist) matches(target []byte) bool {
	return slices.ContainsFunc(a.res, func(re *regexp.Regexp) bool { return re.Match(target) })
}

// hasStopword reports whether the secret holds a stop word, ignoring case.
func (a *allowlist) hasStopword(secret []byte) bool {
	s := string(bytes.ToLower(secret))
	for i := 0; i < len(s); i++ {
		for _, k := range []string{s[i:min(i+2, len(s))], s[i : i+1]} {
			if slices.ContainsFunc(a.stops[k], func(w string) bool { return strings.HasPrefix(s[i:], w) }) {
				return true
			}
		}
	}
	return false
}

// userAllow is the config's allow list: a secret is kept when it equals
// an entry, or when an entry, as a regular expression, matches all of it.
type userAllow struct {
	exact []string
	res   []*regexp.Regexp // each entry as ^(?:entry)$
}

func (u *userAllow) allows(secret []byte) bool {
	return slices.Contains(u.exact, string(secret)) ||
		slices.ContainsFunc(u.res, func(re *regexp.Regexp) bool { return re.Match(secret) })
}
