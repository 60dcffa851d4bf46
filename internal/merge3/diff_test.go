package merge3

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// lcsLen is the length of a longest common subsequence, by dynamic
// programming: the reference a minimal diff must agree with.
func lcsLen(a, b [][]byte) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case string(a[i]) == string(b[j]):
				cur[j+1] = prev[j] + 1
			default:
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// apply turns a into b with hunks, checking they are sorted and separated.
func apply(t *testing.T, a, b [][]byte, hunks []hunk) [][]byte {
	t.Helper()
	var out [][]byte
	pos, bpos := 0, 0
	for k, h := range hunks {
		if h.a0 < pos || (k > 0 && h.a0 == pos) || h.a1 < h.a0 || h.b1 < h.b0 || (h.a0 == h.a1 && h.b0 == h.b1) {
			t.Fatalf("bad hunk %d %+v after base line %d", k, h, pos)
		}
		if h.b0-bpos != h.a0-pos {
			t.Fatalf("hunk %d %+v: unchanged run lengths differ", k, h)
		}
		out = append(out, a[pos:h.a0]...)
		out = append(out, b[h.b0:h.b1]...)
		pos, bpos = h.a1, h.b1
	}
	return append(out, a[pos:]...)
}

func randLines(r *rand.Rand, n, alphabet int) [][]byte {
	ls := make([][]byte, n)
	for i := range ls {
		ls[i] = fmt.Appendf(nil, "%d\n", r.IntN(alphabet))
	}
	return ls
}

func TestDiffMinimal(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for iter := range 3000 {
		a := randLines(r, r.IntN(30), 1+r.IntN(6))
		b := randLines(r, r.IntN(30), 1+r.IntN(6))
		hunks, ok := diff(a, b)
		if !ok {
			t.Fatalf("iter %d: diff gave up on %d and %d lines", iter, len(a), len(b))
		}
		if got := apply(t, a, b, hunks); !equalLines(got, b) {
			t.Fatalf("iter %d: applying the hunks gives %q, want %q", iter, got, b)
		}
		edits := 0
		for _, h := range hunks {
			edits += h.a1 - h.a0 + h.b1 - h.b0
		}
		if want := len(a) + len(b) - 2*lcsLen(a, b); edits != want {
			t.Fatalf("iter %d: %d edits, want the minimum %d\na=%q\nb=%q", iter, edits, want, a, b)
		}
	}
}

func TestDiffGivesUp(t *testing.T) {
	// Two unrelated texts of 30,000 lines each: 60,000 edits, past maxEdits.
	a := make([][]byte, 30000)
	b := make([][]byte, 30000)
	for i := range a {
		a[i] = fmt.Appendf(nil, "a%d\n", i)
		b[i] = fmt.Appendf(nil, "b%d\n", i)
	}
	if _, ok := diff(a, b); ok {
		t.Fatal("diff of 60,000 edits succeeded, want it to give up")
	}
	// Just under maxEdits is still done.
	if _, ok := diff(a[:maxEdits/2-1], b[:maxEdits/2-1]); !ok {
		t.Fatalf("diff of %d edits gave up, want it done", maxEdits-2)
	}
	// A pure insertion of the same size is no work at all.
	if h, ok := diff(a[:10], append(a[:10:10], b...)); !ok || len(h) != 1 {
		t.Fatalf("pure insertion: got %v, %v; want one hunk", h, ok)
	}
}

// TestSlideKeepsTheSide: whatever slide does to one side's hunks, they
// still turn base into that side, sorted and separated.
func TestSlideKeepsTheSide(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	moved := 0
	for iter := range 5000 {
		base := randLines(r, r.IntN(30), 1+r.IntN(3))
		side := randLines(r, r.IntN(30), 1+r.IntN(3))
		other := randLines(r, r.IntN(30), 1+r.IntN(3))
		hs, ok1 := diff(base, side)
		oh, ok2 := diff(base, other)
		if !ok1 || !ok2 {
			t.Fatalf("iter %d: diff gave up", iter)
		}
		before := append([]hunk(nil), hs...)
		slide(base, side, hs, other, oh)
		for i := range hs {
			if hs[i] != before[i] {
				moved++
			}
		}
		if got := apply(t, base, side, hs); !equalLines(got, side) {
			t.Fatalf("iter %d: after slide the hunks give %q, want %q\nbefore %v\nafter  %v", iter, got, side, before, hs)
		}
	}
	t.Logf("slide moved %d hunks", moved)
}
