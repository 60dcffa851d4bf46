package memfs_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/contextpack"
)

// AddSummary appends a line, ending first a last line that has no
// newline; the store holds the lines after a close.
func TestAddSummary(t *testing.T) {
	st := memstore.New()
	if err := st.Save(t.Context(), backend.Entry{Key: contextpack.SummariesKey, Value: []byte(`{"run":"r0"}`),
		Info: backend.Info{Mode: 0o644, MTime: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	f, err := memfs.Open(t.Context(), st, memfs.Options{JournalPath: filepath.Join(t.TempDir(), "journal")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(context.Background()) })
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, step := range []string{"s1", "s2"} {
		if err := f.AddSummary(t.Context(), contextpack.Summary{Run: "r", Step: step, Time: at, Text: "did " + step}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	es, err := st.Load(t.Context(), contextpack.SummariesKey)
	if err != nil || len(es) != 1 {
		t.Fatalf("Load(%s) = %v, %v", contextpack.SummariesKey, es, err)
	}
	e := es[0]
	want := `{"run":"r0"}` + "\n" +
		`{"run":"r","step":"s1","time":"2026-11-01T00:00:00Z","text":"did s1"}` + "\n" +
		`{"run":"r","step":"s2","time":"2026-11-01T00:00:00Z","text":"did s2"}` + "\n"
	if string(e.Value) != want {
		t.Errorf("summaries = %q, want %q", e.Value, want)
	}
}
