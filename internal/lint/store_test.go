package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	fsnodePkg  = "github.com/memfs/memfs/fsnode"
	backendPkg = "github.com/memfs/memfs/backend"
)

// storeInterfaces are the interfaces of package backend whose methods do
// store I/O: the core Store and its optional capabilities. A name that no
// longer exists is skipped (the capabilities move); Store must exist.
var storeInterfaces = []string{"Store", "SysStore", "Batcher", "Versioned", "Walker", "Watcher", "Lister"}

// TestFsnodeNeverTouchesTheStore holds DESIGN's "fsnode never touches a
// Store": fsnode's non-test files import no package under backend/ (the
// stores, their wrappers and their suite; backend itself, for keys and
// Info, is allowed) and use no method of a store interface. A method is a
// store method when it is declared by one of storeInterfaces, or when it
// has the name and signature of one (Close aside: every file has one),
// so that an interface fsnode declares over the store's methods (as
// Records over ListSys and LoadSys was) is caught too. Store I/O from a
// FUSE handler would run on the request's thread, and the session (or the
// event log) is what knows what is in memory.
func TestFsnodeNeverTouchesTheStore(t *testing.T) {
	pkgs := goList(t, fsnodePkg)
	fsn := pkgs[fsnodePkg]
	if fsn == nil || len(fsn.GoFiles) == 0 {
		t.Fatalf("go list found no files of %s", fsnodePkg)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range fsn.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(fsn.Dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if strings.HasPrefix(path, backendPkg+"/") {
				t.Errorf("%s: fsnode imports %s: no package under backend/ (a store, a wrapper, the suite); it reads through the session and the interfaces its Options give it",
					fset.Position(imp.Pos()), path)
			}
		}
	}

	// Type-check fsnode against the export data go list built.
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		p := pkgs[path]
		if p == nil || p.Export == "" {
			return nil, errors.New("no export data for " + path)
		}
		return os.Open(p.Export)
	})
	info := &types.Info{Selections: make(map[*ast.SelectorExpr]*types.Selection), Uses: make(map[*ast.Ident]types.Object)}
	conf := types.Config{Importer: imp.(types.ImporterFrom)}
	pkg, err := conf.Check(fsnodePkg, fset, files, info)
	if err != nil {
		t.Fatalf("type-checking fsnode: %v", err)
	}
	var backend *types.Package
	for _, p := range pkg.Imports() {
		if p.Path() == backendPkg {
			backend = p
		}
	}
	if backend == nil {
		return // fsnode does not even import backend
	}

	// The store methods: declared by a store interface (any name), or
	// sharing name and signature with one (not Close).
	declared := make(map[*types.Func]string)      // method -> its interface
	shapes := make(map[string][]*types.Signature) // name -> signatures
	for _, name := range storeInterfaces {
		obj := backend.Scope().Lookup(name)
		if obj == nil {
			if name == "Store" {
				t.Fatalf("backend.Store not found")
			}
			continue
		}
		iface, ok := obj.Type().Underlying().(*types.Interface)
		if !ok {
			continue
		}
		for i := range iface.NumMethods() {
			m := iface.Method(i)
			if _, ok := declared[m]; !ok { // Store's, not SysStore's
				declared[m] = "backend." + name
			}
			if m.Name() != "Close" {
				shapes[m.Name()] = append(shapes[m.Name()], m.Type().(*types.Signature))
			}
		}
	}
	sameShape := func(m *types.Func) bool {
		sig := m.Type().(*types.Signature)
		for _, s := range shapes[m.Name()] {
			if types.Identical(types.NewSignatureType(nil, nil, nil, sig.Params(), sig.Results(), sig.Variadic()),
				types.NewSignatureType(nil, nil, nil, s.Params(), s.Results(), s.Variadic())) {
				return true
			}
		}
		return false
	}
	for sel, s := range info.Selections {
		if s.Kind() == types.FieldVal {
			continue
		}
		m, ok := s.Obj().(*types.Func)
		if !ok {
			continue
		}
		if iface, ok := declared[m.Origin()]; ok {
			t.Errorf("%s: fsnode uses %s.%s: fsnode never touches the store", fset.Position(sel.Pos()), iface, m.Name())
		} else if sameShape(m) {
			t.Errorf("%s: fsnode uses %s, a store method by its name and signature (%s): fsnode never touches the store",
				fset.Position(sel.Pos()), m.FullName(), m.Type())
		}
	}
}

// listed is what go list says of one package.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
}

// goList lists pkg and its dependencies with their export data.
func goList(t *testing.T, pkg string) map[string]*listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-export", "-json=ImportPath,Dir,GoFiles,Export", pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs := make(map[string]*listed)
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		p := new(listed)
		if err := dec.Decode(p); err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}
