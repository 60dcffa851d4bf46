package session

import (
	"testing"

	"github.com/memfs/memfs/backend/memstore"
)

// The flush's phases, one at a time: a change made between the plan and
// the commit (while the store's I/O runs) stays dirty, and the store has
// what the plan took; a removal planned and deleted is no longer pending.
func TestFlushPhasesKeepAChangeMadeDuringTheFlush(t *testing.T) {
	ctx := t.Context()
	st := memstore.New()
	c := NewContext(st, Options{})
	if err := c.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a.md", "gone.md"} {
		if err := c.Set(k, []byte("one")); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("a.md", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("gone.md"); err != nil {
		t.Fatal(err)
	}

	c.mu.Lock()
	p := c.planLocked(false)
	c.mu.Unlock()
	if len(p.entries) != 1 || p.entries[0].Key != "a.md" || len(p.removed) != 1 || p.removed[0] != "gone.md" {
		t.Fatalf("plan: entries %v, removed %v; want a.md saved, gone.md deleted", p.entries, p.removed)
	}
	c.sealPlan(p)
	res, err := c.persist(ctx, p)
	if err != nil || len(res.failed) != 0 {
		t.Fatalf("persist: %v, failed %v", err, res.failed)
	}
	if err := c.Set("a.md", []byte("three")); err != nil { // during the flush
		t.Fatal(err)
	}
	c.mu.Lock()
	out := c.commitLocked(p, res)
	c.mu.Unlock()
	if out.allFailed || len(out.refused) != 0 {
		t.Fatalf("commit: %+v, want nothing refused", out)
	}
	if !c.Pending().Dirty("a.md") {
		t.Error("a.md, written during the flush, is clean after its commit")
	}
	if c.Pending().Removed("gone.md") {
		t.Error("gone.md is still pending removal after its delete was committed")
	}
	es, err := st.Load(ctx, "a.md")
	if err != nil || len(es) != 1 || string(es[0].Value) != "two" {
		t.Errorf("store a.md = %v, %v; want the planned value two", es, err)
	}
	if err := c.settleJournal(p.through, res.failed, out); err != nil {
		t.Errorf("settleJournal = %v", err)
	}
}
