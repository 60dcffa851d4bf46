package redact

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
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
// named "secret", or the whole match. A rule matches within one line.
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

// Config configures a Redactor. The zero value means: built-in rules
// (memfs's and gitleaks') on, secrets from os.Environ() under
// DefaultEnvNames, no user rules.
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
	rules    []*compiled
	global   []*allowlist // gitleaks' global allowlists, for built-in rules
	allow    userAllow
	disabled []PrefixRules
	env      []envSecret

	// The keyword index: every keyword is found in one pass over the
	// value. pairBits has a bit for the first two bytes of each keyword
	// (lower case), shortBits for those of two-byte keywords, and triBits
	// for a hash of the first three bytes of the longer ones: sets small
	// enough for the first-level cache, that skip most bytes of text ("he"
	// starts "heroku", and a tenth of English words). pairs maps a pair to
	// 1 + its group in groups.
	pairBits, shortBits, triBits [1 << 10]uint64
	pairs                        [1 << 16]int32
	groups                       [][]keyword
}

// keyword is one keyword and the rules it triggers.
type keyword struct {
	kw    []byte // lower case, or as written when exact
	exact bool
	rules []int
}

// compiled is a rule of any source, ready to run. Its expressions are
// compiled at its first use: most rules never meet their keywords.
type compiled struct {
	id         string // reported in findings and markers
	name       string // the rule's own id (gitleaks' for its rules)
	tier       int
	pattern    string
	keywords   [][]byte // lower case, or as written when exact
	exact      bool     // keywords match with their case
	assign     bool     // an assignment must follow a keyword (Rule.Assignment)
	multiline  bool     // the rule needs the whole value, not a line (PEM blocks)
	minEntropy float64
	gitleaks   bool // gitleaks' semantics: the secret is group (or the first non-empty group); entropy <= minEntropy drops
	group      int
	path       string       // gitleaks: the key must match it
	allow      []*allowlist // gitleaks allowlists of the rule (or of its id, for memfs's)
	builtin    bool         // the global allowlists apply

	once sync.Once
	prog program
}

// program returns c's expressions, compiling them on first use.
func (c *compiled) program() *program {
	c.once.Do(func() { c.prog = c.build() })
	return &c.prog
}

func (c *compiled) build() program {
	var p program
	re, err := regexp.Compile(c.pattern)
	if err != nil {
		p.broken = true
		return p
	}
	p.re = re
	if !c.gitleaks {
		p.secret = max(re.SubexpIndex("secret"), 0)
	}
	if c.path != "" {
		if p.path, err = regexp.Compile(c.path); err != nil {
			p.broken = true
			return p
		}
	}
	tree, err := parse(c.pattern)
	if err != nil {
		return p
	}
	p.incidental = incidentalGroups(tree)
	exact := tree
	if rest, class, n, ok := cutLazyPrefix(tree); ok {
		if rre, err := regexp.Compile(pattern(rest)); err == nil && rre.NumSubexp() == re.NumSubexp() {
			exact, p.re, p.back, p.backMax = rest, rre, class, n
		}
	}
	if low, ok := foldLower(exact, false); ok {
		// The lowered expression spares case folding; keep the original
		// only when it alone has a literal prefix to skip ahead to.
		if lre, err := regexp.Compile(pattern(low)); err == nil && lre.NumSubexp() == re.NumSubexp() &&
			(hasLiteralPrefix(lre) || !hasLiteralPrefix(p.re)) {
			p.re, p.onLower = lre, true
		}
	}
	if !c.multiline && !hasLiteralPrefix(p.re) {
		kws := c.keywords
		if c.exact {
			kws = nil
			for _, k := range c.keywords {
				kws = append(kws, bytes.ToLower(k))
			}
		}
		if f, ok := keywordFilter(tree, kws); ok {
			if fre, err := regexp.Compile(pattern(f)); err == nil {
				p.filter, p.dfa = fre, newDFA(f)
			}
		}
	}
	return p
}

type envSecret struct {
	name  string
	value []byte
}

// New compiles cfg into a Redactor. It fails on a user rule or allow
// entry that does not compile, and on a disable entry that names no rule.
func New(cfg Config) (*Redactor, error) {
	r := &Redactor{disabled: cfg.Disabled}
	known := map[string]bool{"*": true, "env": true}
	for _, rule := range cfg.Extra {
		if _, err := regexp.Compile(rule.Pattern); err != nil {
			return nil, fmt.Errorf("redact: rule %s: %w", rule.ID, err)
		}
		c, err := compileUser(rule)
		if err != nil {
			return nil, err
		}
		r.rules = append(r.rules, c)
		known[c.id] = true
	}
	if !cfg.NoBuiltin {
		gc, err := loadGitleaks()
		if err != nil {
			return nil, err
		}
		gl, global, byID := gitleaksRules(gc)
		r.global = global
		for _, a := range builtinAllow["*"] {
			r.global = append(r.global, newAllowlist(a))
		}
		for _, rule := range builtin {
			c, err := compileUser(rule)
			if err != nil {
				return nil, err
			}
			c.tier, c.builtin = memfsTier(c.id), true
			c.multiline = rule.ID == "private-key"
			for _, a := range builtinAllow[c.id] {
				c.allow = append(c.allow, newAllowlist(a))
			}
			for _, a := range byID[c.id] {
				if a := a.regexesOnly(); a != nil {
					c.allow = append(c.allow, a)
				}
			}
			r.rules = append(r.rules, c)
			known[c.id] = true
		}
		r.rules = append(r.rules, gl...)
		for _, g := range gc.Rules {
			known[g.ID] = true // skipped ones too: switching them off is no mistake
		}
		for _, c := range gl {
			known[c.id] = true
		}
	}
	for _, a := range cfg.Allow {
		// Compiled alone first: "x)|(y" would undo the anchors around it.
		if _, err := regexp.Compile(a); err != nil {
			return nil, fmt.Errorf("redact: allow pattern %q: %w", a, err)
		}
		re := regexp.MustCompile(`^(?:` + a + `)$`)
		r.allow.exact = append(r.allow.exact, a)
		r.allow.res = append(r.allow.res, re)
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

// compileUser checks a Rule (the config's or memfs's own) and prepares it
// to compile at its first use. (New compiles a user rule's expression
// first, so that a bad one fails it; TestEveryRuleCompiles checks
// memfs's own.)
func compileUser(rule Rule) (*compiled, error) {
	if rule.ID == "" {
		return nil, fmt.Errorf("redact: a rule without an id (pattern %q)", rule.Pattern)
	}
	if len(rule.Keywords) == 0 {
		return nil, fmt.Errorf("redact: rule %s has no keywords (every rule needs one, for speed)", rule.ID)
	}
	c := &compiled{id: rule.ID, name: rule.ID, tier: tierUser, pattern: rule.Pattern,
		minEntropy: rule.MinEntropy, assign: rule.Assignment, exact: rule.CaseSensitive}
	for _, k := range rule.Keywords {
		if len(k) < 2 {
			return nil, fmt.Errorf("redact: rule %s: keyword %q is shorter than 2 bytes", rule.ID, k)
		}
		if c.exact {
			c.keywords = append(c.keywords, []byte(k))
		} else {
			c.keywords = append(c.keywords, bytes.ToLower([]byte(k)))
		}
	}
	return c, nil
}

// index builds the keyword tables from the rules.
func (r *Redactor) index() {
	type slot struct {
		exact bool
		kw    string
	}
	at := map[slot]int{} // keyword -> its position in r.groups[group]
	for ri, c := range r.rules {
		for _, kw := range c.keywords {
			pair := uint16(lowerTab[kw[0]])<<8 | uint16(lowerTab[kw[1]])
			setBit(&r.pairBits, pair)
			if len(kw) == 2 {
				setBit(&r.shortBits, pair)
			} else {
				setBit(&r.triBits, hash3(pair, lowerTab[kw[2]]))
			}
			g := r.pairs[pair]
			if g == 0 {
				r.groups = append(r.groups, nil)
				g = int32(len(r.groups))
				r.pairs[pair] = g
			}
			k := slot{c.exact, string(kw)}
			if i, ok := at[k]; ok {
				if ks := &r.groups[g-1][i]; !slices.Contains(ks.rules, ri) {
					ks.rules = append(ks.rules, ri)
				}
				continue
			}
			at[k] = len(r.groups[g-1])
			r.groups[g-1] = append(r.groups[g-1], keyword{kw: kw, exact: c.exact, rules: []int{ri}})
		}
	}
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
// Text in UTF-16 or UTF-32 is masked (Mask) instead: a marker would break
// its encoding.
func (r *Redactor) Redact(key string, value []byte) ([]byte, []Finding) {
	if _, ok := wideText(value); ok {
		return r.Mask(key, value)
	}
	spans := r.find(key, value)
	if len(spans) == 0 {
		return value, nil
	}
	var b bytes.Buffer
	b.Grow(len(value))
	prev := 0
	for _, f := range spans {
		b.Write(value[prev:f.Start])
		b.WriteString("[REDACTED:" + f.RuleID + "]")
		prev = f.End
	}
	b.Write(value[prev:])
	return b.Bytes(), spans
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

func setBit(set *[1 << 10]uint64, i uint16) { set[i>>6] |= 1 << (i & 63) }

func hasBit(set *[1 << 10]uint64, i uint16) bool { return set[i>>6]&(1<<(i&63)) != 0 }

// hash3 hashes the first three bytes of a keyword (lower case).
func hash3(pair uint16, c byte) uint16 {
	return uint16((uint32(pair)<<8 | uint32(c)) * 0x9E3779B1 >> 16)
}

// lowerTab maps each byte to its ASCII lower case.
var lowerTab = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] += 'a' - 'A'
		}
	}
	return t
}()

// appendLower appends b, ASCII-lowercased, to dst.
func appendLower(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, lowerTab[c])
	}
	return dst
}
