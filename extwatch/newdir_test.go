package extwatch_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/extwatch"
	"github.com/memfs/memfs/session"
)

// dirsApplier is a fakeApplier that, at each create it is asked for,
// records what the session holds of the directories above the key.
type dirsApplier struct {
	*fakeApplier
	c     *session.Context  // guarded by mu, as above
	above map[string]string // key -> what the session held above it
}

func (a *dirsApplier) Create(key string, mode fs.FileMode) error {
	a.mu.Lock()
	c := a.c
	a.mu.Unlock()
	var held string
	for p, _ := backend.Split(key); p != "memory"; p, _ = backend.Split(p) {
		st, err := c.Stat(p)
		held = fmt.Sprintf("%s %v dirty=%v %v; ", p, st.Mode, st.Dirty, err) + held
	}
	a.mu.Lock()
	a.above[key] = held
	a.mu.Unlock()
	return a.fakeApplier.Create(key, mode)
}

// TestNewDirsBeforeTheirFiles: a directory tree another program moves
// into the store (a sync tool, a git checkout) is reported as its top
// directory and its files, never its inner directories, in no set order.
// Each directory above a file is in the session, clean and with the
// store's mode, before the helper is asked to create the file: its
// create through the mount would otherwise make them as the helper's own
// mkdirs (changes to flush, with the helper's mode, and EROFS in a
// read-only route), and the kernel's cached listing above them would
// never be refreshed.
func TestNewDirsBeforeTheirFiles(t *testing.T) {
	app := &dirsApplier{fakeApplier: &fakeApplier{}, above: map[string]string{}}
	seen := newProcessed()
	dir, c := startWatched(t, extwatch.Options{Applier: app, OnProcessed: func(k string) { seen.add(k, "*") }})
	app.mu.Lock()
	app.c = c
	app.mu.Unlock()
	// The first reconcile is over once a change made after it started
	// is processed: the tree below comes through the feed alone.
	os.WriteFile(filepath.Join(dir, "memory", "first.md"), []byte("first"), 0o644)
	if !seen.wait("memory/first.md", "*", 5*time.Second) {
		t.Fatal("the watcher never processed memory/first.md")
	}

	// Made outside the store, then moved in whole.
	tree := filepath.Join(t.TempDir(), "x")
	if err := os.MkdirAll(filepath.Join(tree, "y", "z"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tree, "y", "z", "f.md"), []byte("deep"), 0o644)
	for _, d := range []string{"y/z", "y", "."} {
		if err := os.Chmod(filepath.Join(tree, d), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(tree, filepath.Join(dir, "memory", "x")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the create of memory/x/y/z/f.md sent to the helper", func() bool {
		app.mu.Lock()
		defer app.mu.Unlock()
		_, ok := app.above["memory/x/y/z/f.md"]
		return ok
	})
	want := []string{"mkdir memory/x", "mkdir memory/x/y", "mkdir memory/x/y/z", "create memory/x/y/z/f.md"}
	if got := app.calls()[1:]; !slices.Equal(got, want) {
		t.Errorf("the helper was asked %q, want %q", got, want)
	}
}
