package search

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/memfs/memfs/search/internal/searchtest"
)

// The benchmarks run on generated notes (gen_test.go): 500 B to 2 KiB of
// English-like text with a Zipf vocabulary of 20,000 words and one word in
// twelve a code identifier, the same notes in every run.

var benchSizes = []int{10_000, 100_000}

func benchNotes(n int) ([]string, [][]byte) { return newGen(42).notes(n) }

func benchIndex(b *testing.B, n int) (*Index, int) {
	b.Helper()
	keys, values := benchNotes(n)
	ix := New(Options{})
	bytes := 0
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i, k := range keys {
		ix.Put(k, values[i], DocMeta{Size: int64(len(values[i])), MTime: t0.Add(time.Duration(i) * time.Second)})
		bytes += len(values[i])
	}
	return ix, bytes
}

// BenchmarkBuild indexes n notes per iteration.
func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			keys, values := benchNotes(n)
			size := 0
			for _, v := range values {
				size += len(v)
			}
			b.SetBytes(int64(size))
			for b.Loop() {
				ix := New(Options{})
				for i, k := range keys {
					ix.Put(k, values[i], DocMeta{Size: int64(len(values[i]))})
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/doc")
		})
	}
}

// BenchmarkHeap reports the heap the index of n notes takes, per note.
func BenchmarkHeap(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			keys, values := benchNotes(n)
			size := 0
			for _, v := range values {
				size += len(v)
			}
			var perDoc float64
			for b.Loop() {
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				ix := New(Options{})
				for i, k := range keys {
					ix.Put(k, values[i], DocMeta{Size: int64(len(values[i]))})
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				perDoc = float64(m1.HeapAlloc-m0.HeapAlloc) / float64(n)
				runtime.KeepAlive(ix)
			}
			b.ReportMetric(perDoc, "heapB/doc")
			b.ReportMetric(float64(size)/float64(n), "valueB/doc")
		})
	}
}

// BenchmarkSearch runs a fixed set of 100 queries and reports the latency
// percentiles of single queries.
func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ix, _ := benchIndex(b, n)
			queries := newGen(99).queries(100)
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := Query{Text: queries[i%len(queries)]}
				i++
				t := time.Now()
				ix.Search(q)
				lat = append(lat, time.Since(t))
			}
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// BenchmarkSearchFiltered: a query narrowed to one directory of 37.
func BenchmarkSearchFiltered(b *testing.B) {
	ix, _ := benchIndex(b, 10_000)
	queries := newGen(99).queries(100)
	i := 0
	for b.Loop() {
		ix.Search(Query{Text: queries[i%len(queries)], Prefix: "memory/d07/"})
		i++
	}
}

// BenchmarkSave writes every shard, or the one shard a Put changed.
func BenchmarkSave(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("all/%d", n), func(b *testing.B) {
			ix, _ := benchIndex(b, n)
			sys := searchtest.NewMemSys()
			for b.Loop() {
				ix.mu.Lock()
				for s := range Shards {
					ix.saved[s] = ix.version[s] - 1
				}
				ix.mu.Unlock()
				if k, err := ix.Save(b.Context(), sys); err != nil || k != Shards {
					b.Fatalf("Save: %d, %v", k, err)
				}
			}
			b.ReportMetric(float64(sys.Size(b))/float64(n), "recordB/doc")
		})
		b.Run(fmt.Sprintf("one/%d", n), func(b *testing.B) {
			ix, _ := benchIndex(b, n)
			sys := searchtest.NewMemSys()
			if _, err := ix.Save(b.Context(), sys); err != nil {
				b.Fatal(err)
			}
			v := newGen(5).note(1000)
			for b.Loop() {
				ix.Put("memory/d00/n000000.md", v, DocMeta{Size: int64(len(v))})
				if k, err := ix.Save(b.Context(), sys); err != nil || k != 1 {
					b.Fatalf("Save: %d, %v", k, err)
				}
			}
			b.ReportMetric(float64(len(sys.Rec(b, ShardName(ShardOf("memory/d00/n000000.md"))))), "shardB")
		})
	}
}

// BenchmarkLoad reads an index of n notes from its shard records.
func BenchmarkLoad(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ix, _ := benchIndex(b, n)
			sys := searchtest.NewMemSys()
			if _, err := ix.Save(b.Context(), sys); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := Load(b.Context(), sys, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPutReplace replaces one note in a full index: the cost of
// removing its postings from long lists.
func BenchmarkPutReplace(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ix, _ := benchIndex(b, n)
			keys, values := benchNotes(100)
			i := 0
			for b.Loop() {
				j := i * 7919 % n // spread over the index
				ix.Put(fmt.Sprintf("memory/d%02d/n%06d.md", j%37, j), values[i%len(keys)], DocMeta{})
				i++
			}
		})
	}
}

func BenchmarkTokenize(b *testing.B) {
	v := string(newGen(1).note(64 << 10))
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		Tokenize(v)
	}
}

func BenchmarkSnippet(b *testing.B) {
	v := newGen(1).note(2000)
	q := Query{Text: newGen(99).queries(1)[0]}
	for b.Loop() {
		snippet(v, q, 160)
	}
}
