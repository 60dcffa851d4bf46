package session_test

import (
	"errors"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/session"
)

// One entry the store refuses never keeps the others from it: the flush
// saves the rest, reports the refused key with the store's error, keeps it
// dirty and journaled (a crash still finds it), and saves it once the
// store takes it.
func TestARefusedEntryDoesNotBlockTheOthers(t *testing.T) {
	stores := []struct {
		name string
		open func(t *testing.T) backend.Store
	}{
		{"dirstore", func(t *testing.T) backend.Store { return openStore(t, t.TempDir()) }},
		// A Batcher: the flush is one Apply, which the refused entry
		// fails whole; the others must still reach the store.
		{"memstore", func(t *testing.T) backend.Store { return memstore.New() }},
	}
	for _, tt := range stores {
		t.Run(tt.name, func(t *testing.T) {
			refusedEntryDoesNotBlockTheOthers(t, tt.open(t))
		})
	}
}

func refusedEntryDoesNotBlockTheOthers(t *testing.T, base backend.Store) {
	refuse := true
	st := errorstore.Wrap(base, func(op errorstore.Op, keys []string) error {
		if refuse && (op == errorstore.OpSave || op == errorstore.OpDelete || op == errorstore.OpApply) && slices.Contains(keys, "memory/bad.md") {
			return syscall.EFBIG
		}
		return nil
	})
	jpath := filepath.Join(t.TempDir(), "journal")
	j, _, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	c := session.NewContext(st, session.Options{Journal: j})
	if err := c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.Mkdir("memory", 0o755, 0, 0)
	for _, k := range []string{"memory/a.md", "memory/bad.md", "memory/c.md"} {
		if err := c.Set(k, []byte("value of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	err = c.Flush(t.Context())
	var fe *session.FlushError
	if !errors.As(err, &fe) || !fe.Refused("memory/bad.md") || len(fe.Failed) != 1 || !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("flush: %v, want a FlushError refusing memory/bad.md only, with EFBIG", err)
	}
	for _, k := range []string{"memory/a.md", "memory/c.md"} {
		if v, ok := storedValue(t, base, k); !ok || v != "value of "+k {
			t.Errorf("%s in the store: %q, %v; a refused entry kept it out", k, v, ok)
		}
	}
	if st, _ := c.Stat("memory/bad.md"); !st.Dirty {
		t.Error("the refused entry is not dirty any more")
	}
	// A crash now: the journal still has the refused entry, not the others.
	j.Close()
	_, recs, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range recs {
		for _, e := range r.Entries {
			keys = append(keys, e.Key)
		}
	}
	if !slices.Equal(keys, []string{"memory/bad.md"}) {
		t.Fatalf("the journal after the flush holds %v, want only the refused entry", keys)
	}
	renameWhileRefused(t, st, base, recs, func() { refuse = false })
}

// renameWhileRefused is the second half of refusedEntryDoesNotBlockTheOthers:
// renaming a saved file while the refused one (in recs) still fails works
// too; allow makes st take it.
func renameWhileRefused(t *testing.T, st, base backend.Store, recs []journal.Record, allow func()) {
	var fe *session.FlushError
	// Renaming a saved file while the refused one still fails works too.
	j2, _, err := journal.Open(filepath.Join(t.TempDir(), "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	c2 := session.NewContext(st, session.Options{Journal: j2})
	if err := c2.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c2.Pending().Replay(recs); err != nil {
		t.Fatal(err)
	}
	if err := c2.Rename(t.Context(), "memory/a.md", "memory/a2.md", 0); err != nil {
		t.Fatal(err)
	}
	if err := c2.Flush(t.Context()); !errors.As(err, &fe) || len(fe.Failed) != 1 {
		t.Fatalf("flush with the store still refusing: %v", err)
	}
	if _, ok := storedValue(t, base, "memory/a.md"); ok {
		t.Error("the rename's old key is still in the store")
	}
	if v, _ := storedValue(t, base, "memory/a2.md"); v != "value of memory/a.md" {
		t.Errorf("the renamed file in the store: %q", v)
	}
	allow()
	if err := c2.Flush(t.Context()); err != nil {
		t.Fatalf("flush once the store takes it: %v", err)
	}
	if v, _ := storedValue(t, base, "memory/bad.md"); v != "value of memory/bad.md" {
		t.Errorf("memory/bad.md in the store: %q", v)
	}
}
