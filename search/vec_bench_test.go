package search

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/memfs/memfs/embed"
	"github.com/memfs/memfs/search/internal/searchtest"
)

// randEmbedder gives each text a random unit vector of dim 100 seeded by
// the text's hash: the cost of the index, without a model.
type randEmbedder struct{}

func (randEmbedder) ID() string { return "synthetic:rand100@1" }
func (randEmbedder) Dim() int   { return 100 }
func (randEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		out[i] = randomUnit(rand.New(rand.NewPCG(h.Sum64(), 1)), 100)
	}
	return out, nil
}

// benchVectors embeds the notes keys/values (as a Service does, in
// batches) into a new vector index, with the synthetic embedder.
func benchVectors(b *testing.B, keys []string, values [][]byte) *Vectors {
	return embedVectors(b, randEmbedder{}, keys, values)
}

// embedVectors embeds the notes keys/values with e, in batches, into a
// new vector index.
func embedVectors(b *testing.B, e embed.Embedder, keys []string, values [][]byte) *Vectors {
	b.Helper()
	vx := NewVectors(e.ID())
	for i := 0; i < len(keys); i += EmbedBatch {
		j := min(i+EmbedBatch, len(keys))
		texts := make([]string, 0, j-i)
		for k := i; k < j; k++ {
			texts = append(texts, EmbedText(keys[k], values[k]))
		}
		vecs, err := e.Embed(context.Background(), texts)
		if err != nil {
			b.Fatal(err)
		}
		for k := i; k < j; k++ {
			if err := vx.Put(keys[k], Stamp{Size: int64(len(values[k]))}, vecs[k-i]); err != nil {
				b.Fatal(err)
			}
		}
	}
	return vx
}

// BenchmarkHybridSearch runs a fixed set of 100 queries in hybrid mode
// (BM25 top-N, vector top-N over every note, fusion; N = 100) and reports
// the latency percentiles of single queries. BenchmarkSemanticSearch is
// the vector half alone (top 10).
func BenchmarkHybridSearch(b *testing.B) { benchRank(b, ModeHybrid) }

func BenchmarkSemanticSearch(b *testing.B) { benchRank(b, ModeSemantic) }

func benchRank(b *testing.B, mode Mode) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ix, _ := benchIndex(b, n)
			keys, values := benchNotes(n)
			vx := benchVectors(b, keys, values)
			keys, values = nil, nil // a Service holds no values
			queries := newGen(99).queries(100)
			runtime.GC()
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := Query{Text: queries[i%len(queries)]}
				i++
				t := time.Now()
				if _, err := rankIndexed(context.Background(), randEmbedder{}, ix, vx, q, mode, DefaultFusion()); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			reportPercentilesMS(b, lat)
		})
	}
}

func reportPercentilesMS(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkVecHeap reports the heap and the record bytes of the vectors
// of n notes (dim 100), per note.
func BenchmarkVecHeap(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			keys, values := benchNotes(n)
			var heapPer, diskPer float64
			for b.Loop() {
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				vx := benchVectors(b, keys, values)
				runtime.GC()
				runtime.ReadMemStats(&m1)
				heapPer = float64(m1.HeapAlloc-m0.HeapAlloc) / float64(n)
				st := searchtest.NewMemSys()
				if _, err := vx.Save(context.Background(), st, nil); err != nil {
					b.Fatal(err)
				}
				diskPer = float64(st.Size(b)) / float64(n)
				runtime.KeepAlive(vx)
			}
			b.ReportMetric(heapPer, "heapB/note")
			b.ReportMetric(diskPer, "diskB/note")
		})
	}
}

// BenchmarkVecFlush indexes the vectors of a flush of 10,000 notes (embed
// the texts, quantize, save every shard): with the synthetic embedder (the
// index's own cost) and with the default static table when it is
// installed (what a mount spends).
func BenchmarkVecFlush(b *testing.B) {
	keys, values := benchNotes(10_000)
	run := func(b *testing.B, e embed.Embedder) {
		for b.Loop() {
			vx := embedVectors(b, e, keys, values)
			if _, err := vx.Save(context.Background(), searchtest.NewMemSys(), nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/flush")
	}
	b.Run("synthetic", func(b *testing.B) { run(b, randEmbedder{}) })
	b.Run("static", func(b *testing.B) {
		e, err := embed.Open("default", embed.Options{})
		if err != nil {
			b.Skipf("no default embedder: %v", err)
		}
		run(b, e)
	})
}
