package history_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/internal/etcdtest"
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

// Listing a key's 1,000 versions (Versions: its records under one prefix)
// on each store, another key's 1,000 beside it.
func BenchmarkVersions1000(b *testing.B) {
	srv := etcdtest.Start(b)
	for _, k := range storeKinds(srv) {
		b.Run(k.name, func(b *testing.B) {
			s := k.open(b)
			b.Cleanup(func() { s.Close() })
			h := history.New(s)
			ctx := b.Context()
			var seq uint64
			for i := range 1000 {
				for _, key := range []string{"memory/notes.md", "memory/other.md"} {
					seq++
					p := h.PlanValue(fmt.Appendf(nil, "version %d of %s", i, key))
					recs, err := h.PlanVersions([]history.Version{history.NewVersion(seq, history.OpWrite, &backend.Entry{Key: key}, p.Addr)})
					if err != nil {
						b.Fatal(err)
					}
					if err := h.Write(ctx, append(p.Records, recs...)); err != nil {
						b.Fatal(err)
					}
				}
			}
			for b.Loop() {
				vs, err := h.Versions(ctx, "memory/notes.md")
				if err != nil || len(vs) != 1000 {
					b.Fatalf("Versions = %d, %v; want 1000", len(vs), err)
				}
			}
		})
	}
}
