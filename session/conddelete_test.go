package session_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/session"
)

// TestFallbackDeletesAreConditional: when a shared store refuses a
// policy's flush as one batch (for a reason of its own, or a unit larger
// than one transaction: a renamed file's save with the delete of its old
// key), the flush goes on key by key, and the delete of the old key there
// still expects the version it removes: another writer's save of the key
// since stays.
func TestFallbackDeletesAreConditional(t *testing.T) {
	const gone, moved, other = "memory/gone.md", "memory/moved.md", "memory/other.md"
	for _, tt := range []struct {
		name   string
		refuse func(op errorstore.Op, keys []string) error
	}{
		{"refused batch", func(op errorstore.Op, keys []string) error {
			if op == errorstore.OpApply && len(keys) > 1 {
				return errors.New("test: the store refuses the batch")
			}
			return nil
		}},
		{"unit too large", func(op errorstore.Op, keys []string) error {
			if op == errorstore.OpApply && (len(keys) > 1 || slices.Contains(keys, moved)) {
				return fmt.Errorf("test: %w", backend.ErrBatchTooLarge)
			}
			return nil
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem := memstore.New()
			w := mem.Other()
			if err := w.Set(gone, []byte("base\n")); err != nil {
				t.Fatal(err)
			}
			st := errorstore.Wrap(mem, nil)
			c, _ := policySession(t, st, session.KeepBoth, nil)
			if err := c.Rename(t.Context(), gone, moved, 0); err != nil {
				t.Fatal(err)
			}
			if err := c.Set(other, []byte("ours\n")); err != nil {
				t.Fatal(err)
			}
			if err := w.Set(gone, []byte("theirs\n")); err != nil {
				t.Fatal(err)
			}
			st.SetInject(tt.refuse)
			c.Flush(t.Context())
			st.SetInject(nil)
			all := stored(t, mem)
			if all[gone] != "theirs\n" {
				t.Errorf("store %s = %q after the flush, want theirs (their save kept)", gone, all[gone])
			}
			showsTheirs(t, c, gone)
			if all[other] != "ours\n" || all[moved] != "base\n" {
				t.Errorf("store %s = %q, %s = %q; want ours, base", other, all[other], moved, all[moved])
			}
		})
	}
}

// TestKeepBothShowsTheirDirectoryAndSymlink: under keep-both, when the
// other writer's version of a key is a directory or a symlink, ours moves
// to a conflict copy and theirs takes the name in the session at once
// (the model test found a directory shown only after a remount).
func TestKeepBothShowsTheirDirectoryAndSymlink(t *testing.T) {
	mem := memstore.New()
	a, _ := policySession(t, mem, session.KeepBoth, nil)
	b, _ := policySession(t, mem, session.KeepBoth, nil)
	if err := b.Mkdir("d", 0o750, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Symlink(t.Context(), "l", "target", 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"d", "l"} {
		if err := a.Set(k, []byte("ours\n")); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st, err := a.Stat("d"); err != nil || !st.IsDir || st.Mode.Perm() != 0o750 {
		t.Errorf("d in the session: %+v, %v; want their directory, 0750", st, err)
	}
	if target, err := a.Readlink(t.Context(), "l"); err != nil || target != "target" {
		t.Errorf("l in the session: %q, %v; want their symlink to target", target, err)
	}
	if n := len(conflictCopies(stored(t, mem), "d")) + len(conflictCopies(stored(t, mem), "l")); n != 2 {
		t.Errorf("%d conflict copies of ours, want 2", n)
	}
}

// TestExternalChangeOfANodesType: another writer replaced a node with one
// of another type (a directory with a file, a file with a directory or a
// symlink); the session's node, unchanged since the store had it, gives
// way at once (the model test found a mount still showing the directory
// another mount had replaced).
func TestExternalChangeOfANodesType(t *testing.T) {
	mem := memstore.New()
	mtime := time.Unix(1700000000, 0)
	if err := mem.Save(t.Context(),
		backend.Entry{Key: "d", Info: backend.Info{Mode: fs.ModeDir | 0o755, MTime: mtime}},
		backend.Entry{Key: "f", Value: []byte("ours\n"), Info: backend.Info{Mode: 0o644, MTime: mtime}},
		backend.Entry{Key: "g", Value: []byte("ours\n"), Info: backend.Info{Mode: 0o644, MTime: mtime}}); err != nil {
		t.Fatal(err)
	}
	c, _ := policySession(t, mem, session.KeepBoth, nil)
	x := c.External()
	if _, err := x.Apply(backend.Entry{Key: "d", Value: []byte("theirs\n"), Info: backend.Info{Mode: 0o644, MTime: mtime}}); err != nil {
		t.Fatal(err)
	}
	if err := x.ApplyDir("f", backend.Info{Mode: fs.ModeDir | 0o700, MTime: mtime}); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Apply(backend.Entry{Key: "g", Value: []byte("d"), Info: backend.Info{Mode: fs.ModeSymlink | 0o777, MTime: mtime}}); err != nil {
		t.Fatal(err)
	}
	if v, ok := c.Get("d"); !ok || string(v) != "theirs\n" {
		t.Errorf("d = %q, %v; want their file", v, ok)
	}
	if st, err := c.Stat("f"); err != nil || !st.IsDir {
		t.Errorf("f: %+v, %v; want their directory", st, err)
	}
	if target, err := c.Readlink(t.Context(), "g"); err != nil || target != "d" {
		t.Errorf("g: %q, %v; want their symlink", target, err)
	}
}

// TestKeepBothTheirDirectoryOverOurLinkedFile: under keep-both, when the
// other writer replaced one name of a node with hard links by a
// directory, and ours changed the node unflushed, their directory takes
// the name, our node keeps its other names, and a conflict copy of ours
// is a regular file (the two-writer model found the directory kept
// beside as a file with a directory's mode: a record no store can show).
func TestKeepBothTheirDirectoryOverOurLinkedFile(t *testing.T) {
	mem := memstore.New()
	a, _ := policySession(t, mem, session.KeepBoth, nil)
	if err := a.Set("n", []byte("base\n")); err != nil {
		t.Fatal(err)
	}
	if err := a.Link(t.Context(), "n", "m"); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	b, _ := policySession(t, mem, session.KeepBoth, nil)
	if err := b.Delete("n"); err != nil {
		t.Fatal(err)
	}
	if err := b.Mkdir("n", 0o750, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := a.Set("n", []byte("ours\n")); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st, err := a.Stat("n"); err != nil || !st.IsDir || st.Mode.Perm() != 0o750 {
		t.Errorf("n in the session: %+v, %v; want their directory, 0750", st, err)
	}
	if v, _ := a.Get("m"); string(v) != "ours\n" {
		t.Errorf("m in the session: %q, want ours", v)
	}
	es, err := mem.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	copies := 0
	for _, e := range es {
		if strings.HasPrefix(e.Key, "n.conflict-") {
			copies++
			got, err := mem.Load(t.Context(), e.Key)
			if err != nil || !e.Info.Mode.IsRegular() || string(got[0].Value) != "ours\n" {
				t.Errorf("conflict copy %s in the store: %v, %v; want a regular file holding ours", e.Key, e.Info.Mode, err)
			}
		}
	}
	if copies != 1 {
		t.Errorf("%d conflict copies of n in the store, want 1", copies)
	}
	for _, k := range a.Keys() {
		if st, err := a.Stat(k); err == nil && !st.IsDir && st.Mode.IsDir() {
			t.Errorf("%s in the session: a file with a directory's mode %v", k, st.Mode)
		}
	}
}

// A directory made and removed between two flushes never reached the
// store; the flush's delete of its key must not take another program's
// file made there meanwhile. The two-writer model's seed 3610 (dir)
// found that file gone: the delete of a key with no version the session
// saw ran whatever the key held.
func TestRemovedNewDirectoryLeavesTheirFile(t *testing.T) {
	dir := t.TempDir()
	c, st := reopen(t, nodeStores[0].open, dir, session.Options{})
	defer st.Close()
	if err := c.Mkdir("n1", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Rmdir("n1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "n1"), []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "n1")); err != nil || string(b) != "theirs" {
		t.Fatalf("their n1 after the flush: %q, %v", b, err)
	}
}
