package lint

import (
	"os/exec"
	"strings"
	"testing"
)

// allowed says which packages may import a third-party or layer package.
// Dependencies point one way: cmd/memfs -> fsnode, extwatch -> session ->
// backend <- backend/*; redact, changes and journal are leaves.
var allowed = map[string][]string{
	"github.com/hanwen/go-fuse/v2":    {"github.com/memfs/memfs/fsnode", "github.com/memfs/memfs/cmd/memfs"},
	"github.com/dgraph-io/badger/v4":  {"github.com/memfs/memfs/backend/badgerstore"},
	"github.com/urfave/cli/v2":        {"github.com/memfs/memfs/cmd/memfs"},
	"github.com/memfs/memfs/fsnode":   {"github.com/memfs/memfs/cmd/memfs"},
	"github.com/memfs/memfs/session":  {"github.com/memfs/memfs/fsnode", "github.com/memfs/memfs/extwatch", "github.com/memfs/memfs/cmd/memfs"},
	"github.com/memfs/memfs/extwatch": {"github.com/memfs/memfs/cmd/memfs"},
	"github.com/memfs/memfs/redact":   {"github.com/memfs/memfs/session", "github.com/memfs/memfs/cmd/memfs"}, // a leaf the session calls
	"github.com/memfs/memfs/changes":  {"github.com/memfs/memfs/fsnode"},
	"github.com/fsnotify/fsnotify":    {"github.com/memfs/memfs/extwatch"},
	"github.com/memfs/memfs/backend/": {"github.com/memfs/memfs/cmd/memfs"}, // concrete backends: only the CLI picks one
}

func TestForbiddenImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/memfs/memfs/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		for _, imp := range imports {
			for prefix, who := range allowed {
				if !matches(imp, prefix) || isSelf(pkg, imp) {
					continue
				}
				if prefix == "github.com/memfs/memfs/backend/" && (imp == "github.com/memfs/memfs/backend/storetest" || imp == "github.com/memfs/memfs/backend/errorstore") {
					continue // test helpers, usable by any test
				}
				ok := false
				for _, w := range who {
					if pkg == w {
						ok = true
					}
				}
				if !ok {
					t.Errorf("%s imports %s; only %v may", pkg, imp, who)
				}
			}
		}
	}
}

func matches(imp, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(imp, prefix)
	}
	return imp == prefix || strings.HasPrefix(imp, prefix+"/")
}

func isSelf(pkg, imp string) bool {
	return pkg == imp || strings.HasPrefix(pkg, imp+"/") || strings.HasPrefix(imp, pkg+"/")
}
