package memfs

import (
	"fmt"
	"strings"

	"github.com/memfs/memfs/internal/merge3"
)

// diffContext is the lines of context around each change, as diff -u.
const diffContext = 3

// unifiedDiff returns the unified diff (diff -u) from a to b, named aName
// and bName; "" when they are equal. Lines are compared whole, by
// merge3.Diff: a shortest edit script (Myers) in memory linear in the
// size; two texts too far apart for its bounded search get one hunk
// between their common first and last lines.
func unifiedDiff(aName, bName, a, b string) string {
	if a == b {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	ops := editScript(x, y)
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

// editScript returns the lines of x and y as the hunks of merge3.Diff
// leave them: kept, deleted ('-') and inserted ('+'), in order.
func editScript(x, y []string) []diffOp {
	hunks, _ := merge3.Diff(byteLines(x), byteLines(y))
	ops := make([]diffOp, 0, len(x)+len(y))
	i, j := 0, 0
	keep := func(to int) {
		for ; i < to; i, j = i+1, j+1 {
			ops = append(ops, diffOp{' ', x[i], i, j})
		}
	}
	for _, h := range hunks {
		keep(h.A0)
		for ; i < h.A1; i++ {
			ops = append(ops, diffOp{'-', x[i], i, j})
		}
		for ; j < h.B1; j++ {
			ops = append(ops, diffOp{'+', y[j], i, j})
		}
	}
	keep(len(x))
	return ops
}

func byteLines(ls []string) [][]byte {
	out := make([][]byte, len(ls))
	for i, l := range ls {
		out[i] = []byte(l)
	}
	return out
}
