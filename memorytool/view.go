package memorytool

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/memfs/memfs/backend"
)

// view shows a directory two levels deep with sizes, or a file with
// numbered lines (view_range: the first and last line, -1 for the end).
func (h *Handler) view(ctx context.Context, in Input) (Result, error) {
	key, err := h.Key(in.Path)
	if err != nil {
		return Result{}, err
	}
	p := h.show(key)
	if key == h.prefix || h.f.IsDir(key) {
		if in.ViewRange != nil {
			return Result{}, fail(ErrInvalid, "Error: view_range is for a file; %s is a directory", p)
		}
		text, err := h.listing(key)
		if err != nil {
			return Result{}, h.engineErr(err, "view", p)
		}
		return Result{Text: text}, nil
	}
	v, err := h.read(ctx, key, p)
	if err != nil {
		return Result{}, err
	}
	lines := splitLines(string(v))
	if len(lines) > MaxLines {
		return Result{}, fail(ErrInvalid, "Error: File %s exceeds maximum line limit of %d lines.", p, MaxLines)
	}
	from, to := 1, len(lines)
	if in.ViewRange != nil {
		if from, to, err = viewRange(in.ViewRange, len(lines)); err != nil {
			return Result{}, err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Here's the content of %s with line numbers:\n", p)
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, lines[i-1])
	}
	return Result{Text: b.String(), SHA256: Sum(v)}, nil
}

// viewRange checks view_range against a file of n lines.
func viewRange(r []int, n int) (from, to int, err error) {
	if len(r) != 2 {
		return 0, 0, fail(ErrInvalid, "Error: view_range takes two numbers, the first and the last line (-1: to the end), such as [1, 10]")
	}
	from, to = r[0], r[1]
	if to == -1 {
		to = n
	}
	if from < 1 || from > max(n, 1) || to < from || to > n && r[1] != -1 {
		return 0, 0, fail(ErrInvalid, "Error: Invalid `view_range` parameter: %v. The file has %d lines: give [first, last] with 1 <= first <= last <= %d, or last -1", r, n, n)
	}
	return from, min(to, n), nil
}

// listing is view of the directory key: itself and what is under it two
// levels deep, hidden names (a segment starting with ".") and
// node_modules left out, each with its size in du -h's units (a
// directory's: the sum of its visible files').
func (h *Handler) listing(key string) (string, error) {
	var shown []string
	sizes := map[string]int64{}
	nodes, err := h.f.List(key + "/")
	if err != nil {
		return "", err
	}
	for _, e := range nodes {
		rel := strings.TrimPrefix(e.Key, key+"/")
		if hidden(rel) {
			continue
		}
		if strings.Count(rel, "/") < 2 {
			shown = append(shown, e.Key)
		}
		if !e.Info.Mode.IsDir() {
			for d := e.Key; ; d = parent(d) {
				sizes[d] += e.Info.Size
				if d == key || d == "" {
					break
				}
			}
		}
	}
	slices.Sort(shown)
	var b strings.Builder
	fmt.Fprintf(&b, "Here're the files and directories up to 2 levels deep in %s, excluding hidden items and node_modules:\n", h.show(key))
	fmt.Fprintf(&b, "%s\t%s\n", humanSize(sizes[key]), h.show(key))
	for _, k := range shown {
		fmt.Fprintf(&b, "%s\t%s\n", humanSize(sizes[k]), h.show(k))
	}
	return b.String(), nil
}

func parent(key string) string {
	dir, _ := backend.Split(key)
	return dir
}

// hidden reports whether the relative path rel has a hidden segment.
func hidden(rel string) bool {
	for seg := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(seg, ".") || seg == "node_modules" {
			return true
		}
	}
	return false
}

// humanSize is n bytes as du -h writes it: 512, 1.5K, 12K, 3.4M.
func humanSize(n int64) string {
	if n < 1024 {
		return fmt.Sprint(n)
	}
	f := float64(n)
	for _, unit := range []string{"K", "M", "G", "T"} {
		f /= 1024
		if f < 1024 || unit == "T" {
			if f < 10 {
				return fmt.Sprintf("%.1f%s", f, unit)
			}
			return fmt.Sprintf("%.0f%s", f, unit)
		}
	}
	return ""
}
