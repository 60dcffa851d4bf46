package badgerstore

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
)

// BenchmarkLoad loads every value of a store, one Load per key: 10,000
// values of 4 KiB (in the LSM tree, beside their keys) and 500 of 128 KiB
// (in the value log, where badger checks each value's checksum as it
// reads it).
func BenchmarkLoad(b *testing.B) {
	for _, tc := range []struct {
		name    string
		n, size int
	}{
		{"10000x4KiB", 10_000, 4 << 10},
		{"500x128KiB", 500, 128 << 10},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := Open(b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			keys := make([]string, tc.n)
			for start := 0; start < tc.n; start += 100 {
				batch := make([]backend.Entry, 0, 100)
				for i := start; i < min(start+100, tc.n); i++ {
					keys[i] = fmt.Sprintf("memory/d%02d/f%05d.md", i%10, i)
					batch = append(batch, entry(keys[i], randomBytes(tc.size, uint64(i))))
				}
				if err := s.Save(b.Context(), batch...); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(tc.n * tc.size))
			for b.Loop() {
				for _, k := range keys {
					if _, err := s.Load(b.Context(), k); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkOpenClean opens and closes (writable) a store that was closed
// cleanly, whose newest value log is empty or holds 64 MiB of values (what
// one session that saved large files leaves): what Open's look at the
// newest value log and memtable logs costs a mount. Each open is of a
// fresh copy of the store (an open starts a new value log).
func BenchmarkOpenClean(b *testing.B) {
	for _, mib := range []int{0, 64} {
		b.Run(fmt.Sprintf("newest-vlog-%dMiB", mib), func(b *testing.B) {
			tmpl := b.TempDir()
			s, err := Open(tmpl, Options{})
			if err != nil {
				b.Fatal(err)
			}
			for i := range mib {
				if err := s.Save(b.Context(), entry(fmt.Sprintf("memory/big%03d.bin", i), randomBytes(1<<20, uint64(i)))); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			ents, err := os.ReadDir(tmpl)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), "store")
				if err := os.Mkdir(dir, 0o700); err != nil {
					b.Fatal(err)
				}
				for _, e := range ents {
					if err := copySparse(filepath.Join(dir, e.Name()), filepath.Join(tmpl, e.Name())); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				s, err := Open(dir, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkKeepDamagedClean is the part of BenchmarkOpenClean that
// keepDamaged adds: reading the newest value log of a store that was
// closed cleanly (empty, or 64 MiB of values) through its checksums.
func BenchmarkKeepDamagedClean(b *testing.B) {
	for _, mib := range []int{0, 64} {
		b.Run(fmt.Sprintf("newest-vlog-%dMiB", mib), func(b *testing.B) {
			dir := b.TempDir()
			s, err := Open(dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			for i := range mib {
				if err := s.Save(b.Context(), entry(fmt.Sprintf("memory/big%03d.bin", i), randomBytes(1<<20, uint64(i)))); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(mib) << 20)
			for b.Loop() {
				if err := keepDamaged(dir, time.Now(), slog.New(slog.DiscardHandler)); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, DamagedDir)); err == nil {
				b.Fatal("a clean store's logs were kept aside")
			}
		})
	}
}
