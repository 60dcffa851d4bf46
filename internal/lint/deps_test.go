package lint

import (
	"os/exec"
	"strings"
	"testing"
)

// listLines runs go list with args and returns its output's lines.
func listLines(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, out)
	}
	return strings.Fields(string(out))
}

// nonStandardDeps lists the packages pkg links, itself included, but the
// standard library's.
func nonStandardDeps(t *testing.T, pkg string) []string {
	t.Helper()
	return listLines(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg)
}

// redact is a leaf every door links (through the session): it links the
// standard library and go-toml, which reads gitleaks' rule file, and
// nothing else (gitleaks' config package alone brought viper, zerolog
// and some fifty packages; redact embeds the file instead).
func TestRedactLinksOnlyTOML(t *testing.T) {
	const redact = "github.com/memfs/memfs/redact"
	for _, dep := range nonStandardDeps(t, redact) {
		if dep != redact && !matches(dep, "github.com/pelletier/go-toml/v2") {
			t.Errorf("redact links %s; it may link only the standard library and go-toml", dep)
		}
	}
}

// testOnly are modules that only tests may import: a program that uses
// memfs never links them.
var testOnly = []string{
	"github.com/zricethezav/gitleaks/v8", // redact's tests check its copy of the rules against gitleaks' own reading
	"github.com/spf13/viper",             // how gitleaks reads its rules, in the same tests
}

func TestTestOnlyModules(t *testing.T) {
	lines := listLines(t, "-f", `{{.ImportPath}}:{{join .Imports ","}}`, "github.com/memfs/memfs/...")
	for _, line := range lines {
		pkg, imports, _ := strings.Cut(line, ":")
		for imp := range strings.SplitSeq(imports, ",") {
			for _, m := range testOnly {
				if matches(imp, m) {
					t.Errorf("%s imports %s, which only tests may import", pkg, imp)
				}
			}
		}
	}
}

// search is the index's file format: usable, fuzzed and benchmarked
// without a session. The live service over a session is search/live.
func TestSearchLinksNoSession(t *testing.T) {
	for _, dep := range nonStandardDeps(t, "github.com/memfs/memfs/search") {
		if matches(dep, "github.com/memfs/memfs/session") {
			t.Errorf("search links %s; the service that needs a session is search/live", dep)
		}
	}
}
