package search

import (
	"context"
	"math"
	"testing"
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
	f := Fuse([]Hit{{Key: "a", Score: 2}, {Key: "b", Score: 1}}, []Hit{{Key: "b", Score: 0.9}}, func(string) (float64, bool) { return 0, false }, DefaultFusion())
	// a has no vector yet: it keeps its BM25 share for both parts (1.0);
	// b has the best cosine (1.0) and half a's BM25: 0.6 + 0.4*0.5.
	if len(f) != 2 || f[0].Key != "a" || f[0].Score != 1 || math.Abs(f[1].Score-0.8) > 1e-9 {
		t.Errorf("fuse: %v, want a 1.0 (no vector: BM25 alone), b 0.8", f)
	}
}

// Many unflushed values do not keep a slow model's query vector from
// being ready in time: the query is embedded alone, first, and the
// unflushed values are bounded (they rank by keyword when not ready).
