package memfs

import (
	"fmt"
	"strings"
)

// diffContext is the lines of context around each change, as diff -u.
const diffContext = 3

// unifiedDiff returns the unified diff (diff -u) from a to b, named aName
// and bName; "" when they are equal. Lines are compared whole: Myers's
// O(ND) algorithm (An O(ND) Difference Algorithm and Its Variations, 1986),
// so the cost is the size times the number of lines changed.
func unifiedDiff(aName, bName, a, b string) string {
	if a == b {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	ops := myers(x, y)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	for start := 0; start < len(ops); {
		// A hunk: from diffContext lines before a change to diffContext
		// after the last change closer than 2*diffContext lines.
		for start < len(ops) && ops[start].kind == ' ' {
			start++
		}
		if start == len(ops) {
			break
		}
		lo := max(0, start-diffContext)
		hi, same := start, 0
		for hi < len(ops) && same <= 2*diffContext {
			if ops[hi].kind == ' ' {
				same++
			} else {
				same = 0
			}
			hi++
		}
		hi = min(len(ops), hi-same+diffContext)
		writeHunk(&out, ops[lo:hi])
		start = hi
	}
	return out.String()
}

// diffOp is one line of the edit script: ' ' kept, '-' only in a, '+'
// only in b; ai and bi are its line numbers (from 0) in a and b.
type diffOp struct {
	kind   byte
	line   string
	ai, bi int
}

func writeHunk(w *strings.Builder, ops []diffOp) {
	var na, nb int
	for _, o := range ops {
		if o.kind != '+' {
			na++
		}
		if o.kind != '-' {
			nb++
		}
	}
	fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(ops[0].ai, na), hunkRange(ops[0].bi, nb))
	for _, o := range ops {
		w.WriteByte(o.kind)
		w.WriteString(o.line)
		if !strings.HasSuffix(o.line, "\n") {
			w.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange is diff -u's "start,count" (start from 1; for no lines, the
// line before).
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitLines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		out = append(out, l)
	}
	return out
}

// myers returns the shortest edit script from x to y.
func myers(x, y []string) []diffOp {
	n, m := len(x), len(y)
	maxD := n + m
	v := make([]int, 2*maxD+2)
	var trace [][]int
	off := maxD + 1
	for d := 0; d <= maxD; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				i = v[off+k+1] // down: insert
			} else {
				i = v[off+k-1] + 1 // right: delete
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i, j = i+1, j+1
			}
			v[off+k] = i
			if i >= n && j >= m {
				return backtrack(x, y, trace, off, d)
			}
		}
	}
	return nil // not reached: d = n+m always ends
}

// backtrack walks the trace of myers back from (len(x), len(y)).
func backtrack(x, y []string, trace [][]int, off, d int) []diffOp {
	var rev []diffOp
	i, j := len(x), len(y)
	for ; d >= 0; d-- {
		v := trace[d]
		k := i - j
		var pk int
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		pi := v[off+pk]
		pj := pi - pk
		for i > pi && j > pj && i > 0 && j > 0 && x[i-1] == y[j-1] {
			i, j = i-1, j-1
			rev = append(rev, diffOp{' ', x[i], i, j})
		}
		if d == 0 {
			break
		}
		if i == pi {
			j--
			rev = append(rev, diffOp{'+', y[j], i, j})
		} else {
			i--
			rev = append(rev, diffOp{'-', x[i], i, j})
		}
	}
	for l, r := 0, len(rev)-1; l < r; l, r = l+1, r-1 {
		rev[l], rev[r] = rev[r], rev[l]
	}
	return rev
}
