package redact

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// program is a rule's compiled expressions, built at its first use.
type program struct {
	// re finds the rule's secrets in a line, on the line itself or, when
	// onLower is set, on its ASCII-lowercased copy (the same offsets,
	// without the cost of case folding in the regexp engine).
	re      *regexp.Regexp
	onLower bool
	// filter, when set, runs anchored at each keyword hit of the lowered
	// line: re cannot match a line where it fails at every hit. It spares
	// running re over whole lines (see keywordFilter).
	filter *regexp.Regexp
	dfa    *dfa // filter as an automaton, when it has one
	// back, when set, is the class of a lazy leading repetition cut off
	// re (see cutLazyPrefix): a match of the rule begins up to backMax
	// runes of it (-1: any number) before the match of re.
	back    []rune
	backMax int
	secret  int // submatch index of the secret ("secret" group), memfs rules
	// incidental marks the capture groups that are no secret (see
	// incidentalGroups), for gitleaks rules.
	incidental []bool
	path       *regexp.Regexp // gitleaks rules with a path: the key must match it
	// broken is set when the expression does not compile (a gitleaks data
	// set that gitleaks itself rejects): the rule then takes every line
	// holding its keyword as a secret, failing closed.
	broken bool
}

// passes reports whether the filter matches at the start of b (a lowered
// line from a keyword hit on).
func (p *program) passes(b []byte) bool {
	if p.dfa != nil {
		if m, ok := p.dfa.match(b); ok {
			return m
		}
	}
	return p.filter.Match(b)
}

// matchStart returns where the rule's match begins, given that re's
// match begins at a (in a line in) and the previous match ended at from.
func (p *program) matchStart(in []byte, a, from int) int {
	if p.back == nil {
		return a
	}
	for n := 0; a > from && (p.backMax < 0 || n < p.backMax); n++ {
		c, size := utf8.DecodeLastRune(in[from:a])
		if !inClass(c, p.back) {
			break
		}
		a -= size
	}
	return a
}

// inClass reports whether c is in class cls (pairs of rune ranges).
func inClass(c rune, cls []rune) bool {
	for i := 0; i+1 < len(cls); i += 2 {
		if cls[i] <= c && c <= cls[i+1] {
			return true
		}
	}
	return false
}

// cutLazyPrefix cuts the leading lazy repetitions of one character class
// off re, as gitleaks' "(?i)[\w.-]{0,50}?(?:name)..." begins. Run over a
// line, such a prefix starts a thread of the engine at every byte; the
// rest finds the same matches from their name on, without that cost, and
// the same submatches: a lazy prefix reaches the first name that matches,
// which is the leftmost match of the rest. It returns the rest, the class
// and how many runes of it the prefix may take (-1: any number).
func cutLazyPrefix(re *syntax.Regexp) (*syntax.Regexp, []rune, int, bool) {
	elems := concatElems(re, nil)
	var class []rune
	total, i := 0, 0
	for ; i < len(elems); i++ {
		e := elems[i]
		lazy := e.Flags&syntax.NonGreedy != 0 && (e.Op == syntax.OpStar || e.Op == syntax.OpQuest ||
			e.Op == syntax.OpRepeat && e.Min == 0)
		if !lazy || e.Sub[0].Op != syntax.OpCharClass || class != nil && !slices.Equal(class, e.Sub[0].Rune) {
			break
		}
		class = e.Sub[0].Rune
		switch {
		case e.Op == syntax.OpStar || e.Op == syntax.OpRepeat && e.Max < 0:
			total = -1
		case total >= 0 && e.Op == syntax.OpQuest:
			total++
		case total >= 0:
			total += e.Max
		}
	}
	if i == 0 || i == len(elems) {
		return nil, nil, 0, false
	}
	rest := elems[i]
	if len(elems)-i > 1 {
		rest = &syntax.Regexp{Op: syntax.OpConcat, Sub: elems[i:]}
	}
	return rest, class, total, true
}

// incidentalGroups marks the capture groups of re that cannot be the
// secret: those inside a repetition (the engine keeps only their last
// round) and those that hold a constant. gitleaks takes the first group
// that matched for the secret, and some rules have such groups by the
// way: microsoft-teams-webhook's "([a-z0-9]{4}-){3}" inside the URL,
// jwt-base64's named header fragments. Redacting them would leave the
// rest of the match, the real secret, in the clear.
func incidentalGroups(re *syntax.Regexp) []bool {
	out := make([]bool, re.MaxCap()+1)
	var walk func(re *syntax.Regexp, repeated bool)
	walk = func(re *syntax.Regexp, repeated bool) {
		switch re.Op {
		case syntax.OpCapture:
			out[re.Cap] = repeated || constant(re.Sub[0])
		case syntax.OpStar, syntax.OpPlus:
			repeated = true
		case syntax.OpRepeat:
			repeated = repeated || re.Max != 1
		}
		for _, sub := range re.Sub {
			walk(sub, repeated)
		}
	}
	walk(re, false)
	return out
}

// constant reports whether re matches only literal strings.
func constant(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpEmptyMatch:
		return true
	case syntax.OpCapture, syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !constant(sub) {
				return false
			}
		}
		return true
	}
	return false
}

// concatElems appends the elements of re's top-level concatenation (only
// through concatenations: capture groups stay whole).
func concatElems(re *syntax.Regexp, out []*syntax.Regexp) []*syntax.Regexp {
	if re.Op == syntax.OpConcat {
		for _, s := range re.Sub {
			out = concatElems(s, out)
		}
		return out
	}
	return append(out, re)
}

// parse parses a pattern the way regexp.Compile does.
func parse(pattern string) (*syntax.Regexp, error) {
	return syntax.Parse(pattern, syntax.Perl)
}

// lowerASCII returns c lower-cased if it is an ASCII letter.
func lowerASCII(c rune) rune {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// foldLower rewrites re to run on ASCII-lowercased text. With filter
// unset it reports whether the rewrite is exact: whether it matches
// lower(s) exactly where re matches s, which holds when re ignores case
// everywhere (its letters fold case, its classes hold both cases of each
// letter). The rewrite always matches at least where re does; with filter
// set, the empty-width assertions that a slice boundary would change (\b,
// \B, ^) are dropped as well, so that it can run on a line cut at a
// keyword hit.
func foldLower(re *syntax.Regexp, filter bool) (*syntax.Regexp, bool) {
	exact := true
	var walk func(re *syntax.Regexp) *syntax.Regexp
	walk = func(re *syntax.Regexp) *syntax.Regexp {
		switch re.Op {
		case syntax.OpLiteral:
			fold := re.Flags&syntax.FoldCase != 0
			var parts []*syntax.Regexp
			var lit []rune
			flush := func() {
				if len(lit) > 0 {
					parts = append(parts, &syntax.Regexp{Op: syntax.OpLiteral, Rune: lit})
					lit = nil
				}
			}
			for _, c := range re.Rune {
				set := lowerSet(c, fold)
				if !fold && unicode.IsLetter(c) && c < 0x80 {
					exact = false // lower(s) no longer tells 'A' from 'a'
				}
				if len(set) == 1 {
					lit = append(lit, set[0])
					continue
				}
				flush()
				parts = append(parts, &syntax.Regexp{Op: syntax.OpCharClass, Rune: ranges(set)})
			}
			flush()
			if len(parts) == 1 {
				return parts[0]
			}
			return &syntax.Regexp{Op: syntax.OpConcat, Sub: parts}
		case syntax.OpCharClass:
			cls, closed := lowerClass(re.Rune)
			if !closed {
				exact = false
			}
			return &syntax.Regexp{Op: syntax.OpCharClass, Rune: cls}
		case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			if filter {
				return &syntax.Regexp{Op: syntax.OpEmptyMatch}
			}
		case syntax.OpRepeat:
			if filter && (re.Max > maxFilterRepeat || re.Min > maxFilterRepeat) {
				// x{10,150} compiles to 150 copies of x, and the
				// backtracker clears a bit per instruction and byte at
				// each call: x{10,} matches more and costs little.
				n := *re
				n.Min, n.Max = min(re.Min, maxFilterRepeat), -1
				n.Sub = []*syntax.Regexp{walk(re.Sub[0])}
				n.Sub0 = [1]*syntax.Regexp{}
				return &n
			}
		}
		n := *re
		n.Flags &^= syntax.FoldCase
		n.Sub = nil
		for _, s := range re.Sub {
			n.Sub = append(n.Sub, walk(s))
		}
		n.Sub0 = [1]*syntax.Regexp{}
		return &n
	}
	out := walk(re)
	return out, exact && !filter
}

// lowerSet returns the runes that c matches, ASCII-lowercased: with fold,
// every rune of c's case-folding orbit (so 'k' also gives the Kelvin sign,
// which ASCII lowering leaves as it is).
func lowerSet(c rune, fold bool) []rune {
	if !fold {
		return []rune{lowerASCII(c)}
	}
	set := []rune{lowerASCII(c)}
	for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
		if l := lowerASCII(f); !slices.Contains(set, l) {
			set = append(set, l)
		}
	}
	slices.Sort(set)
	return set
}

// ranges turns a sorted set of runes into class ranges.
func ranges(set []rune) []rune {
	var out []rune
	for _, c := range set {
		if n := len(out); n > 0 && out[n-1]+1 == c {
			out[n-1] = c
			continue
		}
		out = append(out, c, c)
	}
	return out
}

// lowerClass returns class cls (pairs of rune ranges) with the lower case
// of each upper-case ASCII letter added, and whether cls was closed under
// ASCII case (then the result matches lower(c) exactly when cls matches c).
func lowerClass(cls []rune) ([]rune, bool) {
	var in [128]bool
	for i := 0; i+1 < len(cls); i += 2 {
		for c := cls[i]; c <= cls[i+1] && c < 128; c++ {
			in[c] = true
		}
	}
	closed := true
	out := slices.Clone(cls)
	for c := 'A'; c <= 'Z'; c++ {
		l := c + 'a' - 'A'
		if in[c] != in[l] {
			closed = false
		}
		if in[c] && !in[l] {
			out = append(out, l, l)
		}
	}
	return normalize(out), closed
}

// normalize sorts and merges class ranges.
func normalize(cls []rune) []rune {
	type r struct{ lo, hi rune }
	rs := make([]r, 0, len(cls)/2)
	for i := 0; i+1 < len(cls); i += 2 {
		rs = append(rs, r{cls[i], cls[i+1]})
	}
	slices.SortFunc(rs, func(a, b r) int { return int(a.lo - b.lo) })
	var out []rune
	for _, x := range rs {
		if n := len(out); n > 0 && x.lo <= out[n-1]+1 {
			out[n-1] = max(out[n-1], x.hi)
			continue
		}
		out = append(out, x.lo, x.hi)
	}
	return out
}

// keywordFilter derives a cheap test from re for a rule with the given
// (lower-case) keywords. It finds the first element of re from which
// every match must begin with a literal that starts with one of the
// keywords: any match of re then holds a match of the rest, F, that begins
// at a keyword hit. It returns "^(?:F)" rewritten for lowered text, to be
// run at each keyword hit of a lowered line; if it fails at all of them, re
// does not match the line. The gitleaks rules of the form
// "(?i)[\w.-]{0,50}?(?:name)..." are the reason: unanchored, their leading
// repetition tries every position of a line; F starts at "name".
func keywordFilter(re *syntax.Regexp, keywords [][]byte) (*syntax.Regexp, bool) {
	branches := []*syntax.Regexp{re}
	if re.Op == syntax.OpAlternate {
		branches = re.Sub
	}
	var alts []*syntax.Regexp
	for _, b := range branches {
		elems := flatten(b, nil)
		found := false
		for i := range elems {
			p, _ := prefixes(elems[i:])
			if p == nil || slices.ContainsFunc(p, func(s string) bool { return !hasKeywordPrefix(s, keywords) }) {
				continue
			}
			f, _ := foldLower(&syntax.Regexp{Op: syntax.OpConcat, Sub: elems[i:]}, true)
			alts = append(alts, f)
			found = true
			break
		}
		if !found {
			return nil, false
		}
	}
	body := alts[0]
	if len(alts) > 1 {
		body = &syntax.Regexp{Op: syntax.OpAlternate, Sub: alts}
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Sub: []*syntax.Regexp{{Op: syntax.OpBeginText}, body}}, true
}

func hasKeywordPrefix(s string, keywords [][]byte) bool {
	for _, k := range keywords {
		if strings.HasPrefix(s, string(k)) {
			return true
		}
	}
	return false
}

// flatten appends the elements of re's top-level concatenation, looking
// through concatenations and capture groups.
func flatten(re *syntax.Regexp, out []*syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpConcat:
		for _, s := range re.Sub {
			out = flatten(s, out)
		}
		return out
	case syntax.OpCapture:
		return flatten(re.Sub[0], out)
	}
	return append(out, re)
}

// Limits of the literal-prefix analysis.
const (
	maxPrefixes   = 64 // strings in a prefix set
	maxPrefixLen  = 32 // bytes in a prefix
	maxClassRunes = 8  // a class with more is not expanded

	// maxFilterRepeat bounds the counts of a filter's repetitions.
	maxFilterRepeat = 16
)

// prefixes returns the lower-case literal strings that every match of the
// concatenation elems must begin with (nil if there are none, or an empty
// one), and whether they are whole matches of elems. Non-ASCII runes are
// ignored: the keyword scan is ASCII.
func prefixes(elems []*syntax.Regexp) ([]string, bool) {
	cur := []string{""}
	for _, e := range elems {
		set, complete := lits(e)
		if len(cur)*len(set) > maxPrefixes {
			return nonEmpty(cur), false
		}
		var next []string
		for _, a := range cur {
			for _, b := range set {
				if s := a + b; len(s) <= maxPrefixLen && !slices.Contains(next, s) {
					next = append(next, s)
				}
			}
		}
		cur = next
		if !complete {
			return nonEmpty(cur), false
		}
	}
	return nonEmpty(cur), true
}

func nonEmpty(set []string) []string {
	if len(set) == 0 || slices.Contains(set, "") {
		return nil
	}
	return set
}

// lits returns the strings a match of re begins with and whether they are
// whole matches (see prefixes); {""} when nothing is known.
func lits(re *syntax.Regexp) ([]string, bool) {
	unknown := []string{""}
	switch re.Op {
	case syntax.OpLiteral:
		var b strings.Builder
		for _, c := range re.Rune {
			if c >= 0x80 {
				return unknown, false
			}
			b.WriteRune(lowerASCII(c))
		}
		return []string{b.String()}, true
	case syntax.OpCharClass:
		var set []string
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			if n > 2*maxClassRunes {
				return unknown, false
			}
			for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
				if c >= 0x80 {
					continue
				}
				if s := string(lowerASCII(c)); !slices.Contains(set, s) {
					set = append(set, s)
				}
			}
		}
		if len(set) == 0 || len(set) > maxClassRunes {
			return unknown, false
		}
		return set, true
	case syntax.OpCapture:
		return lits(re.Sub[0])
	case syntax.OpConcat:
		p, complete := prefixes(re.Sub)
		if p == nil {
			return unknown, false
		}
		return p, complete
	case syntax.OpAlternate:
		var set []string
		complete := true
		for _, s := range re.Sub {
			p, c := lits(s)
			complete = complete && c
			for _, x := range p {
				if !slices.Contains(set, x) {
					set = append(set, x)
				}
			}
		}
		if len(set) > maxPrefixes {
			return unknown, false
		}
		return set, complete
	case syntax.OpQuest:
		p, complete := lits(re.Sub[0])
		if !slices.Contains(p, "") {
			p = append(p, "")
		}
		return p, complete
	case syntax.OpPlus:
		p, _ := lits(re.Sub[0])
		return p, false
	case syntax.OpRepeat:
		if re.Min == 0 {
			return unknown, false
		}
		p, complete := lits(re.Sub[0])
		if re.Min == 1 && re.Max == 1 {
			return p, complete
		}
		return p, false
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return unknown, true // zero width: ignored (the filter may match more)
	}
	return unknown, false
}

// hasLiteralPrefix reports whether Go's engine can skip ahead to a
// literal prefix of re (case-sensitive literal runes at its very start):
// such an expression is cheap to run over a whole line.
func hasLiteralPrefix(re *regexp.Regexp) bool {
	p, _ := re.LiteralPrefix()
	return p != ""
}

// pattern prints re for regexp.Compile. It is syntax.Regexp.String
// without its search for printable flags, which walks every rune of a
// large class through unicode.SimpleFold (all of Unicode for [^\n]):
// flags are written where they apply.
func pattern(re *syntax.Regexp) string {
	var b strings.Builder
	writePattern(&b, re)
	return b.String()
}

// opText is the pattern of each op that is the same text wherever it
// stands.
var opText = map[syntax.Op]string{
	syntax.OpNoMatch:        `[^\x00-\x{10FFFF}]`,
	syntax.OpEmptyMatch:     `(?:)`,
	syntax.OpAnyCharNotNL:   `(?-s:.)`,
	syntax.OpAnyChar:        `(?s:.)`,
	syntax.OpBeginLine:      `(?m:^)`,
	syntax.OpEndLine:        `(?m:$)`,
	syntax.OpBeginText:      `\A`,
	syntax.OpEndText:        `\z`,
	syntax.OpWordBoundary:   `\b`,
	syntax.OpNoWordBoundary: `\B`,
}

func writePattern(b *strings.Builder, re *syntax.Regexp) {
	if text, ok := opText[re.Op]; ok {
		b.WriteString(text)
		return
	}
	switch re.Op {
	case syntax.OpLiteral:
		writeLiteral(b, re)
	case syntax.OpCharClass:
		writeClass(b, re)
	case syntax.OpCapture:
		if re.Name != "" {
			b.WriteString(`(?P<` + re.Name + `>`)
		} else {
			b.WriteByte('(')
		}
		writePattern(b, re.Sub[0])
		b.WriteByte(')')
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		writeRepeat(b, re)
	case syntax.OpConcat:
		b.WriteString(`(?:`)
		for _, s := range re.Sub {
			writePattern(b, s)
		}
		b.WriteByte(')')
	case syntax.OpAlternate:
		b.WriteString(`(?:`)
		for i, s := range re.Sub {
			if i > 0 {
				b.WriteByte('|')
			}
			writePattern(b, s)
		}
		b.WriteByte(')')
	default:
		b.WriteString(re.String()) // no other op exists today
	}
}

func writeLiteral(b *strings.Builder, re *syntax.Regexp) {
	if re.Flags&syntax.FoldCase != 0 {
		b.WriteString(`(?i:`)
	}
	for _, c := range re.Rune {
		writeRune(b, c, false)
	}
	if re.Flags&syntax.FoldCase != 0 {
		b.WriteString(`)`)
	}
}

func writeClass(b *strings.Builder, re *syntax.Regexp) {
	b.WriteByte('[')
	for i := 0; i+1 < len(re.Rune); i += 2 {
		writeRune(b, re.Rune[i], true)
		if re.Rune[i+1] != re.Rune[i] {
			b.WriteByte('-')
			writeRune(b, re.Rune[i+1], true)
		}
	}
	if len(re.Rune) == 0 {
		b.WriteString(`^\x00-\x{10FFFF}`)
	}
	b.WriteByte(']')
}

// writeRepeat writes a *, +, ? or {n,m} of re's one sub-expression.
func writeRepeat(b *strings.Builder, re *syntax.Regexp) {
	b.WriteString(`(?:`)
	writePattern(b, re.Sub[0])
	b.WriteByte(')')
	switch re.Op {
	case syntax.OpStar:
		b.WriteByte('*')
	case syntax.OpPlus:
		b.WriteByte('+')
	case syntax.OpQuest:
		b.WriteByte('?')
	default:
		b.WriteString(`{` + strconv.Itoa(re.Min))
		if re.Max != re.Min {
			b.WriteByte(',')
			if re.Max >= 0 {
				b.WriteString(strconv.Itoa(re.Max))
			}
		}
		b.WriteByte('}')
	}
	if re.Flags&syntax.NonGreedy != 0 {
		b.WriteByte('?')
	}
}

// writeRune writes c escaped for a pattern (inClass: inside [...]).
func writeRune(b *strings.Builder, c rune, inClass bool) {
	switch {
	case c < 0x20 || c == 0x7f || c > 0x7e && !unicode.IsPrint(c):
		b.WriteString(`\x{` + strconv.FormatInt(int64(c), 16) + `}`)
	case inClass && strings.ContainsRune(`\[]^-`, c), !inClass && strings.ContainsRune(`\.+*?()|[]{}^$`, c):
		b.WriteByte('\\')
		b.WriteRune(c)
	default:
		b.WriteRune(c)
	}
}
