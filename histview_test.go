package memfs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
)

// The engine's part of the view: mkdir in .memfs/snapshots flushes, then
// names the event log's head; .memfs/history lists the names events
// named, a deleted one too; .memfs/at goes up to the head, not past it.
func TestMountHistoryEngine(t *testing.T) {
	needFUSE(t)
	store, mnt := t.TempDir(), t.TempDir()
	f := openBadger(t, store, false)
	s := serve(t, f, mnt, memfs.MountOptions{})
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	for _, n := range []string{"a.md", "gone.md"} {
		if err := os.WriteFile(p("memory/"+n), []byte(n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p("memory/gone.md")); err != nil {
		t.Fatal(err)
	}
	// Unflushed: the snapshot's flush records the delete before the head.
	if err := os.Mkdir(p(".memfs/snapshots/s1"), 0o755); err != nil {
		t.Fatal(err)
	}
	pg, err := f.Events().Query(t.Context(), eventlog.Query{Limit: 1})
	if err != nil || len(pg.Events) != 1 || pg.Events[0].Op != eventlog.OpDelete {
		t.Fatalf("the log's last event: %+v, %v; want the delete the snapshot flushed", pg.Events, err)
	}
	head := pg.Events[0].Seq
	snap, err := history.New(f.Store()).ResolveSnapshot(t.Context(), "s1")
	if err != nil || snap.Seq != head {
		t.Fatalf("snapshot s1: %+v, %v; want seq %d", snap, err, head)
	}
	ents, err := os.ReadDir(p(".memfs/history/memory"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Contains(names, "gone.md") || !slices.Contains(names, "a.md") {
		t.Errorf("ls .memfs/history/memory = %v; want a.md and the deleted gone.md", names)
	}
	if _, err := os.Stat(p(".memfs/at/" + strconv.FormatUint(head, 10))); err != nil {
		t.Errorf("stat .memfs/at/HEAD: %v", err)
	}
	if _, err := os.Stat(p(".memfs/at/" + strconv.FormatUint(head+1, 10))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat .memfs/at/HEAD+1: %v, want ENOENT", err)
	}
	s.stop(t)
	if err := f.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// A listing of a key's versions between a flush's append and its version
// records (the append moves the head first) must not stay: once the
// versions are written, the idle mount lists the new one.
func TestMountHistoryListedBeforeVersions(t *testing.T) {
	needFUSE(t)
	store, mnt := t.TempDir(), t.TempDir()
	inner, err := badgerstore.Open(store, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var armed atomic.Bool
	versionsDir := filepath.Join(mnt, ".memfs/history/memory/a.md")
	var inWindow []string
	st := errorstore.Wrap(inner, func(op errorstore.Op, keys []string) error {
		if op != errorstore.OpSaveSys && op != errorstore.OpSwapSys {
			return nil
		}
		for _, k := range keys {
			if strings.HasPrefix(k, "history/v/") && armed.CompareAndSwap(true, false) {
				inWindow = dirNames(t, versionsDir) // the flush waits: the append is done, the versions not
			}
		}
		return nil
	})
	opts := histOpts(filepath.Join(store, badgerstore.JournalName))
	opts.Namespace = true
	f, err := memfs.Open(t.Context(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, f, mnt, memfs.MountOptions{})
	for i, v := range []string{"one\n", "two\n"} {
		if err := os.WriteFile(filepath.Join(mnt, "memory/a.md"), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		armed.Store(i == 1)
		if err := f.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if armed.Load() || len(inWindow) == 0 {
		t.Fatalf("the second flush wrote no version record (listed %v)", inWindow)
	}
	seq := strconv.FormatUint(logHead(t, f), 10)
	if got := dirNames(t, versionsDir); !slices.ContainsFunc(got, func(n string) bool { return strings.TrimLeft(n, "0") == seq }) {
		t.Errorf("ls %s after the flush = %v (in the window: %v); want the version at seq %s", versionsDir, got, inWindow, seq)
	}
	s.stop(t)
	if err := f.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Error(err)
		return nil
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
