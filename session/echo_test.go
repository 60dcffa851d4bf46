package session_test

import (
	"os"
	"path/filepath"
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
