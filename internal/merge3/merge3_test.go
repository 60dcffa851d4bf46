package merge3

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestMerge(t *testing.T) {
	const note = "# Plan\n\nstep one\n\n# Notes\n\nnothing yet\n\n# Log\n\nstarted\n"
	tests := []struct {
		name               string
		base, ours, theirs string
		nilBase            bool
		want               string
		wantOK             bool
	}{
		{name: "append both", base: "a\nb\n", ours: "a\nb\nours\n", theirs: "a\nb\ntheirs\n", want: "a\nb\ntheirs\nours\n", wantOK: true},
		{name: "append both, several lines", base: "{}\n", ours: "{}\n{\"o\":1}\n{\"o\":2}\n", theirs: "{}\n{\"t\":1}\n", want: "{}\n{\"t\":1}\n{\"o\":1}\n{\"o\":2}\n", wantOK: true},
		{name: "append same line both", base: "a\n", ours: "a\nx\n", theirs: "a\nx\n", want: "a\nx\n", wantOK: true},
		{name: "insert both mid-file", base: "a\nb\n", ours: "a\no\nb\n", theirs: "a\nt\nb\n", want: "a\nt\no\nb\n", wantOK: true},
		{name: "markdown sections", base: note,
			ours:   strings.Replace(note, "step one\n", "step one\nstep two\n", 1),
			theirs: strings.Replace(note, "nothing yet\n", "a finding\n", 1),
			want:   strings.Replace(strings.Replace(note, "step one\n", "step one\nstep two\n", 1), "nothing yet\n", "a finding\n", 1), wantOK: true},
		{name: "markdown edit and append", base: note,
			ours:   strings.Replace(note, "# Plan\n", "# The plan\n", 1),
			theirs: note + "done\n",
			want:   strings.Replace(note, "# Plan\n", "# The plan\n", 1) + "done\n", wantOK: true},
		// Myers puts an added paragraph's blank line last, touching the
		// next heading; slide moves it off the heading the other side edited.
		{name: "markdown paragraph added above an edited heading", base: "# A\n\ntext a\n\n# B\n\ntext b\n",
			ours:   "# A\n\ntext a\n\nmore a\n\n# B\n\ntext b\n",
			theirs: "# A\n\ntext a\n\n# Bee\n\ntext b\n",
			want:   "# A\n\ntext a\n\nmore a\n\n# Bee\n\ntext b\n", wantOK: true},
		{name: "markdown paragraph added below an edited line", base: "# A\n\ntext a\n\n# B\n",
			ours:   "# A\n\ntext a\n\nmore a\n\n# B\n",
			theirs: "# A\n\ntext A\n\n# B\n",
			want:   "# A\n\ntext A\n\nmore a\n\n# B\n", wantOK: true},
		{name: "blank line deleted next to an edit", base: "a\n\n\nb\nc\n", ours: "a\n\nb\nc\n", theirs: "a\n\n\nB\nc\n", want: "a\n\nB\nc\n", wantOK: true},
		{name: "one of repeated lines deleted on both", base: "x\nx\nx\nm\nq\n", ours: "x\nx\nm\nq\n", theirs: "x\nx\nm\nQ\n", want: "x\nx\nm\nQ\n", wantOK: true},
		{name: "same line changed differently", base: "a\nb\nc\n", ours: "a\nB\nc\n", theirs: "a\nβ\nc\n", wantOK: false},
		{name: "identical change", base: "a\nb\nc\n", ours: "a\nB\nc\n", theirs: "a\nB\nc\n", want: "a\nB\nc\n", wantOK: true},
		{name: "identical change and another", base: "a\nb\nc\nd\ne\n", ours: "a\nB\nc\nd\nE\n", theirs: "a\nB\nc\nd\ne\n", want: "a\nB\nc\nd\nE\n", wantOK: true},
		{name: "deletion vs unchanged", base: "a\nb\nc\nd\ne\n", ours: "a\nc\nd\ne\n", theirs: "a\nb\nc\nd\nE\n", want: "a\nc\nd\nE\n", wantOK: true},
		{name: "deletion vs modification", base: "a\nb\nc\n", ours: "a\nc\n", theirs: "a\nB\nc\n", wantOK: false},
		{name: "deletion vs append after it", base: "a\nb\n", ours: "a\n", theirs: "a\nb\nc\n", wantOK: false},
		{name: "adjacent lines changed", base: "a\nb\nc\nd\n", ours: "a\nB\nc\nd\n", theirs: "a\nb\nC\nd\n", wantOK: false},
		{name: "one unchanged line between", base: "a\nb\nc\nd\n", ours: "A\nb\nc\nd\n", theirs: "a\nb\nC\nd\n", want: "A\nb\nC\nd\n", wantOK: true},
		{name: "replace vs insert at same place", base: "a\nb\n", ours: "a\nB\n", theirs: "a\nx\nb\n", wantOK: false},
		{name: "nil base both created", nilBase: true, ours: "o\n", theirs: "t\n", want: "t\no\n", wantOK: true},
		{name: "nil base same creation", nilBase: true, ours: "same\n", theirs: "same\n", want: "same\n", wantOK: true},
		{name: "nil base one created", nilBase: true, ours: "", theirs: "t\n", want: "t\n", wantOK: true},
		{name: "nil base no newlines", nilBase: true, ours: "o", theirs: "t", want: "t\no", wantOK: true},
		{name: "no newline, both append with one", base: "x", ours: "x\no\n", theirs: "x\nt\n", want: "x\nt\no\n", wantOK: true},
		{name: "no newline, both append without", base: "x", ours: "x\no", theirs: "x\nt", want: "x\nt\no", wantOK: true},
		{name: "no newline, mixed appends", base: "x", ours: "x\no", theirs: "x\nt\n", want: "x\nt\no\n", wantOK: true},
		{name: "no newline, one only completes the line", base: "x", ours: "x\n", theirs: "x\nt\n", want: "x\nt\n", wantOK: true},
		{name: "no newline, one completes, other unchanged", base: "x", ours: "x\n", theirs: "x", want: "x\n", wantOK: true},
		{name: "no newline, last line changed vs append", base: "a\nx", ours: "a\ny", theirs: "a\nx\nt\n", wantOK: false},
		{name: "newline base, appends without", base: "a\n", ours: "a\no", theirs: "a\nt", want: "a\nt\no", wantOK: true},
		{name: "newline base, one append without", base: "a\n", ours: "a\no", theirs: "a\nt\n", want: "a\nt\no\n", wantOK: true},
		{name: "no newline, edit elsewhere", base: "a\nb\nx", ours: "A\nb\nx", theirs: "a\nb\nx\nt", want: "A\nb\nx\nt", wantOK: true},
		{name: "binary ours", base: "a\n", ours: "a\x00\n", theirs: "a\n", wantOK: false},
		{name: "binary base", base: "\x00", ours: "a\n", theirs: "b\n", wantOK: false},
		{name: "invalid utf-8", base: "a\n", ours: "a\n\xff\n", theirs: "a\nb\n", wantOK: false},
		{name: "all empty", base: "", ours: "", theirs: "", want: "", wantOK: true},
		{name: "both deleted everything", base: "a\nb\n", ours: "", theirs: "", want: "", wantOK: true},
		{name: "blank lines, shrunk on both sides", base: "\n\n\n", ours: "0\n", theirs: "\n", wantOK: false},
		{name: "one emptied, other changed", base: "a\nb\n", ours: "", theirs: "a\nB\n", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := []byte(tt.base)
			if tt.nilBase {
				base = nil
			}
			got, ok := Merge(base, []byte(tt.ours), []byte(tt.theirs))
			if ok != tt.wantOK {
				t.Fatalf("Merge(%q, %q, %q): ok = %v, want %v (merged %q)", tt.base, tt.ours, tt.theirs, ok, tt.wantOK, got)
			}
			if ok && string(got) != tt.want {
				t.Errorf("Merge(%q, %q, %q) = %q, want %q", tt.base, tt.ours, tt.theirs, got, tt.want)
			}
			if !ok && got != nil {
				t.Errorf("Merge(%q, %q, %q): merged = %q with ok false, want nil", tt.base, tt.ours, tt.theirs, got)
			}
		})
	}
}

func TestText(t *testing.T) {
	late := append(bytes.Repeat([]byte("a"), sniffLen), 0)
	tests := []struct {
		name string
		b    []byte
		want bool
	}{
		{"nil", nil, true},
		{"plain", []byte("hello\n"), true},
		{"utf-8", []byte("héllo ✓\n"), true},
		{"nul", []byte("a\x00b"), false},
		{"nul at 7999", append(bytes.Repeat([]byte("a"), sniffLen-1), 0), false},
		{"nul at 8000", late, true},
		{"invalid utf-8", []byte("a\xc3"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Text(tt.b); got != tt.want {
				t.Errorf("Text(%q) = %v, want %v", tt.b, got, tt.want)
			}
		})
	}
}

// TestMergeJSONLAppends is the main case: two mounts appending to one log
// for many rounds, each round merged into the next base. Every line must
// be present exactly once, and within a round theirs' before ours'.
func TestMergeJSONLAppends(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	base := []byte(`{"start":true}` + "\n")
	var want []string // the merged log, line by line
	want = append(want, string(base))
	o, th := 0, 0
	for round := 0; o < 1000 || th < 1000; round++ {
		ours, theirs := bytes.Clone(base), bytes.Clone(base)
		var oLines, tLines []string
		for range r.IntN(20) {
			if o < 1000 {
				l := fmt.Sprintf(`{"side":"ours","n":%d}`+"\n", o)
				ours, oLines, o = append(ours, l...), append(oLines, l), o+1
			}
		}
		for range r.IntN(20) {
			if th < 1000 {
				l := fmt.Sprintf(`{"side":"theirs","n":%d}`+"\n", th)
				theirs, tLines, th = append(theirs, l...), append(tLines, l), th+1
			}
		}
		merged, ok := Merge(base, ours, theirs)
		if !ok {
			t.Fatalf("round %d: conflict merging %d lines of ours and %d of theirs", round, len(oLines), len(tLines))
		}
		want = append(append(want, tLines...), oLines...)
		if got := strings.Join(want, ""); string(merged) != got {
			t.Fatalf("round %d: merged\n%s\nwant\n%s", round, merged, got)
		}
		base = merged
	}
	seen := map[string]int{}
	for l := range strings.SplitSeq(string(base), "\n") {
		seen[l]++
	}
	for i := range 1000 {
		for _, side := range []string{"ours", "theirs"} {
			if l := fmt.Sprintf(`{"side":"%s","n":%d}`, side, i); seen[l] != 1 {
				t.Errorf("line %s present %d times, want once", l, seen[l])
			}
		}
	}
}

func randText(r *rand.Rand, n int) []byte {
	var b []byte
	for range n {
		b = fmt.Appendf(b, "%d\n", r.IntN(8))
	}
	if n > 0 && r.IntN(4) == 0 {
		b = b[:len(b)-1] // no final newline
	}
	return b
}

func TestMergeIdentityProperty(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	for iter := range 2000 {
		base, x := randText(r, r.IntN(20)), randText(r, r.IntN(20))
		if got, ok := Merge(base, x, base); !ok || !bytes.Equal(got, x) {
			t.Fatalf("iter %d: Merge(base, x, base) = %q, %v; want %q", iter, got, ok, x)
		}
		if got, ok := Merge(base, base, x); !ok || !bytes.Equal(got, x) {
			t.Fatalf("iter %d: Merge(base, base, x) = %q, %v; want %q", iter, got, ok, x)
		}
		if got, ok := Merge(base, x, x); !ok || !bytes.Equal(got, x) {
			t.Fatalf("iter %d: Merge(base, x, x) = %q, %v; want %q", iter, got, ok, x)
		}
	}
}

// edit replaces base lines [start, end) with lines.
type edit struct {
	start, end int
	lines      []string
}

func applyEdits(base []string, edits []edit) string {
	var b strings.Builder
	pos := 0
	for _, e := range edits {
		b.WriteString(strings.Join(base[pos:e.start], ""))
		b.WriteString(strings.Join(e.lines, ""))
		pos = e.end
	}
	b.WriteString(strings.Join(base[pos:], ""))
	return b.String()
}

// TestMergeDisjointEditsProperty: random edits to random base text, each
// side's edits on regions of base separated from the other side's by at
// least one unchanged line, merge to the result of applying both.
//
// With unique base lines every diff is unambiguous and the merge must
// succeed. With lines that repeat, a diff may place a deletion on another
// copy of the line, next to the other side's edit, and the merge may then
// conflict (diff3 does the same), or take two deletions from one run of
// equal lines as the same change; when it succeeds it must hold every new
// line once.
func TestMergeDisjointEditsProperty(t *testing.T) {
	for _, alphabet := range []int{0, 5} {
		t.Run(fmt.Sprintf("alphabet=%d", alphabet), func(t *testing.T) {
			testDisjointEdits(t, alphabet)
		})
	}
}

// testDisjointEdits draws base lines from alphabet values, or makes them
// unique when alphabet is 0.
func testDisjointEdits(t *testing.T, alphabet int) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 4))
	conflicts := 0
	for iter := range 3000 {
		n := 3 + r.IntN(40)
		base := make([]string, n)
		for i := range base {
			if alphabet == 0 {
				base[i] = fmt.Sprintf("b%d\n", i)
			} else {
				base[i] = fmt.Sprintf("b%d\n", r.IntN(alphabet))
			}
		}
		// Cut base into regions: each owned by ours, theirs or nobody, and
		// an owned region is followed by at least one unowned line.
		var oEdits, tEdits, all []edit
		newLine := 0
		for pos := 0; pos < n; {
			owner := r.IntN(3)
			if owner == 2 {
				pos++
				continue
			}
			size := r.IntN(3) // 0: a pure insertion before pos
			if pos+size >= n {
				break
			}
			e := edit{start: pos, end: pos + size}
			for range r.IntN(3) {
				// New lines are unique, so neither side's can match base
				// or the other's by chance.
				e.lines = append(e.lines, fmt.Sprintf("new%d\n", newLine))
				newLine++
			}
			if size == 0 && len(e.lines) == 0 {
				pos++
				continue
			}
			if owner == 0 {
				oEdits = append(oEdits, e)
			} else {
				tEdits = append(tEdits, e)
			}
			all = append(all, e)
			pos += size + 1 // an unchanged line after each edit
		}
		b, o, th := strings.Join(base, ""), applyEdits(base, oEdits), applyEdits(base, tEdits)
		want := applyEdits(base, all)
		got, ok := Merge([]byte(b), []byte(o), []byte(th))
		if !ok && alphabet > 0 {
			conflicts++
			continue
		}
		if ok && alphabet > 0 && string(got) != want {
			// Only each new line, once, can be asked for: which copy of a
			// repeated line a side deleted is ambiguous, so two deletions
			// from one run of equal lines may merge as one (as in diff3).
			for i := range newLine {
				if c := strings.Count(string(got), fmt.Sprintf("new%d\n", i)); c != 1 {
					t.Fatalf("iter %d: Merge = %q holds new%d %d times, want once\nbase   %q\nours   %q\ntheirs %q", iter, got, i, c, b, o, th)
				}
			}
			continue
		}
		if !ok || string(got) != want {
			t.Fatalf("iter %d: Merge = %q, %v; want %q\nbase   %q\nours   %q\ntheirs %q\nours' edits %v\ntheirs' edits %v",
				iter, got, ok, want, b, o, th, oEdits, tEdits)
		}
	}
	t.Logf("%d of 3000 merges conflicted", conflicts)
}

func TestMergeXAttrs(t *testing.T) {
	type m = map[string][]byte
	tests := []struct {
		name               string
		base, ours, theirs m
		want               m
		wantOK             bool
	}{
		{"all nil", nil, nil, nil, m{}, true},
		{"changed on ours", m{"a": []byte("1")}, m{"a": []byte("2")}, m{"a": []byte("1")}, m{"a": []byte("2")}, true},
		{"changed on theirs", m{"a": []byte("1")}, m{"a": []byte("1")}, m{"a": []byte("3")}, m{"a": []byte("3")}, true},
		{"same change", m{"a": []byte("1")}, m{"a": []byte("2")}, m{"a": []byte("2")}, m{"a": []byte("2")}, true},
		{"different changes", m{"a": []byte("1")}, m{"a": []byte("2")}, m{"a": []byte("3")}, nil, false},
		{"added on each", nil, m{"o": []byte("1")}, m{"t": []byte("2")}, m{"o": []byte("1"), "t": []byte("2")}, true},
		{"added differently", nil, m{"a": []byte("1")}, m{"a": []byte("2")}, nil, false},
		{"removed vs unchanged", m{"a": []byte("1"), "b": nil}, m{"b": nil}, m{"a": []byte("1"), "b": nil}, m{"b": {}}, true},
		{"removed vs changed", m{"a": []byte("1")}, m{}, m{"a": []byte("2")}, nil, false},
		{"removed both", m{"a": []byte("1")}, m{}, m{}, m{}, true},
		{"empty value vs absent", m{}, m{"a": {}}, m{}, m{"a": {}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := MergeXAttrs(tt.base, tt.ours, tt.theirs)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v (merged %q)", ok, tt.wantOK, got)
			}
			if !ok {
				if got != nil {
					t.Errorf("merged = %q with ok false, want nil", got)
				}
				return
			}
			if len(got) != len(tt.want) {
				t.Fatalf("merged = %q, want %q", got, tt.want)
			}
			for k, v := range tt.want {
				g, in := got[k]
				if !in || !bytes.Equal(g, v) {
					t.Errorf("merged[%q] = %q (present %v), want %q", k, g, in, v)
				}
			}
		})
	}
}

func TestMergeXAttrsCopies(t *testing.T) {
	ours := map[string][]byte{"a": []byte("1")}
	got, ok := MergeXAttrs(nil, ours, nil)
	if !ok {
		t.Fatal("conflict")
	}
	got["a"][0] = 'x'
	if string(ours["a"]) != "1" {
		t.Errorf("the merged value shares memory with ours: ours[a] = %q", ours["a"])
	}
}

func TestMergeMode(t *testing.T) {
	tests := []struct {
		base, ours, theirs, want uint32
		wantOK                   bool
	}{
		{0o644, 0o644, 0o644, 0o644, true},
		{0o644, 0o600, 0o644, 0o600, true},
		{0o644, 0o644, 0o755, 0o755, true},
		{0o644, 0o600, 0o600, 0o600, true},
		{0o644, 0o600, 0o755, 0, false},
	}
	for _, tt := range tests {
		got, ok := MergeMode(tt.base, tt.ours, tt.theirs)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("MergeMode(%o, %o, %o) = %o, %v; want %o, %v", tt.base, tt.ours, tt.theirs, got, ok, tt.want, tt.wantOK)
		}
	}
}

// bigText is about size bytes of JSONL, one distinct record a line.
func bigText(size int) [][]byte {
	var lines [][]byte
	for n, i := 0, 0; n < size; i++ {
		l := fmt.Appendf(nil, `{"n":%d,"msg":"an event the agent logged, padded to look real"}`+"\n", i)
		lines = append(lines, l)
		n += len(l)
	}
	return lines
}

func BenchmarkMerge1MiB(b *testing.B) {
	lines := bigText(1 << 20)
	n := len(lines)
	base := bytes.Join(lines, nil)
	edited := func(edits map[int]string, appended ...string) []byte {
		var out []byte
		for i, l := range lines {
			if e, in := edits[i]; in {
				out = append(out, e...)
				continue
			}
			out = append(out, l...)
		}
		for _, a := range appended {
			out = append(out, a...)
		}
		return out
	}
	cases := []struct {
		name         string
		ours, theirs []byte
	}{
		{"edits at both ends",
			edited(map[int]string{1: "ours at the start\n", n - 3: "ours at the end\n"}),
			edited(map[int]string{5: "theirs at the start\n", n - 10: "theirs at the end\n"})},
		{"edit at start and appends",
			edited(map[int]string{0: "ours at the start\n"}, "ours appended\n"),
			edited(nil, "theirs appended\n", "and another\n")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if _, ok := Merge(base, c.ours, c.theirs); !ok {
				b.Fatal("conflict")
			}
			b.SetBytes(int64(len(base)))
			b.ReportAllocs()
			for b.Loop() {
				Merge(base, c.ours, c.theirs)
			}
		})
	}
}
