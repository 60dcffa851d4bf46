package lint

import (
	"go/ast"
	"strings"
	"testing"
)

// TestSessionKnowsNoSkills holds that skills are a context-pack feature,
// not the session's: session's non-test files name none of meta's skill
// helpers. Attributes derived from values reach a flush through
// session.Options.Derived (contextpack.SkillAttr).
func TestSessionKnowsNoSkills(t *testing.T) {
	fset, files := sessionFiles(t)
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && exprString(sel.X) == "meta" && strings.Contains(sel.Sel.Name, "Skill") {
				t.Errorf("%s: session uses meta.%s: skills are the caller's (session.Options.Derived)", fset.Position(n.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
