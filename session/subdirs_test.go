package session

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
)

// checkSubdirs compares every directory's subdirs count with its children
// that are directories.
func checkSubdirs(t *testing.T, c *Context, step string) {
	t.Helper()
	c.mu.RLock()
	defer c.mu.RUnlock()
	for key, d := range c.mu.tree.dirs {
		n := 0
		for name := range d.children {
			if _, ok := c.mu.tree.dirs[backend.Join(key, name)]; ok {
				n++
			}
		}
		if d.subdirs != n {
			t.Errorf("after %s: %q counts %d subdirectories, holds %d", step, key, d.subdirs, n)
		}
	}
}

// TestSubdirsCounted checks the count behind a directory's link count
// through every change of the tree: bootstrap (implied and listed
// directories), mkdir, a file making its parents, renames of a directory
// (to another parent, over an empty directory), rmdir.
func TestSubdirsCounted(t *testing.T) {
	st := memstore.New()
	defer st.Close()
	ctx := context.Background()
	mt := time.Unix(1700000000, 0)
	err := st.Save(ctx,
		backend.Entry{Key: "a/b/c.md", Value: []byte("x"), Info: backend.Info{Mode: 0o644, MTime: mt}},
		backend.Entry{Key: "a/d", Info: backend.Info{Mode: fs.ModeDir | 0o755, MTime: mt}},
		backend.Entry{Key: "e", Info: backend.Info{Mode: fs.ModeDir | 0o755, MTime: mt}})
	if err != nil {
		t.Fatal(err)
	}
	c := NewContext(st, Options{})
	if err := c.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	checkSubdirs(t, c, "bootstrap")
	steps := []struct {
		name string
		do   func() error
	}{
		{"mkdir a/x", func() error { return c.Mkdir("a/x", 0o755, 0, 0) }},
		{"mkdir a/x/y", func() error { return c.Mkdir("a/x/y", 0o755, 0, 0) }},
		{"a file making its parents", func() error { return c.Set("p/q/r/s.md", []byte("s")) }},
		{"rename a/x to e/x", func() error { return c.Rename(ctx, "a/x", "e/x", 0) }},
		{"mkdir e/empty", func() error { return c.Mkdir("e/empty", 0o755, 0, 0) }},
		{"rename e/x over e/empty", func() error { return c.Rename(ctx, "e/x", "e/empty", 0) }},
		{"rename e/empty/y to top", func() error { return c.Rename(ctx, "e/empty/y", "y", 0) }},
		{"rmdir y", func() error { return c.Rmdir("y") }},
		{"rmdir e/empty", func() error { return c.Rmdir("e/empty") }},
		{"rename a to z", func() error { return c.Rename(ctx, "a", "z", 0) }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		checkSubdirs(t, c, s.name)
	}
	for key, want := range map[string]uint32{"": 2 + 3, "z": 2 + 2, "e": 2, "p/q": 2 + 1} {
		st, err := c.Stat(key)
		if err != nil || st.Nlink != want {
			t.Errorf("Stat(%q) nlink = %d, %v; want %d", key, st.Nlink, err, want)
		}
	}
}
