package badgerstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/memfs/memfs/backend"
)

// Apply is one transaction, and a batch over the transaction limit is
// refused whole (backend.ErrBatchTooLarge), never split: nothing of it is
// written, and the keys it would have deleted are still there.
func TestApplyIsOneTransaction(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	ctx := t.Context()
	if err := s.Save(ctx, entry("old/a", []byte("a")), entry("old/b", []byte("b"))); err != nil {
		t.Fatal(err)
	}
	before := s.txns.Load()
	if _, err := s.Apply(ctx, backend.Batch{
		Saves:   []backend.Entry{entry("new/a", []byte("a")), entry("new/c", []byte("c"))},
		Deletes: []string{"old/a"},
	}); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if used := s.txns.Load() - before; used != 1 {
		t.Fatalf("Apply used %d transactions, want 1", used)
	}

	const size = 16 << 10 // under the value threshold: counts whole against the limit
	n := int(s.db.MaxBatchSize()/size) + 2
	big := make([]backend.Entry, n)
	for i := range big {
		big[i] = entry(fmt.Sprintf("big/f%05d", i), randomBytes(size, uint64(i)))
	}
	before = s.txns.Load()
	_, err := s.Apply(ctx, backend.Batch{Saves: big, Deletes: []string{"old/b"}})
	if !errors.Is(err, backend.ErrBatchTooLarge) {
		t.Fatalf("Apply of %d x %d bytes (limit %d) = %v, want ErrBatchTooLarge", n, size, s.db.MaxBatchSize(), err)
	}
	if used := s.txns.Load() - before; used != 0 {
		t.Fatalf("a refused Apply committed %d transactions", used)
	}
	l, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range l {
		keys = append(keys, e.Key)
	}
	if fmt.Sprint(keys) != "[new/a new/c old/b]" {
		t.Fatalf("after a refused Apply the keys are %q, want [new/a new/c old/b]", keys)
	}
}
