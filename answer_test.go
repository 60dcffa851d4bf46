package memfs_test

import (
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/search"
)

// TestWriteAnswer: the answer goes to w, and warn says that an FS without
// an embedder ranks by words alone; a request that fails says nothing on
// w, and names memfs reindex.
func TestWriteAnswer(t *testing.T) {
	f, _ := openRuns(t)
	must(t, f.Session().Set("alpha.md", []byte("alpha note\n")))
	must(t, f.Flush(t.Context()))
	ctx := memfs.AsProcess(t.Context())
	r, err := search.ParseName("alpha")
	must(t, err)
	var w, warn strings.Builder
	must(t, f.WriteAnswer(ctx, &w, &warn, r, 0))
	if !strings.Contains(w.String(), "alpha.md") {
		t.Errorf("got answer %q, want alpha.md in it", w.String())
	}
	if want := "memfs: keyword search only: no embedder (memfs models install puts the default in place; see --embedder)\n"; warn.String() != want {
		t.Errorf("got warning %q, want %q", warn.String(), want)
	}

	w.Reset()
	semantic, err := search.ParseName("alpha mode:semantic")
	must(t, err)
	err = f.WriteAnswer(ctx, &w, &warn, semantic, 0)
	if err == nil || !strings.HasSuffix(err.Error(), "\n  memfs reindex rebuilds the search index") {
		t.Errorf("got %v, want an error that names what rebuilds the index", err)
	}
	if w.Len() > 0 {
		t.Errorf("a failed answer wrote %q", w.String())
	}
}

// TestWriteContext: the pack ContextFile makes for this process's user
// goes to w; a name that is no pack's query is its error, nothing written.
func TestWriteContext(t *testing.T) {
	f, _ := openRuns(t)
	must(t, f.Session().Mkdir("memory", 0o755, 0, 0))
	must(t, f.Session().Set("memory/global.md", []byte("always apply this\n")))
	ctx := memfs.AsProcess(t.Context())
	want, err := f.ContextFile(ctx, "max:2000")
	must(t, err)
	var w strings.Builder
	must(t, f.WriteContext(t.Context(), &w, "max:2000"))
	if w.String() != string(want) || !strings.Contains(w.String(), "always apply this") {
		t.Errorf("got\n%s\nwant\n%s", w.String(), want)
	}
	w.Reset()
	if err := f.WriteContext(t.Context(), &w, "max:0"); err == nil || w.Len() > 0 {
		t.Errorf("WriteContext(max:0) = %v, wrote %q; want an error and nothing", err, w.String())
	}
}
