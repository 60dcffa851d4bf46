package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
)

// deepKey returns a key of exactly n bytes: directories of up to
// MaxSegmentLen bytes, and a last segment that starts with leaf.
func deepKey(n int, leaf string) string {
	var b strings.Builder
	for rest := n; rest > backend.MaxSegmentLen; {
		seg := min(backend.MaxSegmentLen, rest-1-len(leaf))
		b.WriteString(strings.Repeat("d", seg) + "/")
		rest -= seg + 1
	}
	b.WriteString(leaf)
	return b.String() + strings.Repeat("x", n-b.Len())
}

// testLongKeys: a key has no length limit of its own (issue 36). Every
// store holds a key of 16 KiB, 64 directories deep, through a reopen; a
// store without a KeyLimit holds one longer than any store's limit, and
// one with a KeyLimit holds a key of exactly its Max and refuses one byte
// more (Save, SaveIf, Apply) with ErrKeyTooLong and a message that names
// the limit, writing nothing.
func (s suite) testLongKeys(t *testing.T) {
	dir := t.TempDir()
	st, err := s.open(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			st.Close()
		}
	})
	k16 := deepKey(16<<10, "leaf-16k.md")
	v := binary(1000, 36)
	save(t, st, entry(k16, v))
	limit := backend.KeyLimitOf(st)
	longest := deepKey(70000, "leaf-70k.md") // over badger's 65,000
	if limit.Max > 0 {
		longest = deepKey(limit.Max, "leaf-max.md")
	}
	save(t, st, entry(longest, []byte("at the limit")))
	closed = true
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	st = s.openT(t, dir)
	keys := keysOf(s.list(t, st))
	for _, k := range []string{k16, longest} {
		if !slices.Contains(keys, k) {
			t.Errorf("List after reopen has no key of %d bytes", len(k))
		}
	}
	if got := loadOne(t, st, k16); !bytes.Equal(got.Value, v) {
		t.Errorf("the key of 16 KiB holds %d bytes, want %d", len(got.Value), len(v))
	}
	if got := loadOne(t, st, longest); string(got.Value) != "at the limit" {
		t.Errorf("the key of %d bytes holds %q", len(longest), got.Value)
	}
	if limit.Max > 0 {
		s.checkOverLimit(t, st, limit)
	}
	if err := st.Delete(t.Context(), k16, longest); err != nil {
		t.Fatalf("Delete of the long keys: %v", err)
	}
	if keys := keysOf(s.list(t, st)); slices.Contains(keys, k16) || slices.Contains(keys, longest) {
		t.Error("List after Delete still has a long key")
	}
}

// checkOverLimit: a key one byte over limit is refused by every write,
// with the limit named, and nothing is written.
func (s suite) checkOverLimit(t *testing.T, st backend.Store, limit backend.KeyLimit) {
	over := deepKey(limit.Max+1, "leaf-over.md")
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, backend.ErrKeyTooLong) || !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("%s of a key over the limit of %d bytes = %v, want ErrKeyTooLong", op, limit.Max, err)
		} else if !strings.Contains(err.Error(), fmt.Sprint(limit.Max)) || !strings.Contains(err.Error(), limit.Store) {
			t.Errorf("%s: %v: want the %s store's limit %d named", op, err, limit.Store, limit.Max)
		}
	}
	check("Save", st.Save(t.Context(), entry("memory/ok.md", nil), entry(over, []byte("x"))))
	if vs, ok := st.(backend.Versioned); ok {
		_, err := vs.SaveIf(t.Context(), []backend.Entry{entry(over, []byte("x"))}, []backend.Version{{}})
		check("SaveIf", err)
	}
	if b, ok := st.(backend.Batcher); ok {
		_, err := b.Apply(t.Context(), backend.Batch{Saves: []backend.Entry{entry(over, []byte("x"))}})
		check("Apply", err)
	}
	if keys := keysOf(s.list(t, st)); slices.Contains(keys, over) || slices.Contains(keys, "memory/ok.md") {
		t.Errorf("a refused batch wrote: %d keys listed", len(keys))
	}
}
