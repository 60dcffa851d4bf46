package history_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/history"
)

// batchRecorder is a store with SaveSysBatch (as the directory store has)
// that records each batch's names.
// (no SwapSys: memstore's is hidden).
type batchRecorder struct {
	backend.SysStore
	batches [][]string
}

func (b *batchRecorder) SaveSysBatch(ctx context.Context, recs map[string][]byte) error {
	var names []string
	for n, d := range recs {
		if err := b.SaveSys(ctx, n, d); err != nil {
			return err
		}
		names = append(names, n)
	}
	b.batches = append(b.batches, names)
	return nil
}

var _ backend.SysBatchSaver = (*batchRecorder)(nil)

// Write on a store with SaveSysBatch (the directory store, whose batch is
// not atomic: a crash keeps any subset) writes the small values' objects
// together, and a manifest only in a batch after its chunks' (a crash
// never leaves a manifest naming a missing chunk).
func TestWriteBatchesManifestsAfterChunks(t *testing.T) {
	s := &batchRecorder{SysStore: memstore.New()}
	h := history.New(s)
	ctx := t.Context()
	var recs []history.Record
	for _, v := range [][]byte{[]byte("a"), []byte("b"), bytes.Repeat([]byte("0123456789abcdef"), 20000), []byte("c")} {
		recs = append(recs, h.PlanValue(v).Records...)
	}
	if err := h.Write(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if len(s.batches) != 2 {
		t.Fatalf("Write made %d batches, want 2 (the objects, then the manifest and what follows): %v", len(s.batches), s.batches)
	}
	for i, b := range s.batches {
		ms := 0
		for _, n := range b {
			if strings.Contains(n, "/m/") {
				ms++
			}
		}
		if want := i; ms != want {
			t.Errorf("batch %d holds %d manifests, want %d: %v", i, ms, want, b)
		}
	}
	for _, r := range recs {
		if got, err := s.LoadSys(ctx, r.Name); err != nil || !bytes.Equal(got, r.Data) {
			t.Errorf("%s not written: %v", r.Name, err)
		}
	}
}
