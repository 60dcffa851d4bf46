package merge3

import "bytes"

// MergeXAttrs merges extended attributes one name at a time: a value
// changed, added or removed on one side only is taken from that side; the
// same change on both is taken once; different changes to one name on
// the two sides are a conflict (ok=false, merged nil). The merged map
// shares no memory with the inputs.
func MergeXAttrs(base, ours, theirs map[string][]byte) (merged map[string][]byte, ok bool) {
	merged = make(map[string][]byte, max(len(ours), len(theirs)))
	for _, m := range []map[string][]byte{base, ours, theirs} {
		for name := range m {
			if _, done := merged[name]; done {
				continue
			}
			b, inB := base[name]
			o, inO := ours[name]
			t, inT := theirs[name]
			var v []byte
			var in bool
			switch {
			case sameAttr(o, inO, t, inT):
				v, in = o, inO
			case sameAttr(b, inB, o, inO):
				v, in = t, inT
			case sameAttr(b, inB, t, inT):
				v, in = o, inO
			default:
				return nil, false
			}
			if in {
				merged[name] = bytes.Clone(v)
				if merged[name] == nil {
					merged[name] = []byte{}
				}
			}
		}
	}
	return merged, true
}

// sameAttr reports whether two lookups found the same thing: both absent,
// or both present with equal values.
func sameAttr(a []byte, inA bool, b []byte, inB bool) bool {
	return inA == inB && (!inA || bytes.Equal(a, b))
}

// MergeMode merges a file mode as one value: changed on one side only, or
// the same way on both, it is taken; changed differently on the two sides
// it is a conflict (0, false).
func MergeMode(base, ours, theirs uint32) (uint32, bool) {
	switch {
	case ours == theirs:
		return ours, true
	case base == ours:
		return theirs, true
	case base == theirs:
		return ours, true
	}
	return 0, false
}
