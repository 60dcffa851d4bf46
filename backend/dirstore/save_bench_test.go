package dirstore

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
)

// BenchmarkSave compares the naive strategy (fsync, rename and directory
// fsync for each file in turn) with the batched one that Save uses, and with
// the syncfs variant that the package doc explains rejecting, for batches
// that overwrite existing 4 KiB keys spread over 10 directories. A batch of
// one takes the same path in all three. The store lives in b.TempDir: set
// TMPDIR to measure another filesystem.
func BenchmarkSave(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		for _, st := range []struct {
			name string
			s    strategy
		}{
			{"naive", naive},
			{"batched", batched},
			{"syncfs", batchedSyncfs},
		} {
			b.Run(fmt.Sprintf("files=%d/%s", n, st.name), func(b *testing.B) {
				s, err := open(b.TempDir(), options{strategy: st.s})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				batch := make([]backend.Entry, n)
				value := make([]byte, 4096)
				for i := range batch {
					batch[i] = backend.Entry{
						Key:   fmt.Sprintf("d%02d/f%04d.md", i%10, i),
						Value: value,
						Info:  backend.Info{Mode: 0o644, MTime: time.Now(), UID: uint32(os.Getuid()), GID: uint32(os.Getgid())},
					}
				}
				if err := s.Save(b.Context(), batch...); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(n * len(value)))
				for b.Loop() {
					if err := s.Save(b.Context(), batch...); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "files/s")
			})
		}
	}
}
