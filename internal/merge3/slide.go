package merge3

import "sort"

// maxSlide bounds how far slide moves one hunk.
const maxSlide = 1000

// slide moves hunks of one side that would conflict with the other side
// to an equivalent place where they do not, when there is one. A pure
// insertion or deletion next to a run of equal lines can sit at several
// places with the same result: inserting "more\n\n" after a blank line is
// inserting "\nmore\n" before it. Myers picks one place without regard to
// the other side; in a Markdown note, a paragraph added at the end of one
// section then touches the heading of the next, which the other side
// edited, and the merge conflicts for nothing. hs are side's hunks
// against base, other's are the other side's; hs is changed in place and
// stays sorted, each hunk still separated from its neighbours by an
// unchanged line.
func slide(base, side [][]byte, hs []hunk, otherSide [][]byte, other []hunk) {
	for i, h := range hs {
		if (h.a0 != h.a1 && h.b0 != h.b1) || !clashes(base, side, h, otherSide, other) {
			continue
		}
		lo, hi := -1, len(base)+1 // the new hunk must lie strictly between
		if i > 0 {
			lo = hs[i-1].a1
		}
		if i+1 < len(hs) {
			hi = hs[i+1].a0
		}
		best, bestSteps := h, maxSlide+1
		for _, dir := range []int{-1, 1} {
			c := h
			for steps := 1; steps < bestSteps; steps++ {
				next, ok := shift(base, side, c, dir)
				if !ok || next.a0 <= lo || next.a1 >= hi {
					break
				}
				c = next
				if !clashes(base, side, c, otherSide, other) {
					best, bestSteps = c, steps
					break
				}
			}
		}
		hs[i] = best
	}
}

// shift moves a pure insertion or deletion one line up (dir -1) or down
// (dir 1), if the line it moves over equals the one it moves off. The
// caller has checked the line moved over is unchanged by side.
func shift(base, side [][]byte, h hunk, dir int) (hunk, bool) {
	moved := hunk{h.a0 + dir, h.a1 + dir, h.b0 + dir, h.b1 + dir}
	if moved.a0 < 0 || moved.b0 < 0 || moved.a1 > len(base) || moved.b1 > len(side) {
		return h, false
	}
	var in, out []byte // the line that joins the hunk, the one that leaves
	switch {
	case h.a0 == h.a1 && dir < 0:
		in, out = side[moved.b0], side[h.b1-1]
	case h.a0 == h.a1:
		in, out = side[h.b1], side[h.b0]
	case dir < 0:
		in, out = base[moved.a0], base[h.a1-1]
	default:
		in, out = base[h.a1], base[h.a0]
	}
	return moved, string(in) == string(out)
}

// clashes reports whether h, a hunk of side, conflicts with a hunk of
// other (the other side's hunks against base) on its own.
func clashes(base, side [][]byte, h hunk, otherSide [][]byte, other []hunk) bool {
	k := sort.Search(len(other), func(k int) bool { return other[k].a1 >= h.a0 })
	for ; k < len(other) && other[k].a0 <= h.a1; k++ {
		g := other[k]
		lo, hi := min(h.a0, g.a0), max(h.a1, g.a1)
		_, ok := resolve(base[lo:hi], applyOne(base, side, h, lo, hi), applyOne(base, otherSide, g, lo, hi))
		if !ok {
			return true
		}
	}
	return false
}

// applyOne is base[lo:hi] with h applied.
func applyOne(base, side [][]byte, h hunk, lo, hi int) [][]byte {
	out := make([][]byte, 0, hi-lo+h.b1-h.b0)
	out = append(out, base[lo:h.a0]...)
	out = append(out, side[h.b0:h.b1]...)
	return append(out, base[h.a1:hi]...)
}
