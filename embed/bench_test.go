package embed_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/embed"
)

var benchSentences = []string{
	"The deploy pipeline builds the container image and pushes it to the registry before the rollout starts.",
	"Invoices older than seven years are archived to cold storage and deleted after the audit closes.",
	"When the parser sees an unknown token it records the position and skips to the next statement.",
	"Our team meets on Tuesdays to review the backlog, estimate new stories and plan the next sprint.",
	"The cache keeps recently used pages in memory and evicts the oldest entries when it grows too large.",
	"Remember to rotate the API credentials every quarter and to revoke the keys of people who left.",
	"The customer asked why the monthly report showed two payments for the same order in March.",
	"Benchmarks run on a quiet machine with two cores; we compare medians over ten runs, not single numbers.",
	"The user prefers short answers, British spelling and code examples in Go rather than Python.",
	"A failing health check takes the instance out of the load balancer until it answers again.",
	"The migration script copies every row, verifies the checksums and only then switches the readers.",
	"Weekly notes: fixed the flaky upload test, wrote the design doc for search, reviewed three changes.",
}

// benchNotes returns n English notes of about 1.3 KiB each.
func benchNotes(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	notes := make([]string, n)
	for i := range notes {
		var b strings.Builder
		for b.Len() < 1300 {
			b.WriteString(benchSentences[r.IntN(len(benchSentences))])
			b.WriteByte(' ')
		}
		notes[i] = b.String()
	}
	return notes
}

// benchEmbedder is the real table when installed, else a synthetic one
// of 150,000 words of dimension 100 that knows the notes' words.
func benchEmbedder(b *testing.B) (*embed.Static, string) {
	path := filepath.Join(embed.DefaultDir(nil), embed.DefaultTable)
	if s, err := embed.OpenStatic(path); err == nil {
		return s, "real"
	} else if !errors.Is(err, fs.ErrNotExist) {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	t := &embed.Table{Name: "bench@1", Dim: 100}
	seen := map[string]bool{}
	add := func(w string) {
		if seen[w] {
			return
		}
		seen[w] = true
		v := make([]float32, 100)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		q, s := embed.Quantize(v)
		t.Words = append(t.Words, w)
		t.Scales = append(t.Scales, s)
		t.Weights = append(t.Weights, r.Float32())
		t.Vectors = append(t.Vectors, q...)
	}
	for _, s := range benchSentences {
		embed.Tokenize(s, func(w []byte) { add(string(w)) })
	}
	for len(t.Words) < embed.DefaultMaxWords {
		add(fmt.Sprintf("w%x", r.Uint64()))
	}
	p := filepath.Join(b.TempDir(), "bench.mfse")
	if err := embed.WriteTableFile(p, t); err != nil {
		b.Fatal(err)
	}
	s, err := embed.OpenStatic(p)
	if err != nil {
		b.Fatal(err)
	}
	return s, "synthetic"
}

// BenchmarkStaticEmbed embeds 1.3 KiB notes, 64 a call.
func BenchmarkStaticEmbed(b *testing.B) {
	s, kind := benchEmbedder(b)
	b.Logf("table: %s (%s)", kind, s.ID())
	notes := benchNotes(64)
	size := 0
	for _, n := range notes {
		size += len(n)
	}
	ctx := context.Background()
	if _, err := s.Embed(ctx, notes[:1]); err != nil { // builds the index
		b.Fatal(err)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Embed(ctx, notes); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(notes))/b.Elapsed().Seconds(), "notes/s")
}

// BenchmarkStaticLoad opens the real table and builds its index (what a
// mount pays on its first semantic search), and reports the heap it
// keeps.
func BenchmarkStaticLoad(b *testing.B) {
	path := filepath.Join(embed.DefaultDir(nil), embed.DefaultTable)
	realTable(b)
	var open, index time.Duration
	var heap uint64
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		t0 := time.Now()
		s, err := embed.OpenStatic(path)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := s.Embed(context.Background(), []string{"x"}); err != nil {
			b.Fatal(err)
		}
		index += time.Since(t1)
		open += t1.Sub(t0)
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heap = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(s)
	}
	b.ReportMetric(float64(open.Milliseconds())/float64(b.N), "open-ms")
	b.ReportMetric(float64(index.Milliseconds())/float64(b.N), "index-ms")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
}
