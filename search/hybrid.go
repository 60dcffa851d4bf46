package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/memfs/memfs/embed"
)

// Mode is how a query's text ranks documents.
type Mode uint8

const (
	// ModeDefault is hybrid when the index has an embedder, else keyword.
	ModeDefault Mode = iota
	// ModeKeyword ranks by BM25 alone.
	ModeKeyword
	// ModeSemantic ranks by the cosine of the query's vector with the
	// documents'.
	ModeSemantic
	// ModeHybrid fuses the two (see Fusion).
	ModeHybrid
)

// String returns the mode as the query word mode: takes it ("" for
// ModeDefault).
func (m Mode) String() string {
	switch m {
	case ModeKeyword:
		return "keyword"
	case ModeSemantic:
		return "semantic"
	case ModeHybrid:
		return "hybrid"
	}
	return ""
}

func parseMode(s string) (Mode, bool) {
	for _, m := range []Mode{ModeKeyword, ModeSemantic, ModeHybrid} {
		if s == m.String() {
			return m, true
		}
	}
	return ModeDefault, false
}

// resolveMode returns the mode q runs in with or without an embedder: the
// default is hybrid with one, keyword without; semantic or hybrid without
// one is an error wrapping ErrQuery and ErrNoEmbedder.
func ResolveMode(m Mode, hasEmbedder bool) (Mode, error) {
	switch {
	case m == ModeDefault && hasEmbedder:
		return ModeHybrid, nil
	case m == ModeDefault:
		return ModeKeyword, nil
	case m != ModeKeyword && !hasEmbedder:
		return m, fmt.Errorf("%w: mode:%s: %w", ErrQuery, m, ErrNoEmbedder)
	}
	return m, nil
}

// Fusion sets how hybrid search combines a document's BM25 score and its
// vector's cosine with the query's. The candidates are the best
// Candidates of each ranking (both filtered); a candidate scores
//
//	Alpha·s_vec + (1-Alpha)·s_bm25
//
// where s_bm25 is its BM25 score over the highest among the candidates (0
// without one) and s_vec is (cos - Floor)/(maxcos - Floor), clamped to 0..1,
// maxcos the highest cosine among the candidates. A candidate with no
// vector, or every candidate when maxcos <= Floor (a query with no
// vector), takes s_bm25 for s_vec: it ranks by BM25 alone.
type Fusion struct {
	Alpha float64 // the vector score's weight, 0 to 1
	// Floor is the cosine counted as no likeness at all: unrelated texts
	// have cosines well above 0 under most models.
	Floor float64
	// Candidates is how many hits each ranking gives; 0 means
	// max(100, 4·TopK).
	Candidates int
}

// DefaultFusion returns the fusion parameters of the default static
// model: Alpha 0.6 and Floor 0.2 (embed.StaticFloor), chosen on the dev
// set of testdata/recall (TestDevSetTuneFusion: as good as any setting
// tried, and a cosine of 0.2 or less, where words unrelated to every note
// land, is no semantic hit).
func DefaultFusion() Fusion { return Fusion{Alpha: 0.6, Floor: embed.StaticFloor} }

// FusionOf returns the fusion parameters services use with e unless told
// otherwise: DefaultFusion with e's floor (embed.FloorOf), since models
// have other cosine scales.
func FusionOf(e embed.Embedder) Fusion {
	f := DefaultFusion()
	f.Floor = embed.FloorOf(e)
	return f
}

// PerRanking returns how many hits each ranking gives for topK.
func (f Fusion) PerRanking(topK int) int {
	if f.Candidates > 0 {
		return max(f.Candidates, topK)
	}
	return max(100, 4*topK)
}

// fuse ranks the union of the BM25 hits bm and the vector hits vec (their
// scores cosines) by f, best first (ties by key). cosOf gives the cosine
// of a BM25 candidate the vector hits lack (false: it has no vector).
func Fuse(bm, vec []Hit, cosOf func(key string) (float64, bool), f Fusion) []Hit {
	bmOf := make(map[string]float64, len(bm))
	cos := make(map[string]float64, len(bm)+len(vec))
	maxBM := 0.0
	for _, h := range bm {
		bmOf[h.Key] = h.Score
		maxBM = max(maxBM, h.Score)
	}
	for _, h := range vec {
		cos[h.Key] = h.Score
	}
	for _, h := range bm {
		if _, ok := cos[h.Key]; !ok {
			if c, ok := cosOf(h.Key); ok {
				cos[h.Key] = c
			}
		}
	}
	maxCos := math.Inf(-1)
	for _, c := range cos {
		maxCos = max(maxCos, c)
	}
	keys := make([]string, 0, len(cos)+len(bmOf))
	for k := range cos {
		keys = append(keys, k)
	}
	for k := range bmOf {
		if _, ok := cos[k]; !ok {
			keys = append(keys, k)
		}
	}
	out := make([]Hit, len(keys))
	for i, k := range keys {
		sBM := 0.0
		if maxBM > 0 {
			sBM = bmOf[k] / maxBM
		}
		// Without a likeness to go by (the query has no vector: none of
		// its words is known to the model) the ranking is BM25's, and a
		// document with no vector yet (queued for the model) counts its
		// BM25 share for both: neither is held down for what the model
		// has not said.
		sVec := sBM
		if c, ok := cos[k]; ok && maxCos > f.Floor {
			sVec = min(1, max(0, (c-f.Floor)/(maxCos-f.Floor)))
		}
		out[i] = Hit{Key: k, Score: f.Alpha*sVec + (1-f.Alpha)*sBM}
	}
	SortHits(out)
	return out
}

// sortHits orders hits by score, then key.
func SortHits(hits []Hit) {
	slices.SortFunc(hits, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
}

// cut drops the hits below minScore and keeps the first topK.
func Cut(hits []Hit, minScore float64, topK int) []Hit {
	kept := hits[:0]
	for _, h := range hits {
		if h.Score >= minScore {
			kept = append(kept, h)
		}
	}
	return kept[:min(len(kept), topK)]
}

// matcher returns a function reporting whether the index holds key and
// it passes q's filters.
func (ix *Index) Matcher(q Query) func(key string) bool {
	ix.mu.RLock()
	q.Repo = ix.repoLocked(q)
	ix.mu.RUnlock()
	return func(key string) bool {
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		id, ok := ix.byKey[key]
		return ok && q.match(ix.docs[id])
	}
}

// Doc is a document of RankDocs.
type Doc struct {
	Key   string
	Value []byte
	Meta  DocMeta
}

// embedBatch is how many texts one Embed call takes.
const EmbedBatch = 64

// RankDocs ranks docs, an in-memory corpus (no store, no redaction: the
// caller gives what may be embedded), by q in q.Mode (ModeDefault: hybrid
// with e, keyword without) with fusion f, as a Service would rank the
// same documents: the same filters, TopK, MinScore, candidates and
// fusion. It embeds every document (in batches of 64) and the query; the
// result is deterministic for a deterministic embedder. A mode that needs
// an embedder without one is an error wrapping ErrQuery.
func RankDocs(ctx context.Context, e embed.Embedder, docs []Doc, q Query, f Fusion) ([]Hit, error) {
	mode, err := ResolveMode(q.Mode, e != nil)
	if err != nil {
		return nil, err
	}
	ix := New(Options{})
	for _, d := range docs {
		ix.Put(d.Key, d.Value, d.Meta)
	}
	if mode == ModeKeyword || strings.TrimSpace(q.Text) == "" {
		return ix.Search(q), nil
	}
	vx := NewVectors(e.ID())
	for i := 0; i < len(docs); i += EmbedBatch {
		batch := docs[i:min(i+EmbedBatch, len(docs))]
		texts := make([]string, len(batch))
		for j, d := range batch {
			texts[j] = EmbedText(d.Key, d.Value)
		}
		vecs, err := e.Embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("search: embed documents: %w", err)
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("search: embed documents: %d vectors for %d texts", len(vecs), len(batch))
		}
		for j, d := range batch {
			if err := vx.Put(d.Key, StampOf(d.Meta), vecs[j]); err != nil {
				return nil, err
			}
		}
	}
	return rankIndexed(ctx, e, ix, vx, q, mode, f)
}

// rankIndexed ranks the documents of ix and vx by q in mode (semantic or
// hybrid), embedding the query with e.
func rankIndexed(ctx context.Context, e embed.Embedder, ix *Index, vx *Vectors, q Query, mode Mode, f Fusion) ([]Hit, error) {
	topK := q.TopK
	if topK <= 0 {
		topK = 10
	}
	qvs, err := e.Embed(ctx, []string{q.Text})
	if err != nil {
		return nil, fmt.Errorf("search: embed the query: %w", err)
	}
	if len(qvs) != 1 {
		return nil, errors.New("search: embed the query: no vector")
	}
	qv := NewQueryVec(qvs[0])
	keep := ix.Matcher(q)
	if mode == ModeSemantic {
		return Cut(vx.Nearest(qv, topK, keep, f.Floor), q.MinScore, topK), nil
	}
	n := f.PerRanking(topK)
	bq := q
	bq.TopK, bq.MinScore = n, 0
	hits := Fuse(ix.Search(bq), vx.Nearest(qv, n, keep, f.Floor), func(k string) (float64, bool) { return vx.Cosine(k, qv) }, f)
	return Cut(hits, q.MinScore, topK), nil
}
