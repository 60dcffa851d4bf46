package session_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/session"
)

// An editor's atomic save (sed -i, vim's backupcopy=no): a temp file
// written whole and renamed over the key. Under merge, it merges with the
// other writer's concurrent save from the base of the file it replaced,
// as an edit in place does, instead of keeping both.
func TestMergeOfARenameOverSave(t *testing.T) {
	const key = "memory/plan.md"
	st := memstore.New()
	other := st.Other()
	if err := other.Set(key, []byte("one\ntwo\nthree\n")); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	c, _ := policySession(t, st, session.Merge, func(o *session.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	if err := c.Resolve(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	const tmp = "memory/sedAbC123"
	if err := c.Set(tmp, []byte("one\ntwo\nthree, ours\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Rename(t.Context(), tmp, key, 0); err != nil {
		t.Fatal(err)
	}
	if err := other.Set(key, []byte("one, theirs\ntwo\nthree\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	all := stored(t, st)
	if got, want := all[key], "one, theirs\ntwo\nthree, ours\n"; got != want {
		t.Errorf("store %s = %q, want the merge %q", key, got, want)
	}
	for k := range all {
		if k != key {
			t.Errorf("store holds %s too; want the merge alone", k)
		}
	}
	// An overlap still keeps both, and the log says why.
	if err := c.Set(tmp, []byte("one, ours again\ntwo\nthree, ours\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Rename(t.Context(), tmp, key, 0); err != nil {
		t.Fatal(err)
	}
	if err := other.Set(key, []byte("one, theirs again\ntwo\nthree, ours\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "outcome=kept-both") || !strings.Contains(logs.String(), "overlap") {
		t.Errorf("log after an overlapping merge:\n%s\nwant kept-both and why (an overlap)", logs.String())
	}
}
