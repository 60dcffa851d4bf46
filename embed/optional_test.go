package embed_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/embed"
)

// TestOpenOptional: the default table missing is a warning and no
// embedder; damaged, it opens at its first use (embed.Lazy), where that is
// a warning and no embedder; a table named outright and missing is an
// error.
func TestOpenOptional(t *testing.T) {
	dir := t.TempDir()
	o := embed.Options{Getenv: func(k string) string {
		if k == "MEMFS_MODEL_DIR" {
			return dir
		}
		return ""
	}}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	if e, err := embed.OpenOptional("default", o, log); e != nil || err != nil || !strings.Contains(logs.String(), "not installed") {
		t.Errorf("default, not installed: %v, %v, log %q; want nil, nil and a warning", e, err, logs.String())
	}
	if err := os.WriteFile(filepath.Join(dir, embed.DefaultTable), []byte("not a table"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	e, err := embed.OpenOptional("", o, log)
	if err != nil || logs.Len() > 0 || embed.Label(e) != "default" {
		t.Errorf("default, damaged, before its first use: %v, log %q, label %q; want no error, no warning yet, label default", err, logs.String(), embed.Label(e))
	}
	if got := embed.Resolve(e); got != nil || !strings.Contains(logs.String(), "damaged") {
		t.Errorf("default, damaged, at its first use: %v, log %q; want nil and a warning", got, logs.String())
	}
	if _, err := e.Embed(t.Context(), []string{"x"}); err == nil || e.ID() != "" || e.Dim() != 0 || embed.FloorOf(e) != embed.StaticFloor {
		t.Errorf("default, damaged: Embed %v, ID %q, Dim %d, floor %v; want an error, none, 0, the static floor", err, e.ID(), e.Dim(), embed.FloorOf(e))
	}
	missing := "static:" + filepath.Join(dir, "missing.mfse")
	if _, err := embed.OpenOptional(missing, o, log); err == nil {
		t.Errorf("%s: no error, want Open's", missing)
	}
}

// TestLazyOpensAtFirstUse: the default table is read at the first use of
// the embedder OpenOptional returns, not by OpenOptional: replaced in
// between, the table used is the new one; Label names it without opening
// it.
func TestLazyOpensAtFirstUse(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, embed.DefaultTable)
	write := func(name string) {
		t.Helper()
		tab := &embed.Table{Name: name, Dim: 2, Words: []string{"owl"}, Scales: []float32{1.0 / 127}, Weights: []float32{1}, Vectors: []int8{127, 0}}
		if err := embed.WriteTableFile(path, tab); err != nil {
			t.Fatal(err)
		}
	}
	write("first@1")
	o := embed.Options{Getenv: func(k string) string {
		if k == "MEMFS_MODEL_DIR" {
			return dir
		}
		return ""
	}}
	e, err := embed.OpenOptional("default", o, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	l, ok := e.(*embed.Lazy)
	if !ok || l.Loaded() || embed.Label(e) != "default" || !strings.Contains(embed.Describe(e), "first use") {
		t.Fatalf("OpenOptional(default): %T, loaded %v, label %q, %q; want a Lazy not loaded", e, ok && l.Loaded(), embed.Label(e), embed.Describe(e))
	}
	write("second@1")
	want, err := embed.OpenStatic(path)
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := e.Embed(t.Context(), []string{"owl"})
	if err != nil || len(vecs) != 1 || vecs[0][0] < 0.99 {
		t.Fatalf("Embed: %v, %v", vecs, err)
	}
	if !l.Loaded() || e.ID() != want.ID() || embed.Label(e) != want.ID() || embed.Resolve(e).ID() != want.ID() || embed.FloorOf(e) != embed.StaticFloor {
		t.Errorf("after the first use: loaded %v, ID %q, label %q, floor %v; want the table as it was then, %s", l.Loaded(), e.ID(), embed.Label(e), embed.FloorOf(e), want.ID())
	}
}
