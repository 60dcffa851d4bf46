package history_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/history"
)

// WriteMissing checks one part of its records while it writes the part
// before (a flush's 10,000 objects): over several parts it writes each
// missing record once, in order, none the store holds intact, and puts
// a damaged copy aside and the right bytes over it, as Missing and Write
// do.
func TestWriteMissingInParts(t *testing.T) {
	for _, k := range []struct {
		name string
		open func(t *testing.T) backend.SysStore
	}{
		{"memstore", func(*testing.T) backend.SysStore { return memstore.New() }},
		{"badger", func(t *testing.T) backend.SysStore {
			s, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
	} {
		t.Run(k.name, func(t *testing.T) {
			s := k.open(t)
			t.Cleanup(func() { s.Close() })
			ctx := t.Context()
			h := history.New(s)
			var recs []history.Record
			for i := range 5000 {
				recs = append(recs, planned(t, h, fmt.Appendf(nil, "note %d", i))...)
			}
			// Twice in one part, and again in a later one.
			recs = append(recs[:2100], append([]history.Record{recs[2100]}, recs[2100:]...)...)
			recs = append(recs, recs[10])
			var held []history.Record
			for i := 0; i < 5000; i += 4 {
				held = append(held, recs[i])
			}
			if err := h.Write(ctx, held); err != nil {
				t.Fatal(err)
			}
			damaged := recs[3000]
			mustSave(t, s, damaged.Name, []byte("not its bytes"))

			var want int64
			seen := map[string]bool{damaged.Name: false}
			for _, r := range held {
				seen[r.Name] = r.Name != damaged.Name
			}
			for _, r := range recs {
				if !seen[r.Name] {
					seen[r.Name] = true
					want += int64(len(r.Data))
				}
			}
			n, err := h.WriteMissing(ctx, recs)
			if err != nil || n != want {
				t.Fatalf("WriteMissing = %d bytes, %v; want %d, the missing and the damaged records once", n, err, want)
			}
			for _, r := range recs {
				got, err := s.LoadSys(ctx, r.Name)
				if err != nil || !bytes.Equal(got, r.Data) {
					t.Fatalf("%s: %q, %v; want %q", r.Name, got, err, r.Data)
				}
			}
			aside, err := s.ListSys(ctx, "history/damaged/")
			if err != nil || len(aside) != 1 {
				t.Fatalf("records kept aside: %v (err %v), want the damaged one", aside, err)
			}
		})
	}
}
