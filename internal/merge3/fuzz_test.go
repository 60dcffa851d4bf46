package merge3

import (
	"testing"
	"unicode/utf8"
)

// FuzzMerge checks that Merge never panics, refuses what Text refuses,
// and that a clean merge holds every line either side added.
func FuzzMerge(f *testing.F) {
	seeds := [][3]string{
		{"a\nb\n", "a\nb\nours\n", "a\nb\ntheirs\n"},
		{"x", "x\no", "x\nt\n"},
		{"", "o", "t"},
		{"a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n"},
		{"a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nb\nc\nD\n"},
		{"a\na\na\n", "a\na\n", "a\nb\na\na\n"},
		{"\n\n\n", "\n\n", "\n\n\n\n"},
		{"a\x00", "a", "b"},
		{"\xff", "a\n", "a\n"},
		{"# t\n\nx\n\n# u\n\ny\n", "# t\n\nx2\n\n# u\n\ny\n", "# t\n\nx\n\n# u\n\ny2\n"},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]), []byte(s[2]))
	}
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		merged, ok := Merge(base, ours, theirs)
		if !ok {
			if merged != nil {
				t.Fatalf("merged = %q with ok false, want nil", merged)
			}
			return
		}
		if !Text(base) || !Text(ours) || !Text(theirs) {
			t.Fatalf("merged binary input: Merge(%q, %q, %q) = %q, true", base, ours, theirs, merged)
		}
		if !utf8.Valid(merged) {
			t.Fatalf("merged = %q, not valid UTF-8", merged)
		}
		have := map[string]bool{}
		for _, l := range splitLines(merged) {
			have[string(l)] = true
		}
		bl := splitLines(base)
		for _, side := range [][]byte{ours, theirs} {
			sl := splitLines(side)
			hunks, ok := diff(bl, sl)
			if !ok {
				continue
			}
			for _, h := range hunks {
				for _, l := range sl[h.b0:h.b1] {
					if !isMarker(l) && !have[string(l)] {
						t.Fatalf("Merge(%q, %q, %q) = %q: lost the added line %q", base, ours, theirs, merged, l)
					}
				}
			}
		}
	})
}
