package memfs

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestUnifiedDiff checks random pairs of texts: the diff applied to a
// gives b, and it changes as few lines as the longest common subsequence
// allows (Myers's script is a shortest one). Seeds are printed.
func TestUnifiedDiff(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	text := func() string {
		var b strings.Builder
		for range r.IntN(30) {
			b.WriteString([]string{"a\n", "b\n", "c\n", "d\n", "e"}[r.IntN(5)])
		}
		return b.String()
	}
	for range 500 {
		a, b := text(), text()
		d := unifiedDiff("a", "b", a, b)
		if (d == "") != (a == b) {
			t.Fatalf("diff of %q and %q: %q", a, b, d)
		}
		if d == "" {
			continue
		}
		if got := applyDiff(t, a, d); got != b {
			t.Fatalf("diff of %q and %q:\n%s\napplied gives %q", a, b, d, got)
		}
		changed := 0
		for _, l := range splitLines(d)[2:] { // after the headers
			if l[0] == '-' || l[0] == '+' {
				changed++
			}
		}
		x, y := splitLines(a), splitLines(b)
		if want := len(x) + len(y) - 2*lcs(x, y); changed != want {
			t.Fatalf("diff of %q and %q changes %d lines, want %d:\n%s", a, b, changed, want, d)
		}
	}
}

// applyDiff applies the unified diff d to a.
func applyDiff(t *testing.T, a, d string) string {
	t.Helper()
	x := splitLines(a)
	var out []string
	next := 0 // the next line of x not yet copied
	lines := splitLines(d)[2:]
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "@@") {
			var as, an, bs, bn int
			parseHunk(t, l, &as, &an, &bs, &bn)
			from := as - 1
			if an == 0 {
				from = as
			}
			out = append(out, x[next:from]...)
			next = from
			continue
		}
		if strings.HasPrefix(l, "\\") {
			continue
		}
		body := l[1:]
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\\") {
			body = strings.TrimSuffix(body, "\n")
		}
		switch l[0] {
		case ' ':
			out = append(out, body)
			next++
		case '-':
			next++
		case '+':
			out = append(out, body)
		}
	}
	return strings.Join(append(out, x[next:]...), "")
}

func parseHunk(t *testing.T, l string, as, an, bs, bn *int) {
	t.Helper()
	f := strings.Fields(l)
	rng := func(s string, start, n *int) {
		p := strings.SplitN(s[1:], ",", 2)
		*start, *n = atoi(t, p[0]), 1
		if len(p) == 2 {
			*n = atoi(t, p[1])
		}
	}
	rng(f[1], as, an)
	rng(f[2], bs, bn)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("bad number %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func lcs(x, y []string) int {
	dp := make([][]int, len(x)+1)
	for i := range dp {
		dp[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// Two unrelated versions: the diff's memory is linear in their size (the
// search keeps vectors of a bounded length, not one per edit step), and
// the diff still turns a into b.
func TestUnifiedDiffMemory(t *testing.T) {
	for _, n := range []int{2000, 50000} {
		t.Run(fmt.Sprintf("lines=%d", n), func(t *testing.T) {
			var a, b strings.Builder
			for i := range n {
				fmt.Fprintf(&a, "line %d of the first version\n", i)
				fmt.Fprintf(&b, "line %d of another text altogether\n", i)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			d := unifiedDiff("a", "b", a.String(), b.String())
			runtime.ReadMemStats(&after)
			size := uint64(a.Len() + b.Len())
			got, limit := after.TotalAlloc-before.TotalAlloc, 32*size+1<<20
			t.Logf("%d bytes in, %d allocated", size, got)
			if got > limit {
				t.Errorf("diff of two unrelated %d-line texts (%d bytes) allocated %d bytes, want at most %d", n, size, got, limit)
			}
			if got := applyDiff(t, a.String(), d); got != b.String() {
				t.Errorf("the diff of two unrelated %d-line texts applied to the first does not give the second", n)
			}
		})
	}
}
