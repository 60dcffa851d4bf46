package session_test

import (
	"io/fs"
	"testing"

	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/session"
)

// A chmod to the mode a file has, or a setxattr of the value an attribute
// has, changes nothing: no dirty file, no new version in the store. On a
// shared store, such a save was another writer's change to whoever
// renamed or removed the file meanwhile (a conflict, and a copy left
// behind), and a version of nothing in the history.
func TestNoOpAttrChangesNothing(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	const key = "memory/global.md"
	st, err := c.Stat(key)
	if err != nil {
		t.Fatal(err)
	}
	same := st.Mode.Perm()
	if _, err := c.SetAttr(t.Context(), key, session.Attr{Mode: &same}); err != nil {
		t.Fatal(err)
	}
	if _, _, dirty, _ := c.Stats().Counts(); dirty != 0 {
		t.Errorf("a chmod to the mode the file has left %d dirty", dirty)
	}
	if err := c.XAttrs().Set(t.Context(), key, meta.Tags, []byte("go"), 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.XAttrs().Set(t.Context(), key, meta.Tags, []byte("go"), 0); err != nil {
		t.Fatal(err)
	}
	if _, _, dirty, _ := c.Stats().Counts(); dirty != 0 {
		t.Errorf("a setxattr of the value the attribute has left %d dirty", dirty)
	}
	other := fs.FileMode(0o600)
	if _, err := c.SetAttr(t.Context(), key, session.Attr{Mode: &other}); err != nil {
		t.Fatal(err)
	}
	if _, _, dirty, _ := c.Stats().Counts(); dirty != 1 {
		t.Errorf("a chmod to another mode left %d dirty, want 1", dirty)
	}
}
