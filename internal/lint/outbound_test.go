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
	files, err := filepath.Glob("../../session/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") || filepath.Base(path) == "outbound.go" {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
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
	if checked < 5 {
		t.Fatalf("checked %d session files; the glob is wrong", checked)
	}
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
