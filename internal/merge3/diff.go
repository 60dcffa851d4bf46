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

// diff returns the hunks that turn a into b, minimal in inserted plus
// deleted lines, or ok=false when it gives up (maxEdits, maxWork).
func diff(a, b [][]byte) (hunks []hunk, ok bool) {
	n, m := len(a), len(b)
	pre := 0
	for pre < n && pre < m && bytes.Equal(a[pre], b[pre]) {
		pre++
	}
	suf := 0
	for suf < n-pre && suf < m-pre && bytes.Equal(a[n-1-suf], b[m-1-suf]) {
		suf++
	}
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
	off := maxD + 1
	size := 2*maxD + 3
	if cap(d.vf) < size {
		d.vf = make([]int, size)
		d.vb = make([]int, size)
	}
	vf, vb := d.vf[:size], d.vb[:size]
	for i := range vf {
		vf[i], vb[i] = -1, -1
	}
	vf[off+1], vb[off+1] = 0, 0
	delta := n - m
	odd := delta%2 != 0
	var fCutLo, fCutHi, bCutLo, bCutHi int // diagonals cut off at each end of the ranges
	for step := 0; step <= maxD; step++ {
		d.work += 2 * step
		if d.work > maxWork {
			return 0, 0, false
		}
		for k := -step + fCutLo; k <= step-fCutHi; k += 2 {
			i := off + k
			var x int
			if k == -step || (k != step && vf[i-1] < vf[i+1]) {
				x = vf[i+1] // down: an insertion
			} else {
				x = vf[i-1] + 1 // right: a deletion
			}
			y := x - k
			x0 := x
			for x < n && y < m && d.eq(aLo+x, bLo+y) {
				x++
				y++
			}
			d.work += x - x0
			vf[i] = x
			switch {
			case x > n:
				fCutHi += 2
			case y > m:
				fCutLo += 2
			case odd:
				j := off + delta - k
				if j >= 0 && j < size && vb[j] != -1 && x >= n-vb[j] {
					return x, y, true
				}
			}
		}
		for k := -step + bCutLo; k <= step-bCutHi; k += 2 {
			i := off + k
			var x int
			if k == -step || (k != step && vb[i-1] < vb[i+1]) {
				x = vb[i+1]
			} else {
				x = vb[i-1] + 1
			}
			y := x - k
			x0 := x
			for x < n && y < m && d.eq(aHi-1-x, bHi-1-y) {
				x++
				y++
			}
			d.work += x - x0
			vb[i] = x
			switch {
			case x > n:
				bCutHi += 2
			case y > m:
				bCutLo += 2
			case !odd:
				j := off + delta - k
				if j >= 0 && j < size && vf[j] != -1 {
					fx := vf[j]
					if fx >= n-x {
						return fx, fx - (delta - k), true
					}
				}
			}
		}
	}
	return 0, 0, false
}
