package memfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/redact"
)

// recEmbedder records the texts it is given; with fail it refuses them.
type recEmbedder struct {
	mu    sync.Mutex
	texts []string
	fail  bool
}

func (*recEmbedder) ID() string { return "test:rec" }
func (*recEmbedder) Dim() int   { return 2 }
func (r *recEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.texts = append(r.texts, texts...)
	if r.fail {
		return nil, errors.New("model down")
	}
	out := make([][]float32, len(texts))
	for i := range texts {
		out[i] = []float32{0.6, 0.8}
	}
	return out, nil
}

// The pack's ranker sends the model only redacted text: neither a secret
// in a note nor a note whose name holds one (that note is not ranked).
func TestPackRankSendsNoSecret(t *testing.T) {
	red, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "AKIAQ3EGXP7ZLRK2MV5N"
	e := &recEmbedder{}
	docs := []contextpack.Doc{
		{Key: "memory/" + secret + ".md", Text: "deploy notes"},
		{Key: "memory/keys.md", Text: "deploy with key " + secret},
		{Key: "memory/plain.md", Text: "deploy on tuesdays"},
	}
	scores, err := packRank(red, e, slog.New(slog.DiscardHandler))(context.Background(), "deploy "+secret, docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.texts) == 0 {
		t.Fatal("the model got nothing: the test shows nothing")
	}
	for _, s := range e.texts {
		if strings.Contains(s, secret) {
			t.Errorf("the model got a secret: %q", s)
		}
	}
	if scores[0] != 0 || scores[2] <= 0 {
		t.Errorf("scores %v: want 0 for the note whose name holds a secret, more for the plain one", scores)
	}
}

// A model that fails leaves the pack ranked by keywords, not failed.
func TestPackRankModelDownRanksByKeywords(t *testing.T) {
	e := &recEmbedder{fail: true}
	docs := []contextpack.Doc{{Key: "memory/a.md", Text: "lunch on fridays"}, {Key: "memory/b.md", Text: "deploy on tuesdays"}}
	scores, err := packRank(nil, e, slog.New(slog.DiscardHandler))(context.Background(), "deploy", docs)
	if err != nil {
		t.Fatalf("a failing model failed the pack: %v", err)
	}
	if len(e.texts) == 0 || !(scores[1] > scores[0]) {
		t.Errorf("scores %v (model asked %d times): want the deploy note first, by keywords", scores, len(e.texts))
	}
}

// entries is a contextpack.Source over entries with their values.
type entries []backend.Entry

func (s entries) Entries(prefix string) []backend.Entry {
	var out []backend.Entry
	for _, e := range s {
		if strings.HasPrefix(e.Key, prefix) {
			out = append(out, e)
		}
	}
	return out
}

func (s entries) Resolve(context.Context, ...string) error { return nil }

func (s entries) Get(key string) ([]byte, bool) {
	for _, e := range s {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

// A second pack over the same notes redacts none of them again (their
// redacted texts are kept by key and content address), ranks them the
// same, and still sends the model no secret; a note that changed is
// redacted again, and alone.
func TestPackRankRedactsANoteOnce(t *testing.T) {
	red, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "AKIAQ3EGXP7ZLRK2MV5N"
	var mu sync.Mutex
	redacted := map[string]int{} // key -> redactions of it
	count := func(key string, v []byte) ([]byte, []redact.Finding) {
		mu.Lock()
		redacted[key]++
		mu.Unlock()
		return red.Redact(key, v)
	}
	src := entries{}
	for i, v := range []string{"deploy with key " + secret, "deploy on tuesdays", "lunch on fridays", "deploy notes"} {
		key := fmt.Sprintf("memory/note%d.md", i)
		if i == 3 {
			key = "memory/" + secret + ".md"
		}
		src = append(src, backend.Entry{Key: key, Value: []byte(v + "\n"), Info: backend.Info{Mode: 0o644, MTime: time.Unix(1e9, 0)}})
	}
	e := &recEmbedder{}
	o := contextpack.Options{Query: "deploy", Rank: rankWith(count, e, slog.New(slog.DiscardHandler))}
	build := func() (contextpack.Pack, map[string]int) {
		t.Helper()
		mu.Lock()
		clear(redacted)
		mu.Unlock()
		p, err := contextpack.Build(t.Context(), src, o)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		delete(redacted, "") // the query's
		return p, maps.Clone(redacted)
	}
	first, n := build()
	if len(n) != len(src) {
		t.Fatalf("the first pack redacted %v, want every note", n)
	}
	second, n := build()
	if len(n) != 0 {
		t.Errorf("the second pack over the same notes redacted %v, want none", n)
	}
	if string(first.Manifest.JSON()) != string(second.Manifest.JSON()) {
		t.Errorf("the second pack differs:\n%s\nwant\n%s", second.Manifest.JSON(), first.Manifest.JSON())
	}
	src[1].Value = []byte("deploy on wednesdays\n")
	if _, n = build(); len(n) != 1 || n[src[1].Key] == 0 {
		t.Errorf("after one note changed: redacted %v, want that note alone", n)
	}
	for _, s := range e.texts {
		if strings.Contains(s, secret) {
			t.Errorf("the model got a secret: %q", s)
		}
	}
}
