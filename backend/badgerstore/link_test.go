package badgerstore

import (
	"errors"
	"fmt"
	"io/fs"
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

// TestSaveIfKeepsNodeFields: a conditional save keeps every new field, and
// a conflict copy of a name of a hard-link group is a node of its own.
func TestSaveIfKeepsNodeFields(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	a, b := entry("a", []byte("theirs")), entry("b", []byte("theirs"))
	a.Info.Link, b.Info.Link = "g", "g"
	if err := s.Save(t.Context(), a, b); err != nil {
		t.Fatal(err)
	}
	ours := entry("a", []byte("ours"))
	ours.Info.Mode = fs.ModeSetuid | 0o755
	ours.Info.ATime = ours.Info.MTime.Add(time.Minute)
	ours.Info.CTime = ours.Info.MTime.Add(time.Hour)
	c, err := s.SaveIf(t.Context(), []backend.Entry{ours}, []backend.Version{{}}) // expects no key: a conflict
	if err != nil || c["a"] == "" {
		t.Fatalf("SaveIf = %v, %v; want a conflict for a", c, err)
	}
	got, err := s.Load(t.Context(), "a", c["a"], "b")
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Value) != "ours" || !got[0].Info.ATime.Equal(ours.Info.ATime) || !got[0].Info.CTime.Equal(ours.Info.CTime) || got[0].Info.Link != "" {
		t.Errorf("a after SaveIf = %+v %q, want the entry saved", got[0].Info, got[0].Value)
	}
	if string(got[1].Value) != "theirs" || got[1].Info.Link != "" {
		t.Errorf("conflict copy = %+v %q, want their value outside the group", got[1].Info, got[1].Value)
	}
	if string(got[2].Value) != "theirs" || got[2].Info.Link != "g" {
		t.Errorf("b = %+v %q, want untouched", got[2].Info, got[2].Value)
	}
	bad := entry("f", []byte("x"))
	bad.Info.Mode |= fs.ModeIrregular // not a mode a store keeps
	if _, err := s.SaveIf(t.Context(), []backend.Entry{bad}, []backend.Version{{}}); !errors.Is(err, backend.ErrInvalidEntry) {
		t.Errorf("SaveIf of an invalid entry = %v, want ErrInvalidEntry", err)
	}
}
