package repo_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/repo"
)

const goFile = `package a

// T is a type.
type T struct{ X int }

func (t *T) M() {}

func (G[K]) N() {}

type G[K any] struct{}

func F() {}

const C, D = 1, 2

var V = 2

var _ = V
`

const pyFile = `class K:
    def m(self):
        pass

def f():
    pass

X = 1
`

// mapRepo is a working tree with Go and Python files, one large, one
// untracked, one ignored, one deleted from the tree, one under a
// dot-directory.
func mapRepo(t *testing.T) string {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	write(t, dir, "a.go", goFile)
	write(t, dir, "py/b.py", pyFile)
	write(t, dir, ".github/ci.go", "package ci\n\nfunc CI() {}\n")
	write(t, dir, "big.go", "package a\n\nfunc Big() {}\n"+strings.Repeat("// padding\n", repo.MaxMapFileSize/10))
	write(t, dir, "gone.go", "package a\n")
	write(t, dir, ".gitignore", "*.log\n")
	var many strings.Builder
	many.WriteString("package a\n\nconst (\n")
	for i := range 250 {
		fmt.Fprintf(&many, "\tK%d = %d\n", i, i)
	}
	many.WriteString(")\n")
	write(t, dir, "many.go", many.String())
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "one")
	os.Remove(filepath.Join(dir, "gone.go"))
	write(t, dir, "new.go", "package a\n\nfunc New() {}\n")
	write(t, dir, "debug.log", "ignored\n")
	return dir
}

func mapOf(t *testing.T, o repo.MapOptions, dir string) (header string, lines map[string]string) {
	t.Helper()
	m, err := o.Map(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(m), "\n")
	lines = map[string]string{}
	for l := range strings.Lines(rest) {
		l = strings.TrimSuffix(strings.TrimPrefix(l, "- "), "\n")
		end := strings.Index(l[1:], "`") + 2 // after the code span
		lines[l[:end]] = strings.TrimPrefix(l[end:], " ")
	}
	t.Logf("%s", m)
	return first, lines
}

func TestMapGoParser(t *testing.T) {
	dir := mapRepo(t)
	header, lines := mapOf(t, repo.MapOptions{NoCtags: true}, dir)
	if want := "<!-- repository map: 7 files, symbols by go/parser -->"; header != want {
		t.Errorf("header %q, want %q", header, want)
	}
	want := map[string]string{
		"`.github/ci.go`": ": func CI",
		"`.gitignore`":    "",
		"`a.go`":          ": type T, (T) M, (G) N, type G, func F, const C, const D, var V",
		"`big.go`":        "(over 1 MiB: no symbols)",
		"`many.go`":       "",
		"`new.go`":        ": func New",
		"`py/b.py`":       "",
	}
	for name, syms := range want {
		got, ok := lines[name]
		if name == "`many.go`" {
			if !strings.HasSuffix(got, "const K199 (and 50 more)") || strings.Contains(got, "K200") {
				t.Errorf("many.go: %q", got)
			}
			continue
		}
		if !ok || got != syms {
			t.Errorf("%s: %q, want %q", name, got, syms)
		}
	}
	for _, name := range []string{"`gone.go`", "`debug.log`"} {
		if _, ok := lines[name]; ok {
			t.Errorf("%s listed", name)
		}
	}
}

func TestMapCtags(t *testing.T) {
	if out, err := exec.Command("ctags", "--version").Output(); err != nil || !bytes.Contains(out, []byte("Universal Ctags")) {
		t.Skip("Universal Ctags is not installed (scripts/install-deps.sh installs it): the go/parser path alone is tested")
	}
	dir := mapRepo(t)
	header, lines := mapOf(t, repo.MapOptions{}, dir)
	if want := "<!-- repository map: 7 files, symbols by universal-ctags -->"; header != want {
		t.Errorf("header %q, want %q", header, want)
	}
	for name, want := range map[string][]string{
		"`a.go`":    {"(T) M", "func F", "const C", "var V", "T"},
		"`py/b.py`": {"class K", "function f", "variable X"},
		"`new.go`":  {"func New"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[name], w) {
				t.Errorf("%s: %q, want %q in it", name, lines[name], w)
			}
		}
	}
	if strings.Contains(lines["`py/b.py`"], " m") || strings.Contains(lines["`a.go`"], " X") {
		t.Errorf("members listed: %q, %q", lines["`py/b.py`"], lines["`a.go`"])
	}
	if lines["`big.go`"] != "(over 1 MiB: no symbols)" || !strings.HasSuffix(lines["`many.go`"], "(and 50 more)") {
		t.Errorf("big.go %q, many.go %.40q", lines["`big.go`"], lines["`many.go`"])
	}
	if _, ok := repo.Map(t.Context(), dir); ok != nil {
		t.Error(ok)
	}
}

// A file whose name starts with '-' is a file to ctags, not an option:
// ctags reads its symbols (-x.go was an unknown option, and made the map
// fall back to go/parser; --options=/dev/null.go an option file to load).
func TestMapCtagsDashNames(t *testing.T) {
	if out, err := exec.Command("ctags", "--version").Output(); err != nil || !bytes.Contains(out, []byte("Universal Ctags")) {
		t.Skip("Universal Ctags is not installed (scripts/install-deps.sh installs it): file names as ctags options cannot be tested")
	}
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	names := map[string]string{"-x.go": "X", "--version.go": "Version", "--options=/dev/null.go": "Null", "ok.go": "OK"}
	for name, fn := range names {
		write(t, dir, name, "package a\n\nfunc "+fn+"() {}\n")
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "dashes")
	header, lines := mapOf(t, repo.MapOptions{}, dir)
	if want := "<!-- repository map: 4 files, symbols by universal-ctags -->"; header != want {
		t.Errorf("header %q, want %q", header, want)
	}
	for name, fn := range names {
		if got, want := lines["`"+name+"`"], ": func "+fn; got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// Outside git: every file but under dot-directories.
func TestMapOutsideGit(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "main.go", "package main\n\nfunc main() {}\n")
	write(t, dir, ".cache/x.go", "package x\n")
	write(t, dir, "docs/.keep", "")
	header, lines := mapOf(t, repo.MapOptions{NoCtags: true}, dir)
	if header != "<!-- repository map: 2 files, symbols by go/parser -->" || lines["`main.go`"] != ": func main" {
		t.Errorf("%s %v", header, lines)
	}
	if _, ok := lines["`docs/.keep`"]; !ok {
		t.Errorf("docs/.keep not listed: %v", lines)
	}
}
