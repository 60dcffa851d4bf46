package dirstore

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkList measures List, the mount's bootstrap, over a store of
// small notes spread over 1,000 directories (written behind the store's
// back, without fsync, to keep the setup short). The store lives in
// b.TempDir: set TMPDIR to measure another filesystem.
func BenchmarkList(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			for i := range n {
				p := filepath.Join(dir, fmt.Sprintf("d%02d/e%02d/f%06d.md", i%10, i/10%100, i))
				if i < 1000 {
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						b.Fatal(err)
					}
				}
				if err := os.WriteFile(p, []byte("note"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			s, err := open(dir, options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for b.Loop() {
				es, err := s.List(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				if len(es) < n {
					b.Fatalf("List = %d entries, want at least %d", len(es), n)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}
