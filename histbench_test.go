package memfs_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/etcdtest"
)

// BenchmarkFlush10000Notes is a flush of 10,000 new notes of 1 KiB into
// a fresh store of each kind: with history, the objects, version records
// and group it writes (compare the same build with the recorder reduced
// to the append: BENCHMARKS.md, "History: what recording a version costs
// a flush").
func BenchmarkFlush10000Notes(b *testing.B) {
	note := make([]byte, 1024)
	for i := range note {
		note[i] = 'a' + byte(i%26)
	}
	var srv *etcdtest.Server
	ns := 0
	stores := []struct {
		name string
		open func(b *testing.B) (backend.Store, string)
	}{
		{"badger", func(b *testing.B) (backend.Store, string) {
			dir := b.TempDir()
			st, err := badgerstore.Open(dir, badgerstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return st, filepath.Join(dir, badgerstore.JournalName)
		}},
		{"dir", func(b *testing.B) (backend.Store, string) {
			dir := b.TempDir()
			st, err := dirstore.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			return st, filepath.Join(dir, dirstore.JournalName)
		}},
		{"etcd", func(b *testing.B) (backend.Store, string) {
			if srv == nil {
				srv = etcdtest.Start(b)
			}
			ns++
			st, err := etcdstore.Open(context.Background(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: fmt.Sprintf("flush%d", ns)})
			if err != nil {
				b.Fatal(err)
			}
			return st, filepath.Join(b.TempDir(), "journal")
		}},
	}
	for _, s := range stores {
		b.Run(s.name, func(b *testing.B) {
			srv = nil // a server lives as long as the benchmark that started it
			for b.Loop() {
				b.StopTimer()
				st, journal := s.open(b)
				f, err := memfs.Open(b.Context(), st, histOpts(journal))
				if err != nil {
					b.Fatal(err)
				}
				for i := range 10000 {
					v := append(fmt.Appendf(nil, "note %d\n", i), note...)
					if err := f.Session().Set(fmt.Sprintf("memory/notes/n%05d.md", i), v); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if err := f.Flush(b.Context()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				f.Close(b.Context())
				b.StartTimer()
			}
		})
	}
}
