package redact

import (
	"regexp/syntax"
	"slices"
	"unicode"
)

// dfa runs an anchored filter (keywordFilter) as a deterministic
// automaton over ASCII bytes: it answers whether the filter matches a
// prefix of its input. Go's engines backtrack or simulate an NFA, and a
// filter such as "password[ \t\w.-]{0,20}[\s'"]{0,3}(?:=|:|...)" costs them
// a set of threads at each hit of a common word; the automaton takes one
// table lookup a byte and stops at the first byte no state can take.
type dfa struct {
	class  [256]uint8 // byte -> its class; nonASCII for bytes >= 0x80
	nclass int
	// next[s*nclass+class] is the state after a byte of that class (dead
	// is 0). States accept at once (a prefix matched), or at the end of
	// the input (a "$").
	next      []uint16
	accept    []bool
	acceptEnd []bool
}

const (
	dead      = 0
	nonASCII  = 255
	maxStates = 512
)

// newDFA builds the automaton of a filter, an expression anchored at its
// start (\A). It returns nil when the expression needs too many states:
// the caller keeps the regexp.
func newDFA(re *syntax.Regexp) *dfa {
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil
	}
	d := &dfa{}
	// Byte classes: bytes that no instruction tells apart share one.
	var cut [129]bool
	cut[0], cut[128] = true, true
	for _, in := range prog.Inst {
		switch in.Op {
		case syntax.InstRune, syntax.InstRune1:
			if len(in.Rune) == 1 {
				runes := in.Rune
				if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
					runes = foldOrbit(in.Rune[0])
				}
				for _, c := range runes {
					if c < 128 {
						cut[c], cut[c+1] = true, true
					}
				}
				continue
			}
			for i := 0; i+1 < len(in.Rune); i += 2 {
				if lo := in.Rune[i]; lo < 128 {
					cut[lo] = true
				}
				if hi := in.Rune[i+1]; hi < 128 {
					cut[hi+1] = true
				}
			}
		case syntax.InstRuneAnyNotNL:
			cut['\n'], cut['\n'+1] = true, true
		}
	}
	cls := -1
	for b := 0; b < 128; b++ {
		if cut[b] {
			cls++
		}
		d.class[b] = uint8(cls)
	}
	d.nclass = cls + 1
	for b := 128; b < 256; b++ {
		d.class[b] = nonASCII
	}
	// A representative byte of each class.
	rep := make([]rune, d.nclass)
	for b := 127; b >= 0; b-- {
		rep[d.class[b]] = rune(b)
	}

	ids := map[string]uint16{}
	var sets [][]uint32
	add := func(set []uint32) (uint16, bool) {
		if len(set) == 0 {
			return dead, true
		}
		k := key(set)
		if id, ok := ids[k]; ok {
			return id, true
		}
		if len(sets) >= maxStates {
			return 0, false
		}
		sets = append(sets, set)
		id := uint16(len(sets)) // state ids start at 1: 0 is dead
		ids[k] = id
		return id, true
	}
	seen, mark := make([]uint32, len(prog.Inst)), uint32(1)
	start, _ := add(closure(prog, []uint32{uint32(prog.Start)}, true, seen, mark))
	d.next = make([]uint16, d.nclass) // the dead state's row
	d.accept, d.acceptEnd = []bool{false}, []bool{false}
	for s := 1; s <= len(sets); s++ {
		set := sets[s-1]
		acc, accEnd := accepts(prog, set)
		d.accept = append(d.accept, acc)
		d.acceptEnd = append(d.acceptEnd, acc || accEnd)
		row := make([]uint16, d.nclass)
		for c := range d.nclass {
			var next []uint32
			for _, pc := range set {
				in := &prog.Inst[pc]
				if isRune(in.Op) && in.MatchRune(rep[c]) {
					next = append(next, in.Out)
				}
			}
			mark++
			id, ok := add(closure(prog, next, false, seen, mark))
			if !ok {
				return nil
			}
			row[c] = id
		}
		d.next = append(d.next, row...)
	}
	if start != 1 {
		return nil // the start state is empty: cannot match
	}
	return d
}

func isRune(op syntax.InstOp) bool {
	return op == syntax.InstRune || op == syntax.InstRune1 || op == syntax.InstRuneAny || op == syntax.InstRuneAnyNotNL
}

func foldOrbit(c rune) []rune {
	out := []rune{c}
	for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
		out = append(out, f)
	}
	return out
}

func key(set []uint32) string {
	b := make([]byte, 0, 3*len(set))
	for _, pc := range set {
		b = append(b, byte(pc), byte(pc>>8), byte(pc>>16))
	}
	return string(b)
}

// closure returns the instructions reachable from pcs without reading a
// byte, sorted: rune instructions, Match, and the end-of-text assertions
// (kept as members, checked by accepts). Begin-of-text holds only at the
// start; word boundaries, which filters do not have, are taken as true.
// seen is scratch space, one entry per instruction: an instruction is
// seen when its entry holds this call's mark.
func closure(prog *syntax.Prog, pcs []uint32, atStart bool, seen []uint32, mark uint32) []uint32 {
	var out []uint32
	var visit func(pc uint32)
	visit = func(pc uint32) {
		if seen[pc] == mark {
			return
		}
		seen[pc] = mark
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			visit(in.Out)
			visit(in.Arg)
		case syntax.InstNop, syntax.InstCapture:
			visit(in.Out)
		case syntax.InstEmptyWidth:
			cond := syntax.EmptyOp(in.Arg)
			if cond&(syntax.EmptyBeginText|syntax.EmptyBeginLine) != 0 && !atStart {
				return
			}
			if cond&(syntax.EmptyEndText|syntax.EmptyEndLine) != 0 {
				out = append(out, pc) // holds at the end of the input only
				return
			}
			visit(in.Out)
		case syntax.InstFail:
		default: // rune instructions, Match
			out = append(out, pc)
		}
	}
	for _, pc := range pcs {
		visit(pc)
	}
	slices.Sort(out)
	return out
}

// accepts reports whether a state holds Match, and whether it reaches
// Match at the end of the input (through "$").
func accepts(prog *syntax.Prog, set []uint32) (bool, bool) {
	now, atEnd := false, false
	for _, pc := range set {
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstMatch:
			now = true
		case syntax.InstEmptyWidth:
			if endReachesMatch(prog, in.Out, map[uint32]bool{}) {
				atEnd = true
			}
		}
	}
	return now, atEnd
}

// endReachesMatch reports whether Match is reachable from pc without
// reading a byte, at the end of the input.
func endReachesMatch(prog *syntax.Prog, pc uint32, seen map[uint32]bool) bool {
	if seen[pc] {
		return false
	}
	seen[pc] = true
	in := &prog.Inst[pc]
	switch in.Op {
	case syntax.InstMatch:
		return true
	case syntax.InstAlt, syntax.InstAltMatch:
		return endReachesMatch(prog, in.Out, seen) || endReachesMatch(prog, in.Arg, seen)
	case syntax.InstNop, syntax.InstCapture:
		return endReachesMatch(prog, in.Out, seen)
	case syntax.InstEmptyWidth:
		if syntax.EmptyOp(in.Arg)&(syntax.EmptyBeginText|syntax.EmptyBeginLine) != 0 {
			return false
		}
		return endReachesMatch(prog, in.Out, seen)
	}
	return false
}

// match reports whether the filter matches a prefix of b; ok is false
// when b holds a non-ASCII byte before the answer is known (the caller
// asks the regexp).
func (d *dfa) match(b []byte) (matched, ok bool) {
	s := uint16(1)
	if d.accept[s] {
		return true, true
	}
	for _, c := range b {
		cl := d.class[c]
		if cl == nonASCII {
			return false, false
		}
		s = d.next[int(s)*d.nclass+int(cl)]
		if s == dead {
			return false, true
		}
		if d.accept[s] {
			return true, true
		}
	}
	return d.acceptEnd[s], true
}
