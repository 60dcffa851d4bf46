package memfs_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/embed"
	"github.com/memfs/memfs/search"
)

// writeTable writes a static table of four words at path; name tells two
// tables apart (their IDs differ).
func writeTable(t *testing.T, path, name string) {
	t.Helper()
	tab := &embed.Table{Name: name, Dim: 4, Words: []string{"invoice", "bill", "garage", "lunch"}}
	for _, v := range [][]float32{{1, 0, 0, 0}, {0.9, 0.1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}} {
		q, s := embed.Quantize(v)
		tab.Vectors = append(tab.Vectors, q...)
		tab.Scales = append(tab.Scales, s)
		tab.Weights = append(tab.Weights, 1)
	}
	must(t, embed.WriteTableFile(path, tab))
}

// openWith opens an FS over a new dir store with embedder e.
func openWith(t *testing.T, e embed.Embedder) *memfs.FS {
	t.Helper()
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	must(t, err)
	f, err := memfs.Open(t.Context(), st, memfs.Options{JournalPath: filepath.Join(dir, dirstore.JournalName), Namespace: true, Embedder: e, EmbedWait: time.Minute})
	must(t, err)
	t.Cleanup(func() { f.Close(context.Background()) })
	return f
}

// The default model is read at the first search, not when the store is
// opened: an FS that writes, flushes, shows its status and builds a pack
// without a query has not read the table file. Shown by replacing the
// file after the open: the first search uses the one it finds then.
func TestDefaultModelOpensAtFirstSearch(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, embed.DefaultTable)
	writeTable(t, path, "first@1")
	o := embed.Options{Getenv: func(k string) string {
		if k == "MEMFS_MODEL_DIR" {
			return dir
		}
		return ""
	}}
	e, err := embed.OpenOptional("default", o, slog.New(slog.DiscardHandler))
	must(t, err)
	f := openWith(t, e)
	must(t, f.Session().Set("memory/billing.md", []byte("the invoice is due\n")))
	must(t, f.Flush(t.Context()))
	if st := f.SearchStatus(); !strings.Contains(st, "hybrid") {
		t.Errorf("status before a search: %q, want hybrid", st)
	}
	_, err = f.ContextFile(memfs.AsProcess(t.Context()), "")
	must(t, err)

	writeTable(t, path, "second@1")
	second, err := embed.OpenStatic(path)
	must(t, err)
	r, err := search.ParseName("bill")
	must(t, err)
	answer, late, err := f.Answer(memfs.AsProcess(t.Context()), r, time.Minute)
	must(t, err)
	must(t, late)
	if !strings.Contains(string(answer), "memory/billing.md") {
		t.Errorf("search answer %q, want memory/billing.md by meaning", answer)
	}
	if st := f.SearchStatus(); !strings.Contains(st, second.ID()) {
		t.Errorf("status after the first search: %q, want the table as it was then, %s: the first was read before", st, second.ID())
	}
}

// A pack ranked by a query names the embedder that ranked it in its
// manifest.
func TestPackManifestNamesTheEmbedder(t *testing.T) {
	f := openWith(t, hashEmbedder{})
	must(t, f.Session().Set("memory/billing.md", []byte("the invoice is due\n")))
	must(t, f.Session().Set("memory/lunch.md", []byte("lunch on fridays\n")))
	b, err := f.ContextFile(memfs.AsProcess(t.Context()), "invoice"+contextpack.ManifestSuffix)
	must(t, err)
	var m struct {
		Embedder string `json:"embedder"`
	}
	must(t, json.Unmarshal(b, &m))
	if m.Embedder != (hashEmbedder{}).ID() {
		t.Errorf("manifest's embedder %q, want %q:\n%s", m.Embedder, hashEmbedder{}.ID(), b)
	}
}
