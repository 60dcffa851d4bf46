package memfs_test

import (
	"slices"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/session"
)

// TestListAndRemoveTree: List gives every node under a prefix sorted,
// with a symlink's target; RemoveTree removes the files, then the
// directories children first, and keeps a hard link's other name whole.
func TestListAndRemoveTree(t *testing.T) {
	ctx := t.Context()
	c := session.NewContext(memstore.New(), session.Options{})
	put := func(key, value string) {
		t.Helper()
		if err := c.Put(backend.Entry{Key: key, Value: []byte(value), Info: backend.Info{Mode: 0o644, MTime: time.Now()}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"a", "a/b"} {
		if err := c.Mkdir(d, 0o755, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	put("a/b/f", "x")
	put("a/g", "linked")
	put("keep", "y")
	if err := c.Link(ctx, "a/g", "h"); err != nil {
		t.Fatal(err)
	}
	if err := c.Symlink(ctx, "a/s", "../keep", 0, 0); err != nil {
		t.Fatal(err)
	}
	entries, err := memfs.List(ctx, c, "a")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range entries {
		keys = append(keys, e.Key)
		if e.Key == "a/s" && string(e.Value) != "../keep" {
			t.Errorf("List: a/s carries %q, want its target", e.Value)
		}
	}
	if want := []string{"a", "a/b", "a/b/f", "a/g", "a/s"}; !slices.Equal(keys, want) {
		t.Errorf("List(a) = %q, want %q", keys, want)
	}
	n, err := memfs.RemoveTree(ctx, c, "a")
	if err != nil || n != 5 {
		t.Fatalf("RemoveTree(a) = %d, %v; want 5 names removed", n, err)
	}
	if left := c.Keys(); !slices.Equal(left, []string{"h", "keep"}) {
		t.Errorf("keys after RemoveTree = %q, want h and keep", left)
	}
	if err := c.Resolve(ctx, "h"); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get("h"); string(v) != "linked" {
		t.Errorf("the other name of a removed hard link holds %q, want its value", v)
	}
}
