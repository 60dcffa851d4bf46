package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOneWayOut holds the session's rule that every byte leaving memory is
// redacted in one place: in package session, only outbound.go may hand
// anything to the store (Save, Delete, SaveIf, Apply) or the journal
// (Append, or build a journal.Record), and it seals what it hands on. A new
// path to disk written anywhere else fails here rather than leak.
func TestOneWayOut(t *testing.T) {
	fset, files := sessionFiles(t, "outbound.go")
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				recv := exprString(sel.X)
				switch {
				case strings.HasSuffix(recv, "store") && slices.Contains([]string{"Save", "Delete", "SaveIf", "Apply"}, sel.Sel.Name):
				case strings.HasSuffix(recv, "Journal") && sel.Sel.Name == "Append":
				default:
					return true
				}
				t.Errorf("%s: %s.%s outside session/outbound.go: everything that leaves memory goes through it (sealed)",
					fset.Position(n.Pos()), recv, sel.Sel.Name)
			case *ast.CompositeLit:
				if exprString(n.Type) == "journal.Record" {
					t.Errorf("%s: a journal.Record built outside session/outbound.go", fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
}

// sessionFiles parses package session's non-test files but except.
func sessionFiles(t *testing.T, except ...string) (*token.FileSet, []*ast.File) {
	t.Helper()
	paths, err := filepath.Glob("../../session/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") || slices.Contains(except, filepath.Base(path)) {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 5 {
		t.Fatalf("parsed %d session files; the glob is wrong", len(files))
	}
	return fset, files
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return ""
}
