package memfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/packhist"
	"github.com/memfs/memfs/session"
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

// A redacted version's bytes leave the context packs' archive too:
// packhist's copy is removed, and the pack as of its seq reports the
// value redacted instead of serving it (the store's key holds another
// version, or still the same bytes: neither is served).
func TestRedactVersionLeavesNoArchiveCopy(t *testing.T) {
	for _, overwrite := range []bool{true, false} {
		t.Run(fmt.Sprintf("overwritten=%v", overwrite), func(t *testing.T) {
			f, _ := histStores()[0].open(t)
			t.Cleanup(func() { f.Close(context.Background()) })
			ctx := session.WithCred(t.Context(), session.Cred{UID: uint32(os.Getuid())})
			const secret = "# A\nthe rules missed this one: hunter2\n"
			must(t, f.Session().Set("memory/a.md", []byte(secret)))
			must(t, f.Flush(ctx))
			seq := headSeq(t, f)
			if overwrite {
				must(t, f.Session().Set("memory/a.md", []byte("# A\nclean now\n")))
				must(t, f.Flush(ctx))
			}
			if p, err := packAt(f, ctx, seq, ""); err != nil || !strings.Contains(string(p), "hunter2") {
				t.Fatalf("before the redaction, the pack as of %d: %q, %v; want the value", seq, p, err)
			}
			if _, err := memfs.RedactVersion(ctx, f.Store(), "memory/a.md", seq, "tester", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Store().LoadSys(ctx, "packhist/v/"+hexSum(secret)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("packhist's copy of the redacted value: %v, want it gone", err)
			}
			p, err := packAt(f, ctx, seq, "")
			if err == nil || strings.Contains(string(p), "hunter2") || strings.Contains(err.Error(), "hunter2") || !errors.Is(err, packhist.ErrRedacted) {
				t.Errorf("after the redaction, the pack as of %d: %q, %v; want an error wrapping packhist.ErrRedacted", seq, p, err)
			}
			// Nor does a revert to it write an empty file in its place.
			before, _ := f.Session().Get("memory/a.md")
			if _, err := f.Revert(ctx, "memory/a.md", strconv.FormatUint(seq, 10)); !errors.Is(err, history.ErrRedacted) {
				t.Errorf("revert to the redacted version: %v, want history.ErrRedacted", err)
			}
			if now, _ := f.Session().Get("memory/a.md"); string(now) != string(before) {
				t.Errorf("memory/a.md after a refused revert = %q, want %q", now, before)
			}
		})
	}
}
