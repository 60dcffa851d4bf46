package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/search"
)

func TestServiceManyUnflushedSlowEmbedder(t *testing.T) {
	// 300 unflushed values are 5 calls of 300 ms, well past the 800 ms a
	// search waits; the query alone is one.
	emb := &fakeEmbedder{delay: 300 * time.Millisecond}
	e := newSvcEnv(t, nil, ServiceOptions{Embedder: emb, EmbedWait: 800 * time.Millisecond, SaveDelay: time.Millisecond})
	e.put(t, "memory/billing.md", vecDocs["memory/billing.md"], 0o644, 1000)
	e.flush(t)
	s := e.svc(t)
	waitVectors(t, s, 1)
	for i := range 300 {
		if err := e.c.Set(fmt.Sprintf("memory/draft%03d.md", i), []byte(fmt.Sprintf("draft %d of the weekly plan", i))); err != nil {
			t.Fatal(err)
		}
	}
	if got := keysOf(semantic(t, s, credOwner, "bills", search.ModeSemantic, 3)); !slices.Contains(got, "memory/billing.md") {
		t.Errorf("semantic search with 300 unflushed values and a slow model: got %v, want memory/billing.md", got)
	}
}

// poisonEmbedder refuses any call with a text holding "POISON", as a
// model refuses an input it cannot take.
type poisonEmbedder struct{ fakeEmbedder }

func (p *poisonEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if strings.Contains(t, "POISON") {
			p.calls.Add(1)
			return nil, errors.New("400 bad input")
		}
	}
	return p.fakeEmbedder.Embed(ctx, texts)
}

// A text the model refuses does not hold up the others: they get their
// vectors, and it is counted as refused and left to rank by keyword.
func TestServiceRefusedTextDoesNotStallTheOthers(t *testing.T) {
	emb := &poisonEmbedder{}
	e := newSvcEnv(t, nil, ServiceOptions{Embedder: emb, SaveDelay: time.Millisecond})
	s := e.svc(t)
	e.put(t, "memory/bad.md", "POISON pill", 0o644, 1000)
	for k, v := range vecDocs {
		e.put(t, k, v, 0o644, 1000)
	}
	e.flush(t)
	if !await.Cond(20*time.Second, 20*time.Millisecond, func() bool {
		st := s.VectorStatus()
		return st.Vectors == len(vecDocs) && st.Pending == 0 && st.Refused == 1
	}) {
		t.Fatalf("status %+v: want %d vectors, none pending, 1 refused", s.VectorStatus(), len(vecDocs))
	}
	if got := keysOf(semantic(t, s, credOwner, "bills", search.ModeSemantic, 3)); !slices.Contains(got, "memory/billing.md") {
		t.Errorf("semantic search: got %v, want memory/billing.md", got)
	}
	if got := keysOf(semantic(t, s, credOwner, "pill", search.ModeHybrid, 3)); !slices.Contains(got, "memory/bad.md") {
		t.Errorf("hybrid search for the refused one's word: got %v, want memory/bad.md by keyword", got)
	}
}
