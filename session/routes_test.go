package session_test

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/session"
)

// scratchRoutes is a mount's routes as the session sees them: scratch/
// is working memory, team/ read-only.
type scratchRoutes struct{}

func (scratchRoutes) Refuse(op, key string) error {
	if strings.HasPrefix(key, "team/") {
		return &fs.PathError{Op: op, Path: key, Err: backend.ErrReadOnly}
	}
	return nil
}
func (scratchRoutes) Move(op, a, b string) error { return nil }
func (scratchRoutes) Ephemeral(key string) bool  { return strings.HasPrefix(key, "scratch/") }
func (scratchRoutes) ReadOnly(key string) bool   { return strings.HasPrefix(key, "team/") }

// TestWorkingMemoryIsSealedForNoDisk: what the session hands over to be
// kept on disk when a flush fails (Pending.Sealed: the recovery directory)
// holds no working memory; a read-only route refuses a change.
func TestWorkingMemoryIsSealedForNoDisk(t *testing.T) {
	c := session.NewContext(memstore.New(), session.Options{Routes: scratchRoutes{}})
	for _, k := range []string{"scratch/a.md", "memory/a.md"} {
		if err := c.Set(k, []byte("value of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	for _, e := range c.Pending().Sealed() {
		keys = append(keys, e.Key)
	}
	if strings.Join(keys, " ") != "memory/a.md" {
		t.Errorf("Sealed gave %v, want memory/a.md only", keys)
	}
	if err := c.Set("team/x.md", []byte("x")); !errors.Is(err, backend.ErrReadOnly) {
		t.Errorf("a write in a read-only route: %v", err)
	}
}

// TestFilesWith: the files with any of the named attributes, and no
// other.
func TestFilesWith(t *testing.T) {
	c := session.NewContext(memstore.New(), session.Options{})
	for _, k := range []string{"memory/a.md", "memory/b.md", "memory/c.md"} {
		if err := c.Set(k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.XAttrs().Set(t.Context(), "memory/a.md", "user.memfs.ttl", []byte("1h"), 0); err != nil {
		t.Fatal(err)
	}
	if err := c.XAttrs().Set(t.Context(), "memory/c.md", "user.memfs.expires", []byte("2030-01-01T00:00:00Z"), 0); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range c.XAttrs().FilesWith("user.memfs.ttl", "user.memfs.expires") {
		keys = append(keys, e.Key)
	}
	slices.Sort(keys)
	if strings.Join(keys, " ") != "memory/a.md memory/c.md" {
		t.Errorf("FilesWith = %v", keys)
	}
}
