package session_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/session"
)

// restoreExternally writes key into the directory store at dir as
// another program would restore it (cp -p, rsync -a): the bytes, mode
// mtime and attributes of info. It returns the store's listing of the key.
func restoreExternally(t *testing.T, st backend.Store, dir, key, value string, info backend.Info) backend.Entry {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	if err := os.WriteFile(p, []byte(value), info.Mode.Perm()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, info.Mode.Perm()); err != nil {
		t.Fatal(err)
	}
	for name, v := range info.XAttrs {
		if err := unix.Setxattr(p, name, v, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(p, info.MTime, info.MTime); err != nil {
		t.Fatal(err)
	}
	listed, err := st.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range listed {
		if e.Key == key {
			return e
		}
	}
	t.Fatalf("the store does not list %s", key)
	return backend.Entry{}
}

// A file memfs wrote and then deleted, restored later by another program
// with the same bytes, mode and mtime, is that program's: memfs's echo
// stamps of the key end with the delete (issue 26).
func TestEchoForgetsDeletedKey(t *testing.T) {
	c, st, _, dir := newSession(t, session.Options{})
	const key, value = "memory/restored.md", "restored\n"
	c.Set(key, []byte(value))
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	stored, err := st.Load(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(key); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok := storedValue(t, st, key); ok {
		t.Fatal("the flush did not delete the key")
	}
	e := restoreExternally(t, st, dir, key, value, stored[0].Info)
	if c.External().Echo(key, e.Info) {
		t.Fatal("another program's restore of a key memfs deleted is taken for memfs's own write")
	}
}

// A delete the store refuses (another program rewrote the file between
// the session's remove and its flush: their version stays) is reported
// nowhere as a delete: neither the event log nor Options.Saved name it,
// and the store keeps their version (issue 26).
func TestRefusedDeleteIsNoDelete(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	seed(t, st, sample)
	var deleted []string
	var events []session.Event
	c := session.NewContext(st, session.Options{
		Saved: func(_ context.Context, _ []backend.Entry, d []string) { deleted = append(deleted, d...) },
		Events: func(_ context.Context, evs []session.Event) error {
			events = append(events, evs...)
			return nil
		},
	})
	if err := c.Bootstrap(t.Context(), "memory/"); err != nil {
		t.Fatal(err)
	}
	const key = "memory/global.md"
	if err := c.Delete(key); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(key)), []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, ok := storedValue(t, st, key); !ok || v != "theirs\n" {
		t.Fatalf("the store holds %q, %v: the other writer's version is lost", v, ok)
	}
	if slices.Contains(deleted, key) {
		t.Errorf("Options.Saved was told %s was deleted: %v", key, deleted)
	}
	for _, ev := range events {
		if ev.Op == session.EventDelete && ev.Key == key {
			t.Errorf("a delete event for %s, which the store kept", key)
		}
	}
	if c.Pending().Dirty(key) {
		t.Errorf("%s is still dirty: the next flush would delete it again", key)
	}
	showsTheirs(t, c, key)
}

// showsTheirs fails unless the session, which no watcher follows, shows
// the other writer's version of key that its flush's delete left.
func showsTheirs(t *testing.T, c *session.Context, key string) {
	t.Helper()
	if v, ok := c.Get(key); !ok || string(v) != "theirs\n" {
		t.Errorf("the session shows %s = %q, %v after the flush; want the other writer's version, kept by the store", key, v, ok)
	}
}

// A key a name left without the store holding the session's version
// there (a file made and renamed before any flush; renamed and then
// removed under its new name) is deleted expecting it absent: another
// program's file written there meanwhile stays (issue 26).
func TestVacatedKeyDeleteExpectsAbsent(t *testing.T) {
	tests := []struct {
		name   string
		vacate func(t *testing.T, c *session.Context) string // returns the vacated key
	}{
		{"made and renamed", func(t *testing.T, c *session.Context) string {
			c.Set("memory/new.md", []byte("mine\n"))
			if err := c.Rename(t.Context(), "memory/new.md", "memory/moved.md", 0); err != nil {
				t.Fatal(err)
			}
			return "memory/new.md"
		}},
		{"renamed and removed", func(t *testing.T, c *session.Context) string {
			if err := c.Rename(t.Context(), "memory/global.md", "memory/moved.md", 0); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete("memory/moved.md"); err != nil {
				t.Fatal(err)
			}
			return "memory/moved.md"
		}},
		// A name of a stored node with hard links that the store never
		// held (linked after the last flush) holds none of its versions.
		{"linked name made and renamed", func(t *testing.T, c *session.Context) string {
			storedGroup(t, c)
			if err := c.Link(t.Context(), "memory/global.md", "memory/l2.md"); err != nil {
				t.Fatal(err)
			}
			if err := c.Rename(t.Context(), "memory/l2.md", "memory/l3.md", 0); err != nil {
				t.Fatal(err)
			}
			return "memory/l2.md"
		}},
		{"linked name made and removed", func(t *testing.T, c *session.Context) string {
			storedGroup(t, c)
			if err := c.Link(t.Context(), "memory/global.md", "memory/l2.md"); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete("memory/l2.md"); err != nil {
				t.Fatal(err)
			}
			return "memory/l2.md"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			st := openStore(t, dir)
			seed(t, st, sample)
			c := session.NewContext(st, session.Options{})
			if err := c.Bootstrap(t.Context(), "memory/"); err != nil {
				t.Fatal(err)
			}
			key := tt.vacate(t, c)
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(key)), []byte("theirs\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if v, ok := storedValue(t, st, key); !ok || v != "theirs\n" {
				t.Fatalf("the store holds %q, %v at %s: the flush deleted another program's file", v, ok, key)
			}
			showsTheirs(t, c, key)
		})
	}
}

// storedGroup gives memory/global.md a second name, memory/l1.md, and
// flushes: the store holds a node with two names.
func storedGroup(t *testing.T, c *session.Context) {
	t.Helper()
	if err := c.Link(t.Context(), "memory/global.md", "memory/l1.md"); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}
