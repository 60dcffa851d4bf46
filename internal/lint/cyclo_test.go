package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fzipp/gocyclo"
)

// maxComplexity is the cyclomatic complexity no function of the module may
// pass (issue 28): a function past it is a list of steps waiting for their
// names.
const maxComplexity = 30

// moduleRoot is the module's root, from this package's directory.
const moduleRoot = "../.."

// TestCyclomaticComplexity: no function of the module, tests included, has
// a cyclomatic complexity above maxComplexity, counted as
// `gocyclo -over 30 .` counts it (its library does the counting; a
// function literal counts in the function that holds it). Generated files
// are left out; a //gocyclo:ignore directive is refused, since it would
// hide a function from the count.
func TestCyclomaticComplexity(t *testing.T) {
	fset := token.NewFileSet()
	var stats gocyclo.Stats
	for _, path := range moduleGoFiles(t) {
		src, err := os.ReadFile(filepath.Join(moduleRoot, path))
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if ast.IsGenerated(f) {
			continue
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, "//gocyclo:") {
					t.Errorf("%s: %s: no function is exempt from the complexity bound", fset.Position(c.Pos()), c.Text)
				}
			}
		}
		stats = gocyclo.AnalyzeASTFile(f, fset, stats)
	}
	if len(stats) < 1000 {
		t.Fatalf("counted %d functions in the module; the walk from %s is wrong", len(stats), moduleRoot)
	}
	for _, s := range stats.SortAndFilter(-1, maxComplexity) {
		t.Errorf("%s: %s.%s has cyclomatic complexity %d, over %d: split it into named steps",
			s.Pos, s.PkgName, s.FuncName, s.Complexity, maxComplexity)
	}
}

// moduleGoFiles lists the module's .go files, relative to its root, as
// the go command sees the module: no testdata, vendor, dot or underscore
// directories, and no nested module.
func moduleGoFiles(t *testing.T) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(moduleRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(moduleRoot, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel != "." && skipDir(p, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".go") {
			paths = append(paths, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// skipDir says whether the go command leaves the directory dir, named
// name, out of the module's packages.
func skipDir(dir, name string) bool {
	if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil // another module
}
