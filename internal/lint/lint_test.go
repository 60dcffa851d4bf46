package lint

import (
	"os/exec"
	"strings"
	"testing"
)

// allowed says which packages may import a third-party or layer package.
// Dependencies point one way: cmd/memfs -> memfs (the engine) -> fsnode,
// extwatch, search/live -> session -> backend <- backend/*; redact, changes and
// journal are leaves. The command wires nothing itself: it reaches
// fsnode, the journal and the session's plumbing only through the engine.
var allowed = map[string][]string{
	"github.com/memfs/memfs/internal/await": {}, // tests only: it imports testing
	"github.com/hanwen/go-fuse/v2":          {"github.com/memfs/memfs/fsnode"},
	"github.com/dgraph-io/badger/v4":        {"github.com/memfs/memfs/backend/badgerstore"},
	"github.com/urfave/cli/v2":              {"github.com/memfs/memfs/cmd/memfs"},
	"github.com/memfs/memfs/fsnode":         {engine},
	"github.com/memfs/memfs/journal":        {"github.com/memfs/memfs/session", engine},
	"github.com/memfs/memfs/session":        {"github.com/memfs/memfs/fsnode", "github.com/memfs/memfs/extwatch", "github.com/memfs/memfs/search/live", engine, "github.com/memfs/memfs/cmd/memfs"},
	"github.com/memfs/memfs/extwatch":       {engine, "github.com/memfs/memfs/cmd/memfs"},                                                                                                                  // the command is the helper process (extwatch.RunHelper)
	"github.com/memfs/memfs/redact":         {"github.com/memfs/memfs/session", "github.com/memfs/memfs/search/live", "github.com/memfs/memfs/internal/names", engine, "github.com/memfs/memfs/cmd/memfs"}, // a leaf the session calls
	"github.com/memfs/memfs/changes":        {"github.com/memfs/memfs/fsnode"},
	"github.com/fsnotify/fsnotify":          {"github.com/memfs/memfs/backend/dirstore"}, // behind backend.Watcher
	"github.com/memfs/memfs/backend/":       {"github.com/memfs/memfs/cmd/memfs"},        // concrete backends: only the CLI picks one
	// store specs: each store exports its factory; the CLI registers them (in one file: TestCommandNamesStoresInOneFile)
	// (route opens a route's store by its spec, through the CLI's registry)
	"github.com/memfs/memfs/backend/location": {"github.com/memfs/memfs/cmd/memfs", "github.com/memfs/memfs/backend/badgerstore",
		"github.com/memfs/memfs/backend/dirstore", "github.com/memfs/memfs/backend/etcdstore", "github.com/memfs/memfs/backend/memstore", "github.com/memfs/memfs/route"},
	// A running mount is reached through mountclient alone; status, the
	// format of .memfs/status, is a leaf anyone may read. The engine
	// reads no mount table; it names who keeps a mountpoint busy
	// (mountinfo.MountUsers).
	"github.com/memfs/memfs/mountclient":        {"github.com/memfs/memfs/cmd/memfs", "github.com/memfs/memfs/internal/mounthelper", "github.com/memfs/memfs/mcpserver", "github.com/memfs/memfs/memorytool"}, // the other doors serve through a mount
	"github.com/memfs/memfs/internal/mountinfo": {"github.com/memfs/memfs/mountclient", "github.com/memfs/memfs/cmd/memfs", engine},

	// MCP has one door: mcpserver serves it, mcptest drives it in tests.
	"github.com/modelcontextprotocol/go-sdk": {"github.com/memfs/memfs/mcpserver", "github.com/memfs/memfs/internal/mcptest"},

	// Chunk boundaries have one owner: history's manifests name them.
	"github.com/PlakarKorp/go-cdc-chunkers": {"github.com/memfs/memfs/history"},
}

// engine is the module's root package, the engine (package memfs).
const engine = "github.com/memfs/memfs"

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
				if prefix == "github.com/memfs/memfs/backend/" && imp == "github.com/memfs/memfs/backend/location" {
					continue // its own rule
				}
				if prefix == "github.com/memfs/memfs/backend/" && pkg == "github.com/memfs/memfs/search/internal/searchtest" {
					continue // a test helper: the memory store search's tests share
				}
				if prefix == "github.com/memfs/memfs/backend/" && pkg == "github.com/memfs/memfs/internal/mounttest" {
					continue // a test helper: a dir-store mount the other doors' tests share
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

// isSelf reports whether pkg and imp are one package or one is under the
// other (backend/dirstore and backend); the engine, at the module's root,
// is under nothing and has nothing under it.
func isSelf(pkg, imp string) bool {
	if pkg == engine || imp == engine {
		return pkg == imp
	}
	return pkg == imp || strings.HasPrefix(pkg, imp+"/") || strings.HasPrefix(imp, pkg+"/")
}
