package badgerstore

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/memfs/memfs/backend"
)

func TestUnits(t *testing.T) {
	mk := func(links ...string) []op {
		ops := make([]op, len(links))
		for i, l := range links {
			ops[i] = op{key: fmt.Sprint(i), link: l}
		}
		return ops
	}
	tests := []struct {
		links []string
		want  []int
	}{
		{nil, nil},
		{[]string{"", "", ""}, []int{1, 2, 3}},
		{[]string{"g", "", "g", ""}, []int{3, 4}},
		{[]string{"a", "b", "a", "b"}, []int{4}},
		{[]string{"a", "a", "b", "", "b"}, []int{2, 5}},
		{[]string{"", "a", "b", "a", "", "b"}, []int{1, 6}},
		{[]string{"a", "b", "b", "a"}, []int{4}},
	}
	for _, tt := range tests {
		if got := units(mk(tt.links...)); !slices.Equal(got, tt.want) {
			t.Errorf("units(%q) = %v, want %v", tt.links, got, tt.want)
		}
	}
}

// TestSplitKeepsLinkGroupsWhole puts the names of a hard-link group on
// both sides of where a transaction fills up: the first transaction must
// end before the group's first name, and the group commits whole after.
func TestSplitKeepsLinkGroupsWhole(t *testing.T) {
	s := openT(t, t.TempDir(), Options{MemTableSize: 1 << 20})
	meta := encodeMeta(backend.Info{Mode: 0o644, MTime: time.Now()})
	ops := make([]op, s.db.MaxBatchCount())
	for i := range ops {
		ops[i] = op{key: fmt.Sprintf("k%06d", i), meta: meta}
	}
	txn := s.db.NewTransaction(true)
	fits, _, err := fill(txn, ops)
	txn.Discard()
	if err != nil {
		t.Fatal(err)
	}
	if fits < 10 || fits >= len(ops)-10 {
		t.Fatalf("%d of %d ops fit in a transaction: the test needs a cut in the middle", fits, len(ops))
	}
	group := []int{fits - 5, fits - 1, fits + 3}
	for _, i := range group {
		ops[i].link = "g"
	}
	n, err := s.commitPrefix(ops, units(ops))
	if err != nil {
		t.Fatal(err)
	}
	if n != group[0] {
		t.Fatalf("first transaction committed %d ops, want %d (%d fit, the group starts at %d)", n, group[0], fits, group[0])
	}
	present := func(key string) bool {
		var ok bool
		s.db.View(func(txn *badger.Txn) error {
			_, err := txn.Get(metaKey(key))
			ok = err == nil
			return nil
		})
		return ok
	}
	for _, i := range group {
		if present(ops[i].key) {
			t.Errorf("%s of the group was committed with the first transaction", ops[i].key)
		}
	}
	if err := s.write(t.Context(), ops[n:]); err != nil {
		t.Fatal(err)
	}
	for _, o := range ops {
		if !present(o.key) {
			t.Fatalf("%s missing after the whole write", o.key)
		}
	}
}

// TestLinkGroupTooBig: a group whose names do not fit in one transaction
// is refused, and none of its names is written.
func TestLinkGroupTooBig(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	v := randomBytes(60<<10, 1) // under the value threshold: counts whole
	var batch []backend.Entry
	for i := range int(s.db.MaxBatchSize()/int64(len(v))) + 2 {
		e := entry(fmt.Sprintf("name%02d", i), v)
		e.Info.Link = "big"
		batch = append(batch, e)
	}
	err := s.Save(t.Context(), batch...)
	if !errors.Is(err, badger.ErrTxnTooBig) {
		t.Fatalf("Save of a group of %d x %d bytes = %v, want ErrTxnTooBig", len(batch), len(v), err)
	}
	if l, _ := s.List(t.Context()); len(l) != 0 {
		t.Fatalf("after a refused group List = %d keys, want none", len(l))
	}
}
