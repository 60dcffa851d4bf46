package live

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/session"
)

var flushWords = strings.Fields("the kernel caches attributes for a while agents keep notes about tools errors tests " +
	"deploy config token review fuse lookup getattr readdir rename flush journal badger store memory skill " +
	"camelCaseName snake_case_name path/to/file.go retry timeout latency index search summary context")

func flushNote(r *rand.Rand, n int) []byte {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(flushWords[r.IntN(len(flushWords))])
		if r.IntN(12) == 0 {
			b.WriteString(".\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return []byte(b.String())
}

// BenchmarkFlushIndex flushes 10,000 new ~1 KiB notes with the search
// index following the flush (indexing the saved values and saving the
// changed shards, which the Service's worker does after the flush
// returns) and without it: the index's cost at flush.
func BenchmarkFlushIndex(b *testing.B) {
	const n = 10_000
	r := rand.New(rand.NewPCG(1, 2))
	notes := make([][]byte, n)
	for i := range notes {
		notes[i] = flushNote(r, 1024)
	}
	stores := map[string]func(string) (backend.SysStore, error){
		"dir":    func(d string) (backend.SysStore, error) { return dirstore.Open(d) },
		"badger": func(d string) (backend.SysStore, error) { return badgerstore.Open(d, badgerstore.Options{}) },
	}
	for _, kind := range []string{"dir", "badger"} {
		for _, withIndex := range []bool{false, true} {
			name := kind + "/noindex"
			if withIndex {
				name = kind + "/index"
			}
			b.Run(name, func(b *testing.B) {
				st, err := stores[kind](b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				var s *Service
				opts := session.Options{}
				if withIndex {
					opts.Saved = func(ctx context.Context, saved []backend.Entry, deleted []string) { s.Saved(ctx, saved, deleted) }
				}
				c := session.NewContext(st, opts)
				if withIndex {
					red, err := redact.New(redact.Config{})
					if err != nil {
						b.Fatal(err)
					}
					if s, err = OpenService(b.Context(), c, st, ServiceOptions{Redactor: red}); err != nil {
						b.Fatal(err)
					}
					defer s.Close(b.Context())
				}
				round := 0
				for b.Loop() {
					b.StopTimer()
					round++
					for i := range n {
						if err := c.Set(fmt.Sprintf("r%d/memory/note-%05d.md", round, i), append([]byte(nil), notes[i]...)); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
					if err := c.Flush(b.Context()); err != nil {
						b.Fatal(err)
					}
					if s != nil {
						// What the worker does after the flush: index
						// and save the changed shards.
						s.apply()
						s.save(b.Context(), false)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
			})
		}
	}
}
