package memfs_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/search"
	"github.com/memfs/memfs/session"
)

// TestUnreadableDirStoreFileIsLocal: a file of a dir store that the disk
// cannot read (EIO on its load: a bad sector) is that key's failure: Open
// (which loads memory/) succeeds, the key is reported damaged and its read
// fails, the other notes read, a write flushes, and the search index
// opens with the rest.
func TestUnreadableDirStoreFileIsLocal(t *testing.T) {
	dir := t.TempDir()
	for name, v := range map[string]string{"memory/small.md": "the quick brown fox\n", "memory/bad.md": "unreadable\n"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inner, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := errorstore.Wrap(inner, func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpLoad && slices.Contains(keys, "memory/bad.md") {
			return &fs.PathError{Op: "load", Path: "memory/bad.md", Err: syscall.EIO}
		}
		return nil
	})
	ctx := context.Background()
	f, err := memfs.Open(ctx, st, memfs.Options{JournalPath: filepath.Join(dir, dirstore.JournalName), Bootstrap: []string{"memory/"}})
	if err != nil {
		t.Fatalf("Open with one unreadable file: %v", err)
	}
	defer f.Close(ctx)
	c := f.Session()
	if got, ok := c.Get("memory/small.md"); !ok || string(got) != "the quick brown fox\n" {
		t.Errorf("the readable note: %q, %v", got, ok)
	}
	if err := c.Resolve(ctx, "memory/bad.md"); !errors.Is(err, syscall.EIO) {
		t.Errorf("Resolve of the unreadable note: %v, want EIO", err)
	}
	if d := c.Stats().Damaged(); len(d) != 1 || d[0].Key != "memory/bad.md" {
		t.Errorf("Damaged() = %v, want memory/bad.md", d)
	}
	if err := c.Set("memory/new.md", []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Flush(ctx); err != nil {
		t.Fatalf("a flush beside the unreadable note: %v", err)
	}
	s, err := f.Search(ctx)
	if err != nil {
		t.Fatalf("the search index with one unreadable value: %v", err)
	}
	rctx := session.WithCred(ctx, session.Cred{})
	out, err := s.Answer(rctx, search.Request{Query: search.Query{Text: "fox"}})
	if err != nil || !strings.Contains(string(out), "memory/small.md") {
		t.Errorf("search fox: %q, %v", out, err)
	}
	pack, err := f.ContextFile(rctx, "")
	if err != nil || !strings.Contains(string(pack), "the quick brown fox") {
		t.Errorf("the context pack beside an unreadable note: %v\n%s", err, pack)
	}
}
