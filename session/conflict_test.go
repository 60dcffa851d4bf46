package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/session"
)

// A save states the version it replaces: another program's write to the
// store that the session has not seen (it landed just before a flush, inside
// the watcher's debounce, or with no watcher at all) is never overwritten
// unseen. The session's version takes the key, the other is kept beside it
// as a conflict copy.
func TestAnExternalWriteBeforeAFlushIsKept(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	seed(t, st, map[string]string{"memory/a.md": "v1\n", "memory/b.md": "b1\n", "memory/c.md": "c1\n"})
	c := session.NewContext(st, session.Options{})
	if err := c.Bootstrap(t.Context(), "memory/"); err != nil {
		t.Fatal(err)
	}
	// The session changes a.md, creates n.md, renames b.md over c.md.
	if err := c.Set("memory/a.md", []byte("memfs's v2\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("memory/n.md", []byte("memfs's new\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Rename(t.Context(), "memory/b.md", "memory/c.md", 0); err != nil {
		t.Fatal(err)
	}
	// Meanwhile another program writes all three in the store.
	later := time.Now().Add(time.Second)
	for name, v := range map[string]string{"a.md": "their v2\n", "n.md": "their new\n", "c.md": "their c2\n"} {
		p := filepath.Join(dir, "memory", name)
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, later, later)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"memory/a.md": "memfs's v2\n", "memory/n.md": "memfs's new\n", "memory/c.md": "b1\n"} {
		if v, _ := storedValue(t, st, key); v != want {
			t.Errorf("%s in the store: %q, want the session's %q", key, v, want)
		}
	}
	ents, err := os.ReadDir(filepath.Join(dir, "memory"))
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]string{}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".conflict-") {
			b, _ := os.ReadFile(filepath.Join(dir, "memory", e.Name()))
			kept[strings.SplitN(e.Name(), ".conflict-", 2)[0]] = string(b)
		}
	}
	for base, want := range map[string]string{"a": "their v2\n", "n": "their new\n", "c": "their c2\n"} {
		if kept[base] != want {
			t.Errorf("the other program's %s.md: conflict copy holds %q, want %q (copies: %v)", base, kept[base], want, kept)
		}
	}
	// With no other writer, a second flush makes no copy.
	if err := c.Set("memory/a.md", []byte("memfs's v3\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	ents2, _ := os.ReadDir(filepath.Join(dir, "memory"))
	if len(ents2) != len(ents) {
		t.Errorf("a flush with no other writer changed the number of files from %d to %d", len(ents), len(ents2))
	}
}
