package live

import (
	"context"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/memfs/memfs/embed"
	"github.com/memfs/memfs/search/internal/searchtest"
)

// fakeEmbedder is a deterministic bag of words: each word (after a small
// synonym table, so that "invoice" and "bill" share a direction; a few
// stop words left out) is hashed to a signed unit direction of 64
// dimensions, and the sum normalized.
type fakeEmbedder struct {
	id    string
	delay time.Duration // each call waits this long (or until its context ends)

	mu    sync.Mutex // guards texts
	texts []string   // every text embedded
	calls atomic.Int64
}

var _ embed.Embedder = (*fakeEmbedder)(nil)

const fakeDim = 64

// fakeSynonyms maps a word to the word whose direction it shares.
var fakeSynonyms = map[string]string{
	"bill": "invoice", "bills": "invoice", "invoices": "invoice", "receipt": "invoice",
	"car": "automobile", "cars": "automobile", "vehicle": "automobile",
	"doctor": "physician", "physicians": "physician", "medic": "physician",
	"dog": "canine", "puppy": "canine", "hound": "canine",
	"fix": "repair", "mend": "repair", "repaired": "repair",
	"buy": "purchase", "bought": "purchase", "shop": "purchase",
	"happy": "glad", "cheerful": "glad", "joyful": "glad",
	"big": "large", "huge": "large",
	"rain": "weather", "storm": "weather", "forecast": "weather",
}

var fakeStop = map[string]bool{"the": true, "a": true, "an": true, "of": true, "to": true, "and": true,
	"is": true, "for": true, "in": true, "on": true, "my": true, "how": true, "do": true, "i": true, "what": true, "md": true, "memory": true}

func (f *fakeEmbedder) ID() string {
	if f.id == "" {
		return "fake:bow64@1"
	}
	return f.id
}

func (f *fakeEmbedder) Dim() int { return fakeDim }

func (f *fakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.calls.Add(1)
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	f.texts = append(f.texts, texts...)
	f.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = fakeVector(t)
	}
	return out, nil
}

func fakeVector(text string) []float32 {
	v := make([]float32, fakeDim)
	// Its own words, not the index's terms (search.Tokenize stems): a
	// model sees the text as written, and the tables hold whole words.
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		if fakeStop[w] {
			continue
		}
		if s, ok := fakeSynonyms[w]; ok {
			w = s
		}
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		// Three signed coordinates per word.
		for j := range 3 {
			d := (x >> (j * 8)) % fakeDim
			if x>>(32+j)&1 == 1 {
				v[d]++
			} else {
				v[d]--
			}
		}
	}
	searchtest.Normalize(v)
	return v
}

// embedded returns every text f embedded.
func (f *fakeEmbedder) embedded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.texts)
}
