package memfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
// leaves the ranking to keywords (logged). e opens at the first ranking
// (embed.Resolve); the notes' redacted texts are kept (redactedNotes), so
// that the next pack over the same notes redacts none of them again.
func packRank(red *redact.Redactor, e embed.Embedder, log *slog.Logger) contextpack.RankFunc {
	var fn redactFunc
	if red != nil {
		fn = red.Redact
	}
	return rankWith(fn, e, log)
}

// redactFunc is what the pack's ranker redacts with
// (redact.Redactor.Redact; nil for nothing).
type redactFunc func(key string, v []byte) ([]byte, []redact.Finding)

// rankWith is packRank with red for the redactor.
func rankWith(red redactFunc, e embed.Embedder, log *slog.Logger) contextpack.RankFunc {
	notes := &redactedNotes{red: red, max: 1 << 16, m: make(map[noteAddr]redactedNote)}
	var once sync.Once
	return func(ctx context.Context, query string, docs []contextpack.Doc) ([]float64, error) {
		once.Do(func() {
			if e = embed.Resolve(e); e != nil {
				e = newVecCache(e, 8192)
			}
		})
		in := make([]search.Doc, 0, len(docs))
		at := make(map[string]int, len(docs))
		for i, d := range docs {
			r := notes.get(d)
			if r.nameSecret {
				// Its name holds a secret: as in the search index, it is
				// not ranked (its words would go to the model).
				continue
			}
			in = append(in, search.Doc{Key: d.Key, Value: r.value})
			at[d.Key] = i
		}
		if red != nil {
			q, _ := red("", []byte(query))
			query = string(q)
		}
		q := search.Query{Text: query, TopK: max(1, len(in))}
		var hits []search.Hit
		err := errors.New("no embedder")
		if e != nil {
			// A model that fails or is slow leaves the pack to keywords,
			// as search does, rather than failing the pack.
			ectx, cancel := context.WithTimeout(ctx, rankWait)
			hits, err = search.RankDocs(ectx, e, in, q, search.FusionOf(e))
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

// redactedNotes keeps what a ranker redacted of each note, by its key and
// the SHA-256 of its value (its content address, with the key, which a
// redactor's rules may look at), up to max notes: a pack over notes that
// did not change since the last one redacts none of them again
// (measured on testdata's 90 notes, 90 KB: the default rules take 4 to 8
// ms, their SHA-256 0.06 ms). A note in which nothing was found keeps no
// copy. When full it forgets everything and starts again.
type redactedNotes struct {
	red redactFunc // nil: nothing is redacted
	max int

	mu sync.Mutex // guards m
	m  map[noteAddr]redactedNote
}

// noteAddr is a note's key and the SHA-256 of its value.
type noteAddr struct {
	key string
	sum [sha256.Size]byte
}

// redactedNote is what a ranker takes of a note.
type redactedNote struct {
	nameSecret bool   // its key holds a secret: it is not ranked
	value      []byte // its redacted text
}

// get returns d redacted, from the cache when d's value is there.
func (c *redactedNotes) get(d contextpack.Doc) redactedNote {
	if c.red == nil {
		return redactedNote{value: []byte(d.Text)}
	}
	a := addrOf(d)
	c.mu.Lock()
	r, ok := c.m[a]
	c.mu.Unlock()
	if !ok {
		r = c.redact(d)
		c.mu.Lock()
		if len(c.m) >= c.max {
			clear(c.m)
		}
		c.m[a] = r
		c.mu.Unlock()
	}
	if !r.nameSecret && r.value == nil {
		r.value = []byte(d.Text) // nothing found in it
	}
	return r
}

// redact redacts d: its name, then, when that holds no secret, its text
// (nil when nothing is found in it).
func (c *redactedNotes) redact(d contextpack.Doc) redactedNote {
	if _, found := c.red(d.Key, []byte(d.Key)); len(found) > 0 {
		return redactedNote{nameSecret: true}
	}
	if v, found := c.red(d.Key, []byte(d.Text)); len(found) > 0 {
		return redactedNote{value: v}
	}
	return redactedNote{}
}

// addrOf returns d's key and content address: its SHA256, or, when it
// has none, the SHA-256 of its text.
func addrOf(d contextpack.Doc) noteAddr {
	a := noteAddr{key: d.Key}
	if len(d.SHA256) == 2*sha256.Size {
		if _, err := hex.Decode(a.sum[:], []byte(d.SHA256)); err == nil {
			return a
		}
	}
	a.sum = sha256.Sum256([]byte(d.Text))
	return a
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
	// Not opened for the status (embed.Lazy): "default" until it is.
	name := embed.Label(f.opts.Embedder)
	if name == "" {
		return status.KeywordOnly // none, or it did not open
	}
	line := "hybrid, embedder " + name
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

// Embedder is Options.Embedder, opened (embed.Resolve: the default model
// opens at its first use): nil when search is keyword-only.
func (f *FS) Embedder() embed.Embedder { return embed.Resolve(f.opts.Embedder) }

// packEmbedder is the ID of the model that ranks a pack's notes for a
// query by meaning ("" for none): contextpack.Options.Embedder.
func (f *FS) packEmbedder() string {
	f.packRank()
	if e := embed.Resolve(f.rankEmb); e != nil {
		return e.ID()
	}
	return ""
}
