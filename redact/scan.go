package redact

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strings"
)

// span is a finding before overlapping ones are merged.
type span struct {
	start, end int
	id         string
	tier, rule int // the order in which overlapping spans choose their id
	block      bool
	// What the allowlists look at: the secret as found (before clipURLs),
	// the whole match, and the line (the lines of a block).
	secret, match, line [2]int
	c                   *compiled // nil for an environment value
}

// before reports whether a comes first in the order that picks ids:
// by tier, then the longer (flutterwave-secret-key over the
// flutterwave-encryption-key that matches its first part), then the
// rules' order.
func (a *span) before(b *span) bool {
	return cmp.Or(a.tier-b.tier, (b.end-b.start)-(a.end-a.start), a.rule-b.rule) < 0
}

// scanner is the state of one Redact or Mask call.
type scanner struct {
	r     *Redactor
	key   string
	value []byte

	// The current line: the one of the last keyword hit.
	ls, le  int
	lower   []byte // the current line, lowered, once a rule needs it
	lowered bool
	pending []int // rules to run on the current line

	state []uint8 // per rule: 0 not yet known, on, or off for this key
	whole []int   // multi-line rules to run on the whole value
	spans []span
}

const (
	ruleOn = 1 + iota
	ruleOff
)

// find returns the merged findings of value, in order, with lines and
// columns.
func (r *Redactor) find(key string, value []byte) []Finding {
	s := &scanner{r: r, key: key, value: value, le: -1}
	s.scan()
	s.env()
	if len(s.spans) == 0 {
		return nil
	}
	s.clipURLs()
	s.allow()
	if len(s.spans) == 0 {
		return nil
	}
	return merge(value, s.spans)
}

// scan finds every keyword in one pass, runs each rule whose keyword is
// on a line (and whose filter passes there), once per line, and collects
// the spans it finds.
func (s *scanner) scan() {
	v := s.value
	if len(v) < 2 {
		return
	}
	r, prev := s.r, lowerTab[v[0]]
	for i := 1; i < len(v); i++ {
		c := lowerTab[v[i]]
		pair := uint16(prev)<<8 | uint16(c)
		prev = c
		if !hasBit(&r.pairBits, pair) {
			continue
		}
		if !hasBit(&r.shortBits, pair) && (i+1 == len(v) || !hasBit(&r.triBits, hash3(pair, lowerTab[v[i+1]]))) {
			continue
		}
		s.hit(i-1, pair)
	}
	s.flush()
	for _, ri := range s.whole {
		n := len(s.spans)
		s.runRule(ri, 0, len(v), true)
		s.openBlocks(ri, s.spans[n:])
	}
}

// openBlocks finds the private-key blocks that no END line closes: a key
// cut short, or one still being written (an append that ends inside a
// key). Each runs from its BEGIN over the PEM lines that follow it
// (base64, or the "Proc-Type: ..." headers), at most maxBlock bytes:
// ContextStart looks back that far for it. closed are the blocks rule ri
// found whole.
func (s *scanner) openBlocks(ri int, closed []span) {
	v := s.value
	begins := pemBegin.FindAllIndex(v, -1)
	if len(begins) == 0 {
		return
	}
	lastEnd := -1 // where the last END line starts: a BEGIN before it is in a block
	if ends := pemEnd.FindAllIndex(v[begins[0][1]:], -1); len(ends) > 0 {
		lastEnd = begins[0][1] + ends[len(ends)-1][0]
	}
	for _, b := range begins {
		if b[1] <= lastEnd || slices.ContainsFunc(closed, func(f span) bool { return f.start <= b[0] && b[0] < f.end }) {
			continue
		}
		nl := bytes.IndexByte(v[b[1]:], '\n')
		if nl < 0 || len(bytes.TrimSpace(v[b[1]:b[1]+nl])) > 0 {
			continue // not an armour line of its own
		}
		end, body, header := b[1], false, false
		for pos := b[1] + nl + 1; pos < len(v) && pos-b[0] < maxBlock; {
			e := bytes.IndexByte(v[pos:], '\n')
			if e < 0 {
				e = len(v) - pos
			}
			line := bytes.TrimRight(v[pos:pos+e], "\r")
			switch {
			case len(line) > 0 && isBase64(line):
				body, header = true, false
			case !body && bytes.Contains(line, []byte(": ")) && isBase64(line[:bytes.IndexByte(line, ':')]):
				header = true // Proc-Type: 4,ENCRYPTED
			case len(line) == 0 && header:
				header = false
			default:
				pos = len(v) // the block ends before this line
				continue
			}
			end = min(pos+len(line), b[0]+maxBlock)
			pos += e + 1
		}
		if body {
			whole := [2]int{b[0], end}
			s.keep(s.r.rules[ri], ri, whole, whole, whole, 0, len(v), true)
		}
	}
}

func isBase64(b []byte) bool {
	for _, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=' || c == '-') {
			return false
		}
	}
	return true
}

// hit handles the keywords that may start at position at.
func (s *scanner) hit(at int, pair uint16) {
	for ki := range s.r.groups[s.r.pairs[pair]-1] {
		k := &s.r.groups[s.r.pairs[pair]-1][ki]
		if !hasKeyword(s.value[at:], k) {
			continue
		}
		for _, ri := range k.rules {
			s.try(ri, at, len(k.kw))
		}
	}
}

func hasKeyword(b []byte, k *keyword) bool {
	if len(b) < len(k.kw) {
		return false
	}
	if k.exact {
		return bytes.HasPrefix(b, k.kw)
	}
	for i, c := range k.kw {
		if lowerTab[b[i]] != c {
			return false
		}
	}
	return true
}

// try schedules rule ri on the line of a keyword hit at position at.
func (s *scanner) try(ri, at, kwLen int) {
	if !s.enabled(ri) {
		return
	}
	c := s.r.rules[ri]
	if c.multiline {
		if !slices.Contains(s.whole, ri) {
			s.whole = append(s.whole, ri)
		}
		return
	}
	if at >= s.le {
		s.flush()
		s.setLine(at)
	}
	if slices.Contains(s.pending, ri) {
		return
	}
	if c.assign && !assignmentAfter(s.lowerLine(), at-s.ls+kwLen) {
		return
	}
	if p := c.program(); p.filter != nil && !p.passes(s.lowerLine()[at-s.ls:]) {
		return
	}
	s.pending = append(s.pending, ri)
}

// enabled reports whether rule ri is on for the key: not switched off
// under its prefix, and, for a gitleaks rule with a path, the key matches.
func (s *scanner) enabled(ri int) bool {
	if s.state == nil {
		s.state = make([]uint8, len(s.r.rules))
	}
	if st := s.state[ri]; st != 0 {
		return st == ruleOn
	}
	c := s.r.rules[ri]
	on := !s.r.off(s.key, c.id) && (c.name == c.id || !s.r.off(s.key, c.name))
	if on && c.path != "" {
		p := c.program()
		on = p.broken || p.path.MatchString(s.key)
	}
	s.state[ri] = ruleOff
	if on {
		s.state[ri] = ruleOn
	}
	return on
}

// setLine makes the line holding position at the current one. Lines are
// met in order, so the search back stops at the previous line's end.
func (s *scanner) setLine(at int) {
	from := max(s.le+1, 0)
	s.ls = from + bytes.LastIndexByte(s.value[from:at], '\n') + 1
	if e := bytes.IndexByte(s.value[at:], '\n'); e >= 0 {
		s.le = at + e
	} else {
		s.le = len(s.value)
	}
	s.lowered = false
}

func (s *scanner) lowerLine() []byte {
	if !s.lowered {
		s.lower = appendLower(s.lower[:0], s.value[s.ls:s.le])
		s.lowered = true
	}
	return s.lower
}

// flush runs the rules scheduled on the current line.
func (s *scanner) flush() {
	for _, ri := range s.pending {
		s.runRule(ri, s.ls, s.le, false)
	}
	s.pending = s.pending[:0]
}

// runRule runs rule ri on value[ls:le] and keeps what it finds.
func (s *scanner) runRule(ri, ls, le int, block bool) {
	c := s.r.rules[ri]
	p := c.program()
	if p.broken {
		whole := [2]int{ls, le}
		s.keep(c, ri, whole, whole, whole, ls, le, block)
		return
	}
	in := s.value[ls:le]
	if p.onLower && block {
		in = appendLower(nil, in)
	} else if p.onLower {
		in = s.lowerLine()
	}
	from := 0
	for _, m := range p.re.FindAllSubmatchIndex(in, -1) {
		ma := p.matchStart(in, m[0], from)
		from = m[1]
		a, b, ra, rb := c.secretOf(p, m)
		if a < 0 || a == b {
			continue
		}
		s.keep(c, ri, [2]int{ls + a, ls + b}, [2]int{ls + ra, ls + rb}, [2]int{ls + ma, ls + m[1]}, ls, le, block)
	}
}

// secretOf returns the range of the secret in a match m, as the rule's
// source reads it (for the entropy and the allowlists), and the range to
// redact: the same, but for a gitleaks rule whose first matching group
// is incidental (incidentalGroups), where it is the first group that is
// not, or the whole match.
func (c *compiled) secretOf(p *program, m []int) (a, b, ra, rb int) {
	if !c.gitleaks {
		a, b = m[2*p.secret], m[2*p.secret+1]
		return a, b, a, b
	}
	if c.group > 0 {
		if 2*c.group+1 >= len(m) {
			return -1, -1, -1, -1
		}
		a, b = m[2*c.group], m[2*c.group+1]
		return a, b, a, b
	}
	// gitleaks: the first capture group that matched something, else the
	// whole match.
	a, b, ra, rb = m[0], m[1], m[0], m[1]
	found, foundRedact := false, false
	for g := 1; 2*g+1 < len(m) && !foundRedact; g++ {
		if m[2*g] < 0 || m[2*g+1] == m[2*g] {
			continue
		}
		if !found {
			a, b, found = m[2*g], m[2*g+1], true
		}
		if g < len(p.incidental) && !p.incidental[g] {
			ra, rb, foundRedact = m[2*g], m[2*g+1], true
		}
	}
	return a, b, ra, rb
}

// keep checks the entropy of a secret found by rule c and keeps the
// span to redact; the allowlists come later (allow).
func (s *scanner) keep(c *compiled, ri int, secret, redact, match [2]int, ls, le int, block bool) {
	v := s.value
	if c.minEntropy > 0 {
		if h := entropy(v[secret[0]:secret[1]]); h < c.minEntropy || c.gitleaks && h <= c.minEntropy {
			return
		}
	}
	if block {
		// The allowlists' "line" of a block is the lines it covers.
		ls = bytes.LastIndexByte(v[:match[0]], '\n') + 1
		if le = bytes.IndexByte(v[match[1]:], '\n'); le < 0 {
			le = len(v)
		} else {
			le += match[1]
		}
	}
	s.spans = append(s.spans, span{start: redact[0], end: redact[1], id: c.id, tier: c.tier, rule: ri, block: block,
		secret: secret, match: match, line: [2]int{ls, le}, c: c})
}

// allow drops the spans that an allowlist lets through. Spans are taken
// in id order, and a span that lies within one already kept, which
// comes first, is dropped unchecked: kept, it would change neither the
// marker nor its extent. Most secrets are found by a specific rule and
// by the generic ones, whose allowlists are the costly ones (a large
// expression on the match, 1,446 stop words).
func (s *scanner) allow() {
	slices.SortStableFunc(s.spans, func(a, b span) int { return cmp.Or(a.tier-b.tier, a.rule-b.rule) })
	out := s.spans[:0]
	for _, f := range s.spans {
		if slices.ContainsFunc(out, func(k span) bool { return k.start <= f.start && f.end <= k.end }) {
			continue
		}
		if !s.allowed(&f) {
			out = append(out, f)
		}
	}
	s.spans = out
}

// allowed reports whether an allowlist lets span f through.
func (s *scanner) allowed(f *span) bool {
	v := s.value
	if s.r.allow.allows(v[f.start:f.end]) { // the config's: what would be redacted
		return true
	}
	secret := v[f.secret[0]:f.secret[1]]
	c := f.c
	if c == nil {
		return false
	}
	match, line := v[f.match[0]:f.match[1]], v[f.line[0]:f.line[1]]
	allowed := func(a *allowlist) bool { return a.allows(secret, match, line) }
	return c.builtin && slices.ContainsFunc(s.r.global, allowed) || slices.ContainsFunc(c.allow, allowed)
}

// env finds the values of secret-named environment variables.
func (s *scanner) env() {
	for _, e := range s.r.env {
		id := "env-" + strings.ToLower(e.name)
		if s.r.off(s.key, "env") || s.r.off(s.key, id) {
			continue
		}
		for off := 0; ; {
			j := bytes.Index(s.value[off:], e.value)
			if j < 0 {
				break
			}
			a := off + j
			b := a + len(e.value)
			s.spans = append(s.spans, span{start: a, end: b, id: id, tier: tierEnv, block: true,
				secret: [2]int{a, b}, match: [2]int{a, b}, line: [2]int{a, b}})
			off = b
		}
	}
}

// clipURLs keeps a finding from eating the parts of a URL around its
// password: a finding that reaches across the scheme, user, password or
// host of a "scheme://user:password@host" shrinks to its part in the
// password (a generic rule took "oauth2:TOKEN@gitlab.com/team/repo.git"
// for a value). A finding within one part is left as it is: a token
// used as the user name is a secret too.
func (s *scanner) clipURLs() {
	var cache map[int][]authority
	out := s.spans[:0]
	for _, f := range s.spans {
		if f.block {
			out = append(out, f)
			continue
		}
		if cache == nil {
			cache = map[int][]authority{}
		}
		ls, le := f.line[0], f.line[1]
		auths, ok := cache[ls]
		if !ok {
			auths = authorities(s.value, ls, le)
			cache[ls] = auths
		}
		keep := true
		for _, u := range auths {
			if f.end <= u.start || f.start >= u.end || u.within(f.start, f.end) {
				continue
			}
			f.start, f.end = max(f.start, u.pass[0]), min(f.end, u.pass[1])
			if f.start >= f.end {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, f)
		}
	}
	s.spans = out
}

// authority is the "scheme://user:password@host" part of a URL.
type authority struct {
	start, end       int // from the scheme to the end of the host
	user, pass, host [2]int
}

// within reports whether [a, b) lies within one part of u.
func (u authority) within(a, b int) bool {
	for _, p := range [][2]int{u.user, u.pass, u.host} {
		if p[0] <= a && b <= p[1] {
			return true
		}
	}
	return false
}

// authorities returns the URL authorities with a password in v[ls:le].
func authorities(v []byte, ls, le int) []authority {
	line := v[ls:le]
	var out []authority
	for off := 0; ; {
		i := bytes.Index(line[off:], []byte("://"))
		if i < 0 {
			return out
		}
		i += off
		off = i + 3
		start := i
		for start > 0 && isSchemeByte(line[start-1]) {
			start--
		}
		if start == i {
			continue
		}
		end := off
		for end < len(line) && !bytes.ContainsRune([]byte("/?#\"'<>` \t\r"), rune(line[end])) {
			end++
		}
		at := bytes.LastIndexByte(line[off:end], '@')
		if at < 0 {
			continue
		}
		at += off
		colon := bytes.IndexByte(line[off:at], ':')
		if colon < 0 {
			continue
		}
		colon += off
		out = append(out, authority{start: ls + start, end: ls + end,
			user: [2]int{ls + off, ls + colon}, pass: [2]int{ls + colon + 1, ls + at}, host: [2]int{ls + at + 1, ls + end}})
	}
}

func isSchemeByte(c byte) bool {
	return 'a' <= lowerTab[c] && lowerTab[c] <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}

// merge orders spans, merges overlapping ones into one finding (reported
// under the id of the first in tier and rule order), and fills in lines
// and columns.
func merge(value []byte, spans []span) []Finding {
	slices.SortFunc(spans, func(a, b span) int {
		return cmp.Or(a.start-b.start, b.end-a.end, a.tier-b.tier, a.rule-b.rule)
	})
	var out []Finding
	g := spans[0] // the group's first span; its end grows below
	best := g     // the span that names the group
	for _, f := range spans[1:] {
		if f.start < g.end {
			g.end = max(g.end, f.end)
			if f.before(&best) {
				best = f
			}
			continue
		}
		out = append(out, Finding{RuleID: best.id, Start: g.start, End: g.end})
		g, best = f, f
	}
	out = append(out, Finding{RuleID: best.id, Start: g.start, End: g.end})
	line, prev := 1, 0
	for i := range out {
		f := &out[i]
		line += bytes.Count(value[prev:f.Start], []byte{'\n'})
		f.Line, f.Column = line, f.Start-(bytes.LastIndexByte(value[:f.Start], '\n')+1)+1
		prev = f.Start
	}
	return out
}

// entropy is the Shannon entropy of b in bits per byte.
func entropy(b []byte) float64 {
	var counts [256]int
	for _, c := range b {
		counts[c]++
	}
	h := 0.0
	n := float64(len(b))
	for _, k := range counts {
		if k > 0 {
			p := float64(k) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
