// Package redact finds secrets in memory values and replaces them before
// anything reaches disk. It is a leaf: it knows nothing of stores, sessions
// or mounts.
//
// A [Redactor] holds compiled rules: well-known token formats (cloud,
// VCS, CI, chat, payment and LLM API keys, private key blocks, JWTs,
// credentials in URLs), generic key = value assignments whose value has
// high entropy, the values of secret-looking environment variables, and
// user rules from a config file. [Redactor.Redact] returns the value with
// each secret replaced by a stable marker, "[REDACTED:rule-id]", and the
// findings: rule id and byte range, never the secret itself.
//
// # Speed
//
// Every rule has keywords. A value is searched for them first (one
// memchr-speed pass each); a rule's regular expression runs only on the
// lines that hold one of its keywords. Clean text costs the keyword passes
// and nothing else, and a clean value is returned as is, without a copy.
// The gitleaks rule set was measured as a library and not taken: 2.4 MB/s
// on 1 MiB of notes and code, +10 MB of binary and some 1,300 module graph
// edges (see the README).
//
// # Invariants
//
// Redaction is idempotent: markers never match a rule. Findings never
// carry the secret. A Redactor is immutable after New and safe for
// concurrent use.
//
// # Example
//
//	r, err := redact.New(redact.Config{})
//	out, findings := r.Redact("memory/notes.md", value)
//	for _, f := range findings {
//		log.Printf("redacted %s", f) // rule and range only
//	}
package redact

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Finding is one redacted secret: which rule found it and where it was in
// the original value. It never holds the secret.
type Finding struct {
	RuleID string
	Start  int // byte offset of the secret in the original value
	End    int // byte offset just past it
	Line   int // 1-based line of Start
	Column int // 1-based byte column of Start
}

func (f Finding) String() string {
	return fmt.Sprintf("%s at %d:%d (bytes %d-%d)", f.RuleID, f.Line, f.Column, f.Start, f.End)
}

// Rule is a detection rule: a regular expression and the keywords that
// must occur on a line for it to be tried. The secret is the submatch
// named "secret", or the whole match.
type Rule struct {
	ID       string   `json:"id"`
	Pattern  string   `json:"pattern"`
	Keywords []string `json:"keywords"` // matched without regard to ASCII case
	// MinEntropy, when set, drops matches whose secret has fewer bits of
	// Shannon entropy per byte (for generic rules).
	MinEntropy float64 `json:"min_entropy,omitempty"`
	// CaseSensitive matches the keywords with their case (for short ones
	// such as "SK" that are common words in lower case).
	CaseSensitive bool `json:"case_sensitive,omitempty"`
	// Assignment, when set, tries the rule only where an assignment
	// (":", "=", ",") follows the keyword closely.
	Assignment bool `json:"assignment,omitempty"`
}

// PrefixRules switches rules off for keys under a prefix.
type PrefixRules struct {
	Prefix string   `json:"prefix"`
	Rules  []string `json:"rules"` // rule ids; "*" is every rule, "env" every environment value
}

// Config configures a Redactor. The zero value means: built-in rules on,
// secrets from os.Environ() under DefaultEnvNames, no user rules.
type Config struct {
	// Extra rules, in addition to the built-in ones.
	Extra []Rule `json:"rules"`
	// Allow keeps a secret that equals an entry, or that an entry, as a
	// regular expression, matches as a whole (see LoadConfig).
	Allow []string `json:"allow"`
	// Disabled switches rules off under key prefixes. Naming a rule that
	// does not exist is an error.
	Disabled []PrefixRules `json:"disable"`
	// EnvNames are glob patterns (as in path.Match, upper case) of
	// environment variable names whose values are secrets; nil means
	// DefaultEnvNames.
	EnvNames []string `json:"env_names"`
	// MinEnvLen is the shortest environment value taken as a secret: a
	// short one would match ordinary text. 0 means 12.
	MinEnvLen int `json:"min_env_len"`
	// Env is the environment ("NAME=value" lines); nil means os.Environ().
	Env []string `json:"-"`
	// NoBuiltin switches the built-in rules off (for tests of user rules).
	NoBuiltin bool `json:"-"`
}

// DefaultEnvNames are the environment variable names whose values are
// redacted by default.
var DefaultEnvNames = []string{"*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*API_KEY*", "*APIKEY*",
	"*ACCESS_KEY*", "*PRIVATE_KEY*", "*CREDENTIAL*", "*AUTH_KEY*"}

// Redactor finds and replaces secrets. Build it with New.
type Redactor struct {
	rules    []compiled
	allow    userAllow
	disabled []PrefixRules
	env      []envSecret

	// The keyword index: every keyword is found in one pass over the
	// value. pairs maps the first two bytes of a keyword (lower case) to
	// 1 + its group in groups; exactPairs does the same for case-sensitive
	// keywords, looked up in the value itself.
	pairs, exactPairs [1 << 16]int32
	groups            [][]keyword
}

// keyword is one keyword and the rules it triggers.
type keyword struct {
	kw    []byte
	rules []int
}

type compiled struct {
	id         string
	re         *regexp.Regexp
	secret     int      // submatch index of the secret (0: whole match)
	keywords   [][]byte // lower case
	minEntropy float64
	multiline  bool // the rule needs the whole value, not a line (PEM blocks)
	// onLower runs the expression on the lower-cased copy of the value
	// ("(?i)" rules): the same offsets, without the cost of case folding
	// in the regexp engine, which dominated a profile.
	onLower bool
	// assign requires an assignment (":", "=", ",") within a few bytes after
	// the keyword before the line is tried: generic words such as "token"
	// are common in prose and code.
	assign bool
	// exact matches the keywords in the value itself, with their case.
	exact bool
}

type envSecret struct {
	name  string
	value []byte
}

// New compiles cfg into a Redactor. It fails on a user rule or allow
// entry that does not compile, and on a disable entry that names no rule.
func New(cfg Config) (*Redactor, error) {
	r := &Redactor{disabled: cfg.Disabled}
	var rules []Rule
	if !cfg.NoBuiltin {
		rules = append(rules, builtin...)
	}
	rules = append(rules, cfg.Extra...)
	for _, rule := range rules {
		c, err := compile(rule)
		if err != nil {
			return nil, err
		}
		r.rules = append(r.rules, c)
	}
	for _, a := range cfg.Allow {
		// Compiled alone first: "x)|(y" would undo the anchors around it.
		if _, err := regexp.Compile(a); err != nil {
			return nil, fmt.Errorf("redact: allow pattern %q: %w", a, err)
		}
		r.allow.exact = append(r.allow.exact, a)
		r.allow.res = append(r.allow.res, regexp.MustCompile(`^(?:`+a+`)$`))
	}
	known := map[string]bool{"*": true, "env": true}
	for _, c := range r.rules {
		known[c.id] = true
	}
	for _, d := range cfg.Disabled {
		for _, id := range d.Rules {
			if !known[id] && !strings.HasPrefix(id, "env-") {
				return nil, fmt.Errorf("redact: disable under %q: no rule %q", d.Prefix, id)
			}
		}
	}
	r.env = envSecrets(cfg)
	r.index()
	return r, nil
}

// index builds the keyword tables from the compiled rules.
func (r *Redactor) index() {
	type slot struct {
		exact bool
		kw    string
	}
	at := map[slot]int{} // keyword -> its position in r.groups[group]
	for ri, c := range r.rules {
		for _, kw := range c.keywords {
			table := &r.pairs
			if c.exact {
				table = &r.exactPairs
			}
			pair := uint16(kw[0])<<8 | uint16(kw[1])
			g := table[pair]
			if g == 0 {
				r.groups = append(r.groups, nil)
				g = int32(len(r.groups))
				table[pair] = g
			}
			k := slot{c.exact, string(kw)}
			if i, ok := at[k]; ok {
				r.groups[g-1][i].rules = append(r.groups[g-1][i].rules, ri)
				continue
			}
			at[k] = len(r.groups[g-1])
			r.groups[g-1] = append(r.groups[g-1], keyword{kw: kw, rules: []int{ri}})
		}
	}
}

func compile(rule Rule) (compiled, error) {
	if rule.ID == "" {
		return compiled{}, fmt.Errorf("redact: a rule without an id (pattern %q)", rule.Pattern)
	}
	re, err := regexp.Compile(rule.Pattern)
	if err != nil {
		return compiled{}, fmt.Errorf("redact: rule %s: %w", rule.ID, err)
	}
	if len(rule.Keywords) == 0 {
		return compiled{}, fmt.Errorf("redact: rule %s has no keywords (every rule needs one, for speed)", rule.ID)
	}
	for _, k := range rule.Keywords {
		if len(k) < 2 {
			return compiled{}, fmt.Errorf("redact: rule %s: keyword %q is shorter than 2 bytes", rule.ID, k)
		}
	}
	c := compiled{id: rule.ID, re: re, minEntropy: rule.MinEntropy, multiline: strings.Contains(rule.Pattern, `(?s)`),
		assign: rule.Assignment, exact: rule.CaseSensitive}
	if p, ok := strings.CutPrefix(rule.Pattern, "(?i)"); ok {
		if lre, err := regexp.Compile(p); err == nil && lowerSafe(p) {
			c.re, c.onLower = lre, true
		}
	}
	if i := re.SubexpIndex("secret"); i > 0 {
		c.secret = i
	}
	for _, k := range rule.Keywords {
		if c.exact {
			c.keywords = append(c.keywords, []byte(k))
		} else {
			c.keywords = append(c.keywords, bytes.ToLower([]byte(k)))
		}
	}
	return c, nil
}

func envSecrets(cfg Config) []envSecret {
	names := cfg.EnvNames
	if names == nil {
		names = DefaultEnvNames
	}
	minLen := cfg.MinEnvLen
	if minLen <= 0 {
		minLen = 12
	}
	env := cfg.Env
	if env == nil {
		env = os.Environ()
	}
	var out []envSecret
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < minLen {
			continue
		}
		for _, pat := range names {
			if globMatch(pat, strings.ToUpper(name)) {
				out = append(out, envSecret{name: name, value: []byte(value)})
				break
			}
		}
	}
	return out
}

// globMatch matches name against a pattern where * is any run of bytes.
func globMatch(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	for i, p := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(name, p)
		}
		j := strings.Index(name, p)
		if j < 0 {
			return false
		}
		name = name[j+len(p):]
	}
	return true
}

// Redact returns value with every secret replaced by "[REDACTED:rule-id]",
// and the findings in order. A value without secrets is returned as is.
func (r *Redactor) Redact(key string, value []byte) ([]byte, []Finding) {
	var spans []Finding
	if len(value) >= 2 {
		lower := asciiLower(value)
		hits := r.scan(key, value, lower)
		for ri, lines := range hits {
			c := &r.rules[ri]
			in := value
			if c.onLower {
				in = lower
			}
			if c.multiline && len(lines) > 0 {
				spans = c.match(in, value, 0, len(value), spans)
				continue
			}
			for _, l := range lines {
				spans = c.match(in, value, l[0], l[1], spans)
			}
		}
	}
	for _, e := range r.env {
		id := "env-" + strings.ToLower(e.name)
		if r.off(key, "env") || r.off(key, id) {
			continue
		}
		for off := 0; ; {
			j := bytes.Index(value[off:], e.value)
			if j < 0 {
				break
			}
			spans = append(spans, Finding{RuleID: id, Start: off + j, End: off + j + len(e.value)})
			off += j + len(e.value)
		}
	}
	if len(spans) == 0 {
		return value, nil
	}
	spans = r.allowed(value, spans)
	if len(spans) == 0 {
		return value, nil
	}
	return replace(value, spans)
}

// off reports whether rule id is switched off for key.
func (r *Redactor) off(key, id string) bool {
	for _, d := range r.disabled {
		if strings.HasPrefix(key, d.Prefix) && (slices.Contains(d.Rules, "*") || slices.Contains(d.Rules, id)) {
			return true
		}
	}
	return false
}

// scan finds every keyword in one pass and returns, for each rule that is
// on for key, the lines (start, end) where it must be tried, in order and
// each once.
func (r *Redactor) scan(key string, value, lower []byte) [][][2]int {
	var hits [][][2]int // by rule index, so that rules are tried in order
	add := func(ri, at, kwLen int) {
		c := &r.rules[ri]
		if c.assign && !assignmentAfter(lower, at+kwLen) {
			return
		}
		var lines [][2]int
		if hits != nil {
			lines = hits[ri]
		}
		if n := len(lines); n > 0 && at < lines[n-1][1] {
			return // same line as the last hit
		}
		if r.off(key, c.id) {
			return
		}
		start := bytes.LastIndexByte(value[:at], '\n') + 1
		end := bytes.IndexByte(value[at:], '\n')
		if end < 0 {
			end = len(value)
		} else {
			end += at
		}
		if hits == nil {
			hits = make([][][2]int, len(r.rules))
		}
		hits[ri] = append(lines, [2]int{start, end})
	}
	for i := 0; i+1 < len(lower); i++ {
		if g := r.pairs[uint16(lower[i])<<8|uint16(lower[i+1])]; g != 0 {
			for _, k := range r.groups[g-1] {
				if bytes.HasPrefix(lower[i:], k.kw) {
					for _, ri := range k.rules {
						add(ri, i, len(k.kw))
					}
				}
			}
		}
		if g := r.exactPairs[uint16(value[i])<<8|uint16(value[i+1])]; g != 0 {
			for _, k := range r.groups[g-1] {
				if bytes.HasPrefix(value[i:], k.kw) {
					for _, ri := range k.rules {
						add(ri, i, len(k.kw))
					}
				}
			}
		}
	}
	return hits
}

// assignmentAfter reports whether an assignment operator follows position
// i of b (lower case) the way the generic rule expects it: a few more name
// bytes, an optional quote, optional blanks, then ":", "=" or ",".
func assignmentAfter(b []byte, i int) bool {
	for n := 0; i < len(b) && n < 20 && isNameByte(b[i]); n++ {
		i++
	}
	if i < len(b) && (b[i] == '"' || b[i] == '\'') {
		i++
	}
	for n := 0; i < len(b) && n < 4 && (b[i] == ' ' || b[i] == '\t'); n++ {
		i++
	}
	return i < len(b) && (b[i] == ':' || b[i] == '=' || b[i] == ',')
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

// lowerSafe reports whether pattern p matches lower-cased input as (?i)p
// matches the original: no upper-case letter outside a character class,
// and no class with upper-case letters but no lower-case ones.
func lowerSafe(p string) bool {
	inClass, upper, lower := false, false, false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			i++
		case !inClass && strings.HasPrefix(p[i:], "(?P<"):
			i += strings.IndexByte(p[i:], '>') // a group name
		case c == '[' && !inClass:
			inClass, upper, lower = true, false, false
		case c == ']' && inClass:
			if upper && !lower {
				return false
			}
			inClass = false
		case 'A' <= c && c <= 'Z':
			if !inClass {
				return false
			}
			upper = true
		case 'a' <= c && c <= 'z':
			lower = true
		}
	}
	return true
}

// match finds c's expression in in[start:end] (the value, or its lower-cased
// copy: the offsets are the same) and checks the secret in value.
func (c *compiled) match(in, value []byte, start, end int, spans []Finding) []Finding {
	for _, m := range c.re.FindAllSubmatchIndex(in[start:end], -1) {
		s, e := m[2*c.secret], m[2*c.secret+1]
		if s < 0 {
			continue
		}
		if c.minEntropy > 0 && entropy(value[start+s:start+e]) < c.minEntropy {
			continue
		}
		spans = append(spans, Finding{RuleID: c.id, Start: start + s, End: start + e})
	}
	return spans
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

// allowed drops findings whose secret the allow list keeps, and
// overlapping findings (the earliest, then the longest, wins).
func (r *Redactor) allowed(value []byte, spans []Finding) []Finding {
	// Stable: on a tie the earlier rule (specific before generic) wins.
	slices.SortStableFunc(spans, func(a, b Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	out := spans[:0]
	end := -1
	for _, f := range spans {
		if f.Start < end {
			continue
		}
		secret := value[f.Start:f.End]
		if r.allow.allows(secret) {
			continue
		}
		out = append(out, f)
		end = f.End
	}
	return out
}

// replace builds the redacted value and fills in lines and columns.
func replace(value []byte, spans []Finding) ([]byte, []Finding) {
	var b bytes.Buffer
	b.Grow(len(value))
	prev, line, lineStart := 0, 1, 0
	for i := range spans {
		f := &spans[i]
		for j := prev; j < f.Start; j++ {
			if value[j] == '\n' {
				line++
				lineStart = j + 1
			}
		}
		f.Line, f.Column = line, f.Start-lineStart+1
		b.Write(value[prev:f.Start])
		b.WriteString("[REDACTED:" + f.RuleID + "]")
		for j := f.Start; j < f.End; j++ {
			if value[j] == '\n' {
				line++
				lineStart = j + 1
			}
		}
		prev = f.End
	}
	b.Write(value[prev:])
	return b.Bytes(), spans
}

func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}
