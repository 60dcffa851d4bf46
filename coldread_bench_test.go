package memfs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/etcdtest"
)

// noReadAhead is an etcd store that reads nothing ahead, so that a
// session loads one value per open, as it did before read-ahead.
type noReadAhead struct{ *etcdstore.Store }

func (noReadAhead) ReadAhead() (int, int64, int64) { return 0, 0, 0 }

// BenchmarkColdRead10000 opens and reads 10,000 files of 1–4 KiB in 100
// directories through a fresh session (nothing loaded but memory/) on
// each store: badger, etcd, and etcd without read-ahead (one round trip
// per file, as before). The stores are written once, untimed.
func BenchmarkColdRead10000(b *testing.B) {
	const files, dirs = 10000, 100
	var entries []backend.Entry
	for i := range files {
		v := fmt.Appendf(nil, "note %d\n%0*d\n", i, 1000+(i*37)%3000, i)
		entries = append(entries, backend.Entry{Key: fmt.Sprintf("notes/d%02d/f%05d.md", i%dirs, i), Value: v,
			Info: backend.Info{Mode: 0o644, MTime: time.Now(), UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}})
	}
	save := func(b *testing.B, st backend.Store) {
		for start := 0; start < len(entries); start += 50 {
			if err := st.Save(context.Background(), entries[start:min(start+50, len(entries))]...); err != nil {
				b.Fatal(err)
			}
		}
	}
	srv := etcdtest.Start(b)
	openEtcd := func(b *testing.B) *etcdstore.Store {
		st, err := etcdstore.Open(context.Background(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "coldread"})
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	seed := openEtcd(b)
	save(b, seed)
	seed.Close()
	bdir := b.TempDir()
	bst, err := badgerstore.Open(bdir, badgerstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	save(b, bst)
	bst.Close()
	stores := []struct {
		name string
		open func(b *testing.B) backend.Store
	}{
		{"badger", func(b *testing.B) backend.Store {
			st, err := badgerstore.Open(bdir, badgerstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return st
		}},
		{"etcd", func(b *testing.B) backend.Store { return openEtcd(b) }},
		{"etcd-no-readahead", func(b *testing.B) backend.Store { return noReadAhead{openEtcd(b)} }},
	}
	for _, s := range stores {
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				f, err := memfs.Open(context.Background(), s.open(b), memfs.Options{
					JournalPath: filepath.Join(b.TempDir(), "journal"), Bootstrap: []string{"memory/"}})
				if err != nil {
					b.Fatal(err)
				}
				c := f.Session()
				buf := make([]byte, 8192)
				b.StartTimer()
				for _, e := range entries {
					h, err := c.Open(context.Background(), e.Key)
					if err != nil {
						b.Fatal(err)
					}
					if n, _ := h.ReadAt(buf, 0); n != len(e.Value) {
						b.Fatalf("%s: read %d bytes, want %d", e.Key, n, len(e.Value))
					}
					h.Close()
				}
				b.StopTimer()
				f.Close(context.Background())
				b.StartTimer()
			}
		})
	}
}
