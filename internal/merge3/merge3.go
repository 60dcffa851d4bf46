package merge3

import (
	"bytes"
	"unicode/utf8"
)

// sniffLen is how much of a value Text searches for a NUL byte, as git
// does to call a file binary.
const sniffLen = 8000

// Text reports whether b is text Merge will try (no NUL in the first 8000
// bytes, valid UTF-8).
func Text(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), sniffLen)], 0) < 0 && utf8.Valid(b)
}

// Merge merges ours and theirs, both changed from base, line by line.
// ok is false when they overlap (both changed the same base lines differently, or insert different text at the same place other than the append rule below), or when any input is binary (a NUL byte in the first 8000 bytes, or invalid UTF-8): the caller then keeps both.
//
// The append rule: when both sides only insert at the same place (both
// appended to the end, or both created a file from an empty base), the
// merge holds theirs' lines, then ours'. Completing a base's last line
// with a newline counts as part of an insertion there, so that appended
// lines stay separate. The merged value never shares memory with the
// inputs; it is nil when ok is false.
func Merge(base, ours, theirs []byte) (merged []byte, ok bool) {
	if !Text(base) || !Text(ours) || !Text(theirs) {
		return nil, false
	}
	switch {
	case bytes.Equal(ours, theirs):
		return bytes.Clone(ours), true
	case bytes.Equal(base, ours):
		return bytes.Clone(theirs), true
	case bytes.Equal(base, theirs):
		return bytes.Clone(ours), true
	}
	bl, ol, tl := splitLines(base), splitLines(ours), splitLines(theirs)
	oh, ok := diff(bl, ol)
	if !ok {
		return nil, false
	}
	th, ok := diff(bl, tl)
	if !ok {
		return nil, false
	}
	slide(bl, ol, oh, tl, th)
	slide(bl, tl, th, ol, oh)
	out, ok := mergeLines(bl, ol, tl, oh, th)
	if !ok {
		return nil, false
	}
	return join(out, len(ours)+len(theirs)), true
}

// splitLines cuts b after each newline. A last line without one gets a
// copy with the newline added, followed by an empty line: the marker that
// the newline is not really there. No real line is empty, so the marker
// compares equal only to itself, and a side that completes base's last
// line shows as deleting the marker rather than replacing that line.
func splitLines(b []byte) [][]byte {
	lines := make([][]byte, 0, bytes.Count(b, []byte{'\n'})+2)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			lines = append(lines, append(b[:len(b):len(b)], '\n'), []byte{})
			break
		}
		lines = append(lines, b[:i+1:i+1])
		b = b[i+1:]
	}
	return lines
}

// isMarker reports whether l is the marker of a missing final newline.
func isMarker(l []byte) bool { return len(l) == 0 }

// join concatenates lines, dropping each marker and the newline before a
// marker at the end.
func join(lines [][]byte, sizeHint int) []byte {
	out := make([]byte, 0, sizeHint)
	for _, l := range lines {
		out = append(out, l...)
	}
	if len(lines) > 0 && isMarker(lines[len(lines)-1]) {
		out = out[:len(out)-1]
	}
	return out
}

// mergeLines walks the hunks of both sides in base order. Hunks that
// overlap or touch (no unchanged base line between them) form one group,
// which spans base lines [lo, hi); a group with hunks from one side only
// takes that side's lines, and a group with both is resolved by
// resolve.
func mergeLines(base, ours, theirs [][]byte, oh, th []hunk) ([][]byte, bool) {
	out := make([][]byte, 0, max(len(ours), len(theirs)))
	pos := 0               // base lines before pos are in out
	oShift, tShift := 0, 0 // side index minus base index after the hunks consumed
	for len(oh) > 0 || len(th) > 0 {
		var lo, hi int
		if len(th) == 0 || (len(oh) > 0 && oh[0].a0 <= th[0].a0) {
			lo, hi = oh[0].a0, oh[0].a1
		} else {
			lo, hi = th[0].a0, th[0].a1
		}
		no, nt := 0, 0 // hunks of each side in the group
		for grew := true; grew; {
			grew = false
			if no < len(oh) && oh[no].a0 <= hi {
				hi = max(hi, oh[no].a1)
				no++
				grew = true
			}
			if nt < len(th) && th[nt].a0 <= hi {
				hi = max(hi, th[nt].a1)
				nt++
				grew = true
			}
		}
		out = append(out, base[pos:lo]...)
		oGrow, tGrow := growth(oh[:no]), growth(th[:nt])
		oText := ours[lo+oShift : hi+oShift+oGrow]
		tText := theirs[lo+tShift : hi+tShift+tGrow]
		switch {
		case nt == 0:
			out = append(out, oText...)
		case no == 0:
			out = append(out, tText...)
		default:
			text, ok := resolve(base[lo:hi], oText, tText)
			if !ok {
				return nil, false
			}
			out = append(out, text...)
		}
		oShift += oGrow
		tShift += tGrow
		oh, th = oh[no:], th[nt:]
		pos = hi
	}
	return append(out, base[pos:]...), true
}

// growth is how many lines hunks add, net.
func growth(hs []hunk) int {
	g := 0
	for _, h := range hs {
		g += (h.b1 - h.b0) - (h.a1 - h.a0)
	}
	return g
}

// resolve settles a group both sides changed: the same lines on both
// are taken once; two insertions at one place (base region empty, or only
// the missing-newline marker, which an append completes) are taken
// theirs first; anything else is a conflict.
func resolve(base, ours, theirs [][]byte) ([][]byte, bool) {
	if equalLines(ours, theirs) {
		return ours, true
	}
	if len(base) > 1 || (len(base) == 1 && !isMarker(base[0])) {
		return nil, false
	}
	o, oMark := cutMarker(ours)
	t, tMark := cutMarker(theirs)
	var text [][]byte
	if equalLines(o, t) {
		text = append(text, t...)
	} else {
		text = append(append(text, t...), o...)
	}
	if oMark && tMark {
		// Neither side ended its text with a newline; nor does the merge.
		text = append(text, []byte{})
	}
	return text, true
}

// cutMarker returns lines without a final marker, and whether it had one.
func cutMarker(lines [][]byte) ([][]byte, bool) {
	if n := len(lines); n > 0 && isMarker(lines[n-1]) {
		return lines[:n-1], true
	}
	return lines, false
}

func equalLines(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
