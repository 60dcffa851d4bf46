package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionKnowsNoSkills holds that skills are a context-pack feature,
// not the session's: session's non-test files name none of meta's skill
// helpers. Attributes derived from values reach a flush through
// session.Options.Derived (contextpack.SkillAttr).
func TestSessionKnowsNoSkills(t *testing.T) {
	files, err := filepath.Glob("../../session/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && exprString(sel.X) == "meta" && strings.Contains(sel.Sel.Name, "Skill") {
				t.Errorf("%s: session uses meta.%s: skills are the caller's (session.Options.Derived)", fset.Position(n.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked < 5 {
		t.Fatalf("checked %d session files; the glob is wrong", checked)
	}
}
