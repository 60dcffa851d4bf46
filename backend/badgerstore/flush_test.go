package badgerstore_test

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/session"
)

// A session's flush on a badger store is one transaction (backend.Batcher):
// new files, changed files, removed files and a rename (the new key saved,
// the old deleted) commit together, so that no crash leaves a rename half
// done. It lives here, not in package session, because only a test of this
// package can count the store's commits.
func TestFlushIsOneTransaction(t *testing.T) {
	s, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	seed := []backend.Entry{{Key: "notes", Info: backend.Info{Mode: fs.ModeDir | 0o755, MTime: mtime}}}
	for _, k := range []string{"a.md", "b.md", "c.md", "old.md"} {
		seed = append(seed, backend.Entry{Key: "notes/" + k, Value: []byte("was " + k), Info: backend.Info{Mode: 0o644, MTime: mtime}})
	}
	if err := s.Save(ctx, seed...); err != nil {
		t.Fatal(err)
	}
	c := session.NewContext(s, session.Options{})
	if err := c.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 5 // new files
	for i := range n {
		if err := c.Set(fmt.Sprintf("notes/new%d.md", i), []byte("new")); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Set("notes/a.md", []byte("changed")); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"notes/b.md", "notes/c.md"} {
		if err := c.Delete(k); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Rename(ctx, "notes/old.md", "notes/renamed.md", 0); err != nil {
		t.Fatal(err)
	}

	before := badgerstore.Commits(s)
	if err := c.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if used := badgerstore.Commits(s) - before; used != 1 {
		t.Errorf("the flush committed %d transactions, want 1", used)
	}
	l, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range l {
		keys = append(keys, strings.TrimPrefix(e.Key, "notes/"))
	}
	want := "notes a.md new0.md new1.md new2.md new3.md new4.md renamed.md"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("the store holds %q, want %q", got, want)
	}
	got, err := s.Load(ctx, "notes/a.md", "notes/renamed.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Value) != "changed" || string(got[1].Value) != "was old.md" {
		t.Errorf("a.md = %q, renamed.md = %q; want changed, was old.md", got[0].Value, got[1].Value)
	}
}

// A flush larger than one transaction (a small memtable here) is refused
// as one batch (backend.ErrBatchTooLarge) and saved in parts: every entry
// reaches the store, and the flush succeeds.
func TestFlushTooLargeForOneTransaction(t *testing.T) {
	s, err := badgerstore.Open(t.TempDir(), badgerstore.Options{MemTableSize: 512 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	c := session.NewContext(s, session.Options{})
	if err := c.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Mkdir("big", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	const n, size = 40, 8 << 10 // 320 KiB; the limit is 15% of 512 KiB
	value := []byte(strings.Repeat("x", size))
	for i := range n {
		if err := c.Set(fmt.Sprintf("big/f%02d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	before := badgerstore.Commits(s)
	if err := c.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if used := badgerstore.Commits(s) - before; used < 2 {
		t.Errorf("the flush committed %d transactions; the test meant it to be over the limit", used)
	}
	l, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != n+1 {
		t.Errorf("the store holds %d keys, want %d", len(l), n+1)
	}
}
