package memfs

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

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
