package memfs

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/embed"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/search"
	"github.com/memfs/memfs/status"
)

// packRank is the ranker of context packs: the notes scored by search's
// ranking over just these notes (search.RankDocs: hybrid with e, BM25
// without), each from its redacted text, so that no secret goes to a
// remote model and the scores are the same whether the values are the
// session's or the archive's (redacted when flushed). It is a pure
// function of the query and the notes for a deterministic embedder, as
// contextpack.RankFunc must be (a remote model may not be: its packs are
// rebuilt as of a seq byte for byte only while it answers the same). A
// note whose name holds a secret is not ranked (scores 0), as the search
// index leaves it out; an embedder that fails or takes more than rankWait
// leaves the ranking to keywords (logged).
func packRank(red *redact.Redactor, e embed.Embedder, log *slog.Logger) contextpack.RankFunc {
	if e != nil {
		e = newVecCache(e, 8192)
	}
	return func(ctx context.Context, query string, docs []contextpack.Doc) ([]float64, error) {
		in := make([]search.Doc, 0, len(docs))
		at := make(map[string]int, len(docs))
		for i, d := range docs {
			if red != nil {
				if _, found := red.Redact(d.Key, []byte(d.Key)); len(found) > 0 {
					// Its name holds a secret: as in the search index, it is
					// not ranked (its words would go to the model).
					continue
				}
			}
			v := []byte(d.Text)
			if red != nil {
				v, _ = red.Redact(d.Key, v)
			}
			in = append(in, search.Doc{Key: d.Key, Value: v})
			at[d.Key] = i
		}
		if red != nil {
			q, _ := red.Redact("", []byte(query))
			query = string(q)
		}
		q := search.Query{Text: query, TopK: max(1, len(in))}
		var hits []search.Hit
		err := errors.New("no embedder")
		if e != nil {
			// A model that fails or is slow leaves the pack to keywords,
			// as search does, rather than failing the pack.
			ectx, cancel := context.WithTimeout(ctx, rankWait)
			hits, err = search.RankDocs(ectx, e, in, q, search.DefaultFusion())
			cancel()
			if err != nil {
				log.Warn("context pack: notes ranked by keywords: the embedder failed", "err", err)
			}
		}
		if err != nil {
			if hits, err = search.RankDocs(ctx, nil, in, q, search.DefaultFusion()); err != nil {
				return nil, err
			}
		}
		out := make([]float64, len(docs))
		for _, h := range hits {
			out[at[h.Key]] = h.Score
		}
		return out, nil
	}
}

// rankWait bounds the time a pack waits for its notes' vectors before it
// ranks them by keywords.
const rankWait = 5 * time.Second

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

// SearchStatus is the search part of .memfs/status: "keyword only (no
// embedder)", or the embedder and the state of its vectors (how many, how
// many wait to be embedded, when the model last failed).
func (f *FS) SearchStatus() string {
	if f.opts.Embedder == nil {
		return status.KeywordOnly
	}
	line := "hybrid, embedder " + f.opts.Embedder.ID()
	if st, ok := f.index.VectorStatus(); ok {
		line += fmt.Sprintf(", %d vectors, %d pending", st.Vectors, st.Pending)
		if st.Refused > 0 {
			line += fmt.Sprintf(", %d refused by the model (ranked by keyword)", st.Refused)
		}
		if st.LastError != "" {
			// Not the error itself: it may name a file or quote a note
			// back from the model, and every reader sees the status. The
			// log has it.
			line += fmt.Sprintf("; last embedding error at %s (in memfs's log)", st.LastErrorAt.UTC().Format(time.RFC3339))
		}
	} else {
		line += " (the index opens at the first search)"
	}
	return line
}

// Embedder is Options.Embedder: nil when search is keyword-only.
func (f *FS) Embedder() embed.Embedder { return f.opts.Embedder }
