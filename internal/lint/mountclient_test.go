package lint

import "testing"

// mountclient reaches a mount from another process: it reads and writes
// files through the kernel and never opens a store itself, so it must not
// link the engine (package memfs), which brings the session, the search
// service and every capability with it. What it shares with the engine
// lives in leaf packages (status, tree, contextpack, internal/mountinfo).
func TestMountClientLinksNoEngine(t *testing.T) {
	const engine = "github.com/memfs/memfs"
	for _, dep := range nonStandardDeps(t, "github.com/memfs/memfs/mountclient") {
		if dep == engine {
			t.Errorf("mountclient links the engine %s; move what it needs into a leaf package", engine)
		}
	}
}
