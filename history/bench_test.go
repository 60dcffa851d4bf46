package history_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/history"
)

// What history adds to the CPU of a flush of 10,000 notes of 4 KiB: a
// plan of each value (one object: its SHA-256) and of the versions (JSON
// records and the group), no I/O.
func BenchmarkPlanFlush10000Notes(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	entries := make([]backend.Entry, 10000)
	for i := range entries {
		entries[i] = backend.Entry{Key: fmt.Sprintf("memory/notes/n%05d.md", i), Value: randomBytes(r, 4096), Info: backend.Info{Mode: 0o644}}
	}
	h := history.New(memstore.New())
	b.SetBytes(int64(len(entries) * 4096))
	for b.Loop() {
		vs := make([]history.Version, len(entries))
		n := 0
		for i := range entries {
			p := h.PlanValue(entries[i].Value)
			n += len(p.Records)
			vs[i] = history.NewVersion(uint64(i+1), history.OpWrite, &entries[i], p.Addr)
		}
		recs, err := h.PlanVersions(vs)
		if err != nil || n != len(entries) || len(recs) != len(entries)+1 {
			b.Fatalf("%d objects, %d version records, err %v", n, len(recs), err)
		}
	}
}

// Chunking and hashing a 1 MiB value.
func BenchmarkPlanValue1MiB(b *testing.B) {
	v := randomBytes(rand.New(rand.NewPCG(2, 2)), 1<<20)
	h := history.New(memstore.New())
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		h.PlanValue(v)
	}
}
