package memfs_test

import (
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
)

// A revert with no target goes back to the version before the last real
// one: a conflict record (another writer's value, which history never
// held) is none to go back to, and a redacted one is refused with a
// message that names it and the way out (--to).
func TestRevertSkipsConflictRecordsAndRefusesRedacted(t *testing.T) {
	ctx := t.Context()
	st := memstore.New()
	f, err := memfs.Open(ctx, st, histOpts(filepath.Join(t.TempDir(), "journal")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(ctx)
	c := f.Session()
	const key = "memory/a.md"
	set := func(v string) {
		t.Helper()
		if err := c.Set(key, []byte(v)); err != nil {
			t.Fatal(err)
		}
		if err := f.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	set("one\n")
	// A conflict record, as a conflict policy's flush leaves it: its
	// event, and its version without bytes.
	evs, err := f.Events().Append(ctx, []eventlog.Event{{Op: eventlog.OpConflict, Key: key, Size: 5,
		Conflict: &eventlog.Conflict{Policy: "last-writer-wins", Outcome: "theirs"}}})
	if err != nil {
		t.Fatal(err)
	}
	h := history.New(st)
	recs, err := h.PlanVersions([]history.Version{{Seq: evs[0].Seq, Op: history.OpConflict, Key: key, Size: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Write(ctx, recs); err != nil {
		t.Fatal(err)
	}
	set("two\n")
	v, err := f.Revert(ctx, key, "")
	if got, _ := c.Get(key); err != nil || string(got) != "one\n" {
		t.Fatalf("revert past a conflict record: %q (version %d), %v; want one", got, v.Seq, err)
	}
	// Now one (the present), two before it: redacted, it is refused.
	vs, err := f.Versions(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	var two uint64
	for _, v := range vs {
		if v.Op == history.OpWrite && v.Size == 4 && two < v.Seq && v.Seq < vs[len(vs)-1].Seq {
			two = v.Seq
		}
	}
	if _, err := memfs.RedactVersion(ctx, st, key, two, "test", slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	_, err = f.Revert(ctx, key, "")
	if !errors.Is(err, history.ErrRedacted) || !strings.Contains(err.Error(), "--to") {
		t.Errorf("revert to a redacted version: %v; want a refusal naming it and --to", err)
	}
	if got, _ := c.Get(key); string(got) != "one\n" {
		t.Errorf("after the refused revert: %q, want one unchanged", got)
	}
}
