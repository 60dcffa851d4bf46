package merge3

import (
	"bytes"
	"hash/maphash"
)

// maxEdits bounds the Myers search: a diff whose middle part (after the
// common prefix and suffix are trimmed, and after a pure insertion or
// deletion is recognised) needs more than maxEdits inserted plus deleted
// lines is abandoned and the merge reports a conflict. The search keeps
// two vectors of O(maxEdits) ints whatever the input, so memory stays
// linear; the bound is on time, which grows as the square of the distance.
const maxEdits = 10000

// maxWork bounds the comparisons and diagonal steps of one diff, so that
// no input keeps a writer waiting long: two unrelated 1 MiB texts, or
// long runs of repeated lines (which make every snake long), give up in
// about half a second, where 1<<28 took 1.4 s. It is sized so that
// maxEdits unrelated lines (5,000 steps each way, 5e7 diagonals) fit.
const maxWork = 1 << 26

// hunk is one change: base lines [a0, a1) become side lines [b0, b1).
// An insertion has a0 == a1, a deletion b0 == b1. Hunks from diff are
// sorted and separated by at least one unchanged line.
type hunk struct{ a0, a1, b0, b1 int }

// Hunk is one change of a line diff (Diff): lines [A0, A1) of a become
// lines [B0, B1) of b.
type Hunk struct{ A0, A1, B0, B1 int }

// Diff returns the hunks that turn the lines a into the lines b, each
// line compared whole: sorted, separated by at least one unchanged line,
// and minimal in inserted plus deleted lines (exact) unless the search
// gives up (more than maxEdits lines apart, or maxWork): then the one
// hunk replaces everything between the lines a and b begin and end with,
// a correct diff but not a minimal one. Memory is linear in the lines
// whatever they are.
func Diff(a, b [][]byte) (hunks []Hunk, exact bool) {
	hs, ok := diff(a, b)
	if !ok {
		pre, suf := common(a, b)
		return []Hunk{{pre, len(a) - suf, pre, len(b) - suf}}, false
	}
	hunks = make([]Hunk, len(hs))
	for i, h := range hs {
		hunks[i] = Hunk{h.a0, h.a1, h.b0, h.b1}
	}
	return hunks, true
}

// common returns how many lines a and b begin with and end with alike
// (not overlapping).
func common(a, b [][]byte) (pre, suf int) {
	n, m := len(a), len(b)
	for pre < n && pre < m && bytes.Equal(a[pre], b[pre]) {
		pre++
	}
	for suf < n-pre && suf < m-pre && bytes.Equal(a[n-1-suf], b[m-1-suf]) {
		suf++
	}
	return pre, suf
}

// diff returns the hunks that turn a into b, minimal in inserted plus
// deleted lines, or ok=false when it gives up (maxEdits, maxWork).
func diff(a, b [][]byte) (hunks []hunk, ok bool) {
	n, m := len(a), len(b)
	pre, suf := common(a, b)
	a, b = a[pre:n-suf], b[pre:m-suf]
	switch {
	case len(a) == 0 && len(b) == 0:
		return nil, true
	case len(a) == 0 || len(b) == 0:
		return []hunk{{pre, pre + len(a), pre, pre + len(b)}}, true
	}

	// Compare hashes first: a line is read in full only when its hash
	// matches (interning the lines in a map took 60% of a merge's time).
	seed := maphash.MakeSeed()
	hash := func(ls [][]byte) []uint64 {
		out := make([]uint64, len(ls))
		for i, l := range ls {
			out[i] = maphash.Bytes(seed, l)
		}
		return out
	}
	d := &differ{
		a:    a,
		b:    b,
		ha:   hash(a),
		hb:   hash(b),
		delA: make([]bool, len(a)),
		insB: make([]bool, len(b)),
	}
	if !d.compare(0, len(a), 0, len(b)) {
		return nil, false
	}

	// Walk the marks together: unchanged lines pair up in order, and each
	// maximal run of marked lines between two pairs is one hunk.
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if i < len(a) && j < len(b) && !d.delA[i] && !d.insB[j] {
			i++
			j++
			continue
		}
		a0, b0 := i, j
		for i < len(a) && d.delA[i] {
			i++
		}
		for j < len(b) && d.insB[j] {
			j++
		}
		if i == a0 && j == b0 {
			// The marks leave unequal numbers of unchanged lines: a bug,
			// but a conflict is the safe answer to it.
			return nil, false
		}
		hunks = append(hunks, hunk{pre + a0, pre + i, pre + b0, pre + j})
	}
	return hunks, true
}

// differ holds one Myers diff in linear space: the recursion splits the
// problem at a point of an optimal path found by searching from both ends
// at once, and marks the lines of a deleted and of b inserted.
type differ struct {
	a, b       [][]byte
	ha, hb     []uint64 // the hashes of a and b
	delA, insB []bool
	work       int   // comparisons and steps so far, against maxWork
	vf, vb     []int // search vectors, reused across the recursion
}

// eq reports whether line i of a equals line j of b.
func (d *differ) eq(i, j int) bool {
	return d.ha[i] == d.hb[j] && bytes.Equal(d.a[i], d.b[j])
}

// compare marks the changes between a[aLo:aHi] and b[bLo:bHi].
func (d *differ) compare(aLo, aHi, bLo, bHi int) bool {
	for aLo < aHi && bLo < bHi && d.eq(aLo, bLo) {
		aLo++
		bLo++
	}
	for aLo < aHi && bLo < bHi && d.eq(aHi-1, bHi-1) {
		aHi--
		bHi--
	}
	switch {
	case aLo == aHi:
		for j := bLo; j < bHi; j++ {
			d.insB[j] = true
		}
		return true
	case bLo == bHi:
		for i := aLo; i < aHi; i++ {
			d.delA[i] = true
		}
		return true
	}
	x, y, ok := d.split(aLo, aHi, bLo, bHi)
	if !ok {
		return false
	}
	if (x == 0 && y == 0) || (x == aHi-aLo && y == bHi-bLo) {
		// Splitting at a corner would recurse forever. With both ends
		// trimmed the search never returns one; should it, replacing the
		// whole range is a correct if not minimal answer.
		for i := aLo; i < aHi; i++ {
			d.delA[i] = true
		}
		for j := bLo; j < bHi; j++ {
			d.insB[j] = true
		}
		return true
	}
	return d.compare(aLo, aLo+x, bLo, bLo+y) && d.compare(aLo+x, aHi, bLo+y, bHi)
}

// split finds a point (x, y) on a shortest edit path from (0, 0) to
// (len(a), len(b)) by running the greedy search forward from the start
// and backward from the end, D steps each in turn, until the furthest
// paths on one diagonal meet. Diagonal k holds the points with x-y == k;
// vf[k] is the furthest x reached forward on it, vb[k] the furthest
// distance reached backward (measured from the end). Paths that run off
// the grid narrow the range of diagonals searched from then on.
func (d *differ) split(aLo, aHi, bLo, bHi int) (x, y int, ok bool) {
	n, m := aHi-aLo, bHi-bLo
	maxD := (n + m + 1) / 2
	if maxD > maxEdits/2+1 {
		maxD = maxEdits/2 + 1
	}
	s := splitter{d: d, aLo: aLo, aHi: aHi, bLo: bLo, bHi: bHi, n: n, m: m, delta: n - m, off: maxD + 1}
	s.vf, s.vb = d.vectors(2*maxD + 3)
	s.vf[s.off+1], s.vb[s.off+1] = 0, 0
	for step := 0; step <= maxD; step++ {
		d.work += 2 * step
		if d.work > maxWork {
			return 0, 0, false
		}
		if x, y, ok := s.forward(step); ok {
			return x, y, true
		}
		if x, y, ok := s.backward(step); ok {
			return x, y, true
		}
	}
	return 0, 0, false
}

// vectors returns the search vectors, size ints each, all -1.
func (d *differ) vectors(size int) (vf, vb []int) {
	if cap(d.vf) < size {
		d.vf = make([]int, size)
		d.vb = make([]int, size)
	}
	vf, vb = d.vf[:size], d.vb[:size]
	for i := range vf {
		vf[i], vb[i] = -1, -1
	}
	return vf, vb
}

// splitter is one split's search over a[aLo:aHi] and b[bLo:bHi] (n and m
// lines): the search vectors, diagonal k at index off+k, and the diagonals
// cut off at each end of the forward and backward ranges.
type splitter struct {
	d                              *differ
	aLo, aHi, bLo, bHi             int
	n, m, delta, off               int
	vf, vb                         []int
	fCutLo, fCutHi, bCutLo, bCutHi int
}

// forward takes the forward search one step further; ok when a path meets
// a backward one (only possible when delta is odd), at (x, y).
func (s *splitter) forward(step int) (x, y int, ok bool) {
	odd := s.delta%2 != 0
	for k := -step + s.fCutLo; k <= step-s.fCutHi; k += 2 {
		i := s.off + k
		x := stepStart(s.vf, i, k, step)
		y := x - k
		x0 := x
		for x < s.n && y < s.m && s.d.eq(s.aLo+x, s.bLo+y) {
			x++
			y++
		}
		s.d.work += x - x0
		s.vf[i] = x
		switch {
		case x > s.n:
			s.fCutHi += 2
		case y > s.m:
			s.fCutLo += 2
		case odd:
			j := s.off + s.delta - k
			if j >= 0 && j < len(s.vb) && s.vb[j] != -1 && x >= s.n-s.vb[j] {
				return x, y, true
			}
		}
	}
	return 0, 0, false
}

// backward takes the backward search one step further; ok when a path
// meets a forward one (only possible when delta is even), at (x, y)
// counted from the start.
func (s *splitter) backward(step int) (x, y int, ok bool) {
	even := s.delta%2 == 0
	for k := -step + s.bCutLo; k <= step-s.bCutHi; k += 2 {
		i := s.off + k
		x := stepStart(s.vb, i, k, step)
		y := x - k
		x0 := x
		for x < s.n && y < s.m && s.d.eq(s.aHi-1-x, s.bHi-1-y) {
			x++
			y++
		}
		s.d.work += x - x0
		s.vb[i] = x
		switch {
		case x > s.n:
			s.bCutHi += 2
		case y > s.m:
			s.bCutLo += 2
		case even:
			j := s.off + s.delta - k
			if j >= 0 && j < len(s.vf) && s.vf[j] != -1 {
				if fx := s.vf[j]; fx >= s.n-x {
					return fx, fx - (s.delta - k), true
				}
			}
		}
	}
	return 0, 0, false
}

// stepStart is where the path on diagonal k (at index i of v) starts its
// step: one down from the furthest path on k+1 (an insertion) or one right
// of the furthest on k-1 (a deletion), whichever reaches further.
func stepStart(v []int, i, k, step int) int {
	if k == -step || (k != step && v[i-1] < v[i+1]) {
		return v[i+1]
	}
	return v[i-1] + 1
}
