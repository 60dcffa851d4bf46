package memfs

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/embed"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/search"
)

// packRank is the ranker of context packs: the notes scored by search's
// ranking over just these notes (search.RankDocs: hybrid with e, BM25
// without), each from its redacted text, so that no secret goes to a
// remote model and the scores are the same whether the values are the
// session's or the archive's (redacted when flushed). It is a pure
// function of the query and the notes for a deterministic embedder, as
// contextpack.RankFunc must be.
func packRank(red *redact.Redactor, e embed.Embedder) contextpack.RankFunc {
	if e != nil {
		e = newVecCache(e, 8192)
	}
	return func(ctx context.Context, query string, docs []contextpack.Doc) ([]float64, error) {
		in := make([]search.Doc, len(docs))
		at := make(map[string]int, len(docs))
		for i, d := range docs {
			v := []byte(d.Text)
			if red != nil {
				v, _ = red.Redact(d.Key, v)
			}
			in[i] = search.Doc{Key: d.Key, Value: v}
			at[d.Key] = i
		}
		if red != nil {
			q, _ := red.Redact("", []byte(query))
			query = string(q)
		}
		hits, err := search.RankDocs(ctx, e, in, search.Query{Text: query, TopK: len(docs)}, search.DefaultFusion())
		if err != nil {
			return nil, err
		}
		out := make([]float64, len(docs))
		for _, h := range hits {
			out[at[h.Key]] = h.Score
		}
		return out, nil
	}
}

// vecCache is an Embedder that keeps the vectors of the texts it embedded
// (by SHA-256 of the text), up to max of them, so that packs built over
// the same notes embed each note once (a remote model is asked once).
// When full it forgets everything and starts again.
type vecCache struct {
	embed.Embedder
	max int

	mu   sync.Mutex
	vecs map[[32]byte][]float32
}

func newVecCache(e embed.Embedder, max int) *vecCache {
	return &vecCache{Embedder: e, max: max, vecs: make(map[[32]byte][]float32)}
}

func (c *vecCache) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var miss []string
	var at []int
	c.mu.Lock()
	for i, t := range texts {
		if v, ok := c.vecs[sha256.Sum256([]byte(t))]; ok {
			out[i] = v
		} else {
			miss = append(miss, t)
			at = append(at, i)
		}
	}
	c.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	got, err := c.Embedder.Embed(ctx, miss)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.vecs)+len(got) > c.max {
		clear(c.vecs)
	}
	for j, v := range got {
		out[at[j]] = v
		if len(got) <= c.max {
			c.vecs[sha256.Sum256([]byte(miss[j]))] = v
		}
	}
	return out, nil
}

// SearchStatus is the search part of .memfs/status: "search: keyword only
// (no embedder)", or the embedder and the state of its vectors (how many,
// how many wait to be embedded, the model's last failure).
func (f *FS) SearchStatus() string {
	if f.opts.Embedder == nil {
		return "search: keyword only (no embedder)\n"
	}
	line := "search: hybrid, embedder " + f.opts.Embedder.ID()
	if st, ok := f.index.VectorStatus(); ok {
		line += fmt.Sprintf(", %d vectors, %d pending", st.Vectors, st.Pending)
		if st.LastError != "" {
			line += fmt.Sprintf("; last embedding error at %s: %s", st.LastErrorAt.UTC().Format(time.RFC3339), st.LastError)
		}
	} else {
		line += " (the index opens at the first search)"
	}
	return line + "\n"
}

// Embedder is Options.Embedder: nil when search is keyword-only.
func (f *FS) Embedder() embed.Embedder { return f.opts.Embedder }
