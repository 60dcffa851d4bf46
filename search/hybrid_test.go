package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// zeroEmbedder knows no word: every vector is zero.
type zeroEmbedder struct{}

func (zeroEmbedder) ID() string { return "test:zero" }
func (zeroEmbedder) Dim() int   { return 4 }
func (zeroEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range texts {
		out[i] = make([]float32, 4)
	}
	return out, nil
}

// A query the model knows no word of (an incident id) ranks by BM25 in
// hybrid mode, with BM25's full scale: min: keeps the hit keyword search
// keeps.
func TestHybridWithoutVectorsRanksByKeywords(t *testing.T) {
	docs := []Doc{
		{Key: "memory/inc.md", Value: []byte("incident INC4711 took the api down")},
		{Key: "memory/other.md", Value: []byte("lunch on fridays")},
	}
	for _, mode := range []Mode{ModeKeyword, ModeHybrid} {
		hits, err := RankDocs(context.Background(), zeroEmbedder{}, docs, Query{Text: "inc4711", Mode: mode, MinScore: 0.5}, DefaultFusion())
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || hits[0].Key != "memory/inc.md" {
			t.Errorf("%s: hits %v, want memory/inc.md alone", mode, hits)
		}
	}
	f := fuse([]Hit{{Key: "a", Score: 2}, {Key: "b", Score: 1}}, []Hit{{Key: "b", Score: 0.9}}, func(string) (float64, bool) { return 0, false }, DefaultFusion())
	// a has no vector yet: it keeps its BM25 share for both parts (1.0);
	// b has the best cosine (1.0) and half a's BM25: 0.6 + 0.4*0.5.
	if len(f) != 2 || f[0].Key != "a" || f[0].Score != 1 || math.Abs(f[1].Score-0.8) > 1e-9 {
		t.Errorf("fuse: %v, want a 1.0 (no vector: BM25 alone), b 0.8", f)
	}
}

// Many unflushed values do not keep a slow model's query vector from
// being ready in time: the query is embedded alone, first, and the
// unflushed values are bounded (they rank by keyword when not ready).
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
	if got := keysOf(semantic(t, s, credOwner, "bills", ModeSemantic, 3)); !slices.Contains(got, "memory/billing.md") {
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
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := s.VectorStatus()
		if st.Vectors == len(vecDocs) && st.Pending == 0 && st.Refused == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %+v: want %d vectors, none pending, 1 refused", st, len(vecDocs))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := keysOf(semantic(t, s, credOwner, "bills", ModeSemantic, 3)); !slices.Contains(got, "memory/billing.md") {
		t.Errorf("semantic search: got %v, want memory/billing.md", got)
	}
	if got := keysOf(semantic(t, s, credOwner, "pill", ModeHybrid, 3)); !slices.Contains(got, "memory/bad.md") {
		t.Errorf("hybrid search for the refused one's word: got %v, want memory/bad.md by keyword", got)
	}
}
