package memfs_test

import (
	"context"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
)

// RedactVersion blanks the version and appends an event saying so,
// naming the key and the redacted seq.
func TestRedactVersion(t *testing.T) {
	st, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	h := history.New(st)
	v := []byte("api_key=oops")
	a, _, err := h.Put(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := h.PlanVersions([]history.Version{history.NewVersion(7, history.OpWrite, &backend.Entry{Key: "memory/a.md", Value: v}, a)})
	if err == nil {
		err = h.Write(ctx, recs)
	}
	if err != nil {
		t.Fatal(err)
	}
	r, err := memfs.RedactVersion(ctx, st, "memory/a.md", 7, "tester", nil)
	if err != nil || !r.Version.Redacted || r.Removed != 1 {
		t.Fatalf("RedactVersion = %+v, %v", r, err)
	}
	l, err := eventlog.Open(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	page, err := l.Query(ctx, eventlog.Query{Limit: 1})
	if err != nil || len(page.Events) != 1 {
		t.Fatalf("Query: %+v, %v", page, err)
	}
	if e := page.Events[0]; e.Op != eventlog.OpRedact || e.Key != "memory/a.md" || e.Redacted != 7 || e.Writer.Agent != "tester" {
		t.Errorf("the event = %+v; want a redact of memory/a.md at 7 by tester", e)
	}
}
