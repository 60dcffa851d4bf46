package fsnode_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/memfs/memfs/internal/await"
)

// recorder watches a tree recursively, as fsnotify users do: a directory
// that appears is watched too.
type recorder struct {
	root string
	w    *fsnotify.Watcher
	mu   sync.Mutex // guards events
	evs  []string
	done chan struct{}
}

func watchTree(t *testing.T, root string) *recorder {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{root: root, w: w, done: make(chan struct{})}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			w.Add(p)
		}
		return nil
	})
	go r.run()
	t.Cleanup(func() { r.w.Close(); <-r.done })
	return r
}

func (r *recorder) run() {
	defer close(r.done)
	for {
		select {
		case ev, ok := <-r.w.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					r.w.Add(ev.Name)
				}
			}
			rel, _ := filepath.Rel(r.root, ev.Name)
			r.mu.Lock()
			r.evs = append(r.evs, rel+" "+ev.Op.String())
			r.mu.Unlock()
		case _, ok := <-r.w.Errors:
			if !ok {
				return
			}
		}
	}
}

func (r *recorder) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.evs)
}

// TestFsnotifyMatchesNative runs the same operations on the mount and on a
// native directory, each watched recursively with fsnotify, and compares
// the events: what a watcher sees on memfs is what it sees on a disk.
func TestFsnotifyMatchesNative(t *testing.T) {
	m := mount(t, newDirStore(t, t.TempDir()), mountConfig{})
	roots := []string{filepath.Join(m.dir, "w"), filepath.Join(t.TempDir(), "w")}
	var recs []*recorder
	for _, r := range roots {
		if err := os.MkdirAll(filepath.Join(r, "notes"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(r, "notes/old.md"), []byte("old\n"), 0o644)
		recs = append(recs, watchTree(t, r))
	}
	ops := []struct {
		name string
		fn   func(root string) error
		want string // an event the op must make on each side before the next (a new directory's watch)
	}{
		{"create", func(r string) error { return os.WriteFile(filepath.Join(r, "notes/a.md"), []byte("a\n"), 0o644) }, ""},
		{"write", func(r string) error {
			f, err := os.OpenFile(filepath.Join(r, "notes/a.md"), os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			f.WriteAt([]byte("A"), 0)
			return f.Close()
		}, ""},
		{"append", func(r string) error {
			f, err := os.OpenFile(filepath.Join(r, "notes/a.md"), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			f.Write([]byte("more\n"))
			return f.Close()
		}, ""},
		{"truncate", func(r string) error { return os.Truncate(filepath.Join(r, "notes/a.md"), 1) }, ""},
		{"chmod", func(r string) error { return os.Chmod(filepath.Join(r, "notes/a.md"), 0o600) }, ""},
		{"rename file", func(r string) error { return os.Rename(filepath.Join(r, "notes/a.md"), filepath.Join(r, "notes/b.md")) }, ""},
		{"mkdir", func(r string) error { return os.Mkdir(filepath.Join(r, "sub"), 0o755) }, "sub CREATE"},
		{"create in new dir", func(r string) error { return os.WriteFile(filepath.Join(r, "sub/c.md"), []byte("c"), 0o644) }, ""},
		{"rename dir", func(r string) error { return os.Rename(filepath.Join(r, "sub"), filepath.Join(r, "moved")) }, ""},
		{"editor save", func(r string) error {
			tmp := filepath.Join(r, "notes/.old.md.tmp")
			if err := os.WriteFile(tmp, []byte("new\n"), 0o644); err != nil {
				return err
			}
			return os.Rename(tmp, filepath.Join(r, "notes/old.md"))
		}, ""},
		{"remove", func(r string) error { return os.Remove(filepath.Join(r, "notes/b.md")) }, ""},
		// One level a step: a recursive watcher adds a watch on a new
		// directory only after it saw it appear.
		{"mkdir tree", func(r string) error { return os.Mkdir(filepath.Join(r, "tree"), 0o755) }, "tree CREATE"},
		{"mkdir tree/deep", func(r string) error { return os.Mkdir(filepath.Join(r, "tree/deep"), 0o755) }, "tree/deep CREATE"},
		{"create deep", func(r string) error { return os.WriteFile(filepath.Join(r, "tree/deep/x.md"), []byte("x"), 0o644) }, ""},
		// Not "moved": after a directory rename, which path fsnotify
		// reports for the old watch depends on its own bookkeeping race.
		{"remove tree", func(r string) error { return os.RemoveAll(filepath.Join(r, "tree")) }, ""},
	}
	counts := func() (int, int) { return len(recs[0].events()), len(recs[1].events()) }
	for _, op := range ops {
		n0, n1 := counts()
		for _, r := range roots {
			if err := op.fn(r); err != nil {
				t.Fatalf("%s on %s: %v", op.name, r, err)
			}
		}
		// Every op makes an event on each side. Its first one heard
		// means a new directory is watched (run adds the watch before it
		// records the event), so the next op's events in it are heard.
		// A late event of an earlier op must not stand for the creation
		// of a directory the next op writes in: that one is waited for.
		heard := func(rec *recorder, n int) bool {
			evs := rec.events()
			return len(evs) > n && (op.want == "" || slices.Contains(evs[n:], op.want))
		}
		if !await.Cond(10*time.Second, time.Millisecond, func() bool { return heard(recs[0], n0) && heard(recs[1], n1) }) {
			m0, m1 := counts()
			t.Fatalf("%s: no event within 10 s (memfs %d -> %d, native %d -> %d)", op.name, n0, m0, n1, m1)
		}
	}
	// A last file is a barrier: one watcher's events come in order, so a
	// recorder that has its event has every earlier one.
	for _, r := range roots {
		if err := os.WriteFile(filepath.Join(r, "end.md"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	heardEnd := func(r *recorder) bool { return slices.Contains(r.events(), "end.md CREATE") }
	if !await.Cond(10*time.Second, time.Millisecond, func() bool { return heardEnd(recs[0]) && heardEnd(recs[1]) }) {
		t.Fatalf("the last file's CREATE not heard within 10 s (memfs %v, native %v)", heardEnd(recs[0]), heardEnd(recs[1]))
	}
	// inotify merges an event with the one before it when that one is
	// still unread and the same (inotify(7)): how many WRITEs of one
	// file in a row a watcher reads depends on how fast it reads, on
	// either side. Runs of the same event count once.
	got, want := slices.Compact(recs[0].events()), slices.Compact(recs[1].events())
	if len(want) < len(ops) {
		t.Fatalf("the native directory gave only %d events: %v", len(want), want)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("fsnotify events differ\nmemfs:  %s\nnative: %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
	t.Logf("%d events, identical on memfs and on a native directory", len(got))
}
