package lint

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	commandPkg  = "github.com/memfs/memfs/cmd/memfs"
	locationPkg = "github.com/memfs/memfs/backend/location"
	// storesFile is the one file of the command that names store
	// packages: it registers their factories.
	storesFile = "stores.go"
)

// TestCommandNamesStoresInOneFile holds the command to knowing no store:
// it reaches them through backend/location, and only storesFile, which
// registers their factories, imports a package under backend/ besides
// backend and backend/location. Test files may open a store directly.
func TestCommandNamesStoresInOneFile(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=Dir,GoFiles", commandPkg).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var p struct {
		Dir     string
		GoFiles []string
	}
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	found := false
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		found = found || name == storesFile
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if name != storesFile && strings.HasPrefix(path, backendPkg+"/") && path != locationPkg {
				t.Errorf("%s: the command imports %s outside %s: it reaches a store through backend/location (register its factory in %s)",
					fset.Position(imp.Pos()), path, storesFile, storesFile)
			}
		}
	}
	if !found {
		t.Errorf("cmd/memfs has no %s: the file that registers the stores moved; update this test", storesFile)
	}
}

// TestLocationImportsNoStore keeps backend/location light: beside the
// standard library it links backend alone, so that a program links only
// the stores it registers.
func TestLocationImportsNoStore(t *testing.T) {
	for _, dep := range deps(t, locationPkg) {
		if dep != backendPkg && dep != locationPkg {
			t.Errorf("backend/location links %s: it imports no store, and nothing heavy", dep)
		}
	}
}

// TestDirStoreProgramLinksNoEtcd: a library user who opens a dir store
// (the engine, backend/dirstore and backend/location) links neither
// etcd's client nor gRPC.
func TestDirStoreProgramLinksNoEtcd(t *testing.T) {
	all := deps(t, engine, "github.com/memfs/memfs/backend/dirstore", locationPkg)
	for _, dep := range all {
		if strings.HasPrefix(dep, "go.etcd.io/") || matches(dep, "google.golang.org/grpc") {
			t.Errorf("a program of the engine and a dir store links %s", dep)
		}
	}
	if len(all) == 0 {
		t.Fatal("go list -deps listed nothing")
	}
}

// deps are the packages pkgs link, the standard library's aside.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, pkgs...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}
