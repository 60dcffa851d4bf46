package memfs_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/badgerstore"
)

// BenchmarkFlush10000Notes is a flush of 10,000 new notes of 1 KiB into
// a badger store: with history, the objects, version records and group
// it writes (compare a build without history: BENCHMARKS.md).
func BenchmarkFlush10000Notes(b *testing.B) {
	note := make([]byte, 1024)
	for i := range note {
		note[i] = 'a' + byte(i%26)
	}
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		st, err := badgerstore.Open(dir, badgerstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		f, err := memfs.Open(b.Context(), st, histOpts(filepath.Join(dir, badgerstore.JournalName)))
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
}
