package badgerstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
)

// TestDamagedMetadataIsLocal: a key whose metadata record does not decode
// is left out of List and Walk and reported by Damaged, and its Load fails
// with ErrCorrupt; the listing itself, and the other keys, work (it failed
// every List, so every mount and command of the store).
func TestDamagedMetadataIsLocal(t *testing.T) {
	st, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info := backend.Info{Mode: 0o644, MTime: time.Now()}
	if err := st.Save(t.Context(), backend.Entry{Key: "a.md", Value: []byte("a"), Info: info},
		backend.Entry{Key: "b.md", Value: []byte("b"), Info: info}); err != nil {
		t.Fatal(err)
	}
	if err := badgerstore.PutRawMeta(st, "b.md", []byte{0xEE, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	es, err := st.List(t.Context())
	if err != nil {
		t.Fatalf("List with one damaged record: %v", err)
	}
	if len(es) != 1 || es[0].Key != "a.md" {
		t.Errorf("List = %v, want a.md alone", es)
	}
	var walked []string
	if err := st.Walk(t.Context(), func(b []backend.Entry) error {
		for _, e := range b {
			walked = append(walked, e.Key)
		}
		return nil
	}); err != nil || len(walked) != 1 {
		t.Errorf("Walk = %v, %v; want a.md alone", walked, err)
	}
	if d := st.Damaged(); len(d) != 1 || d[0] != "b.md" {
		t.Errorf("Damaged() = %v, want b.md", d)
	}
	if _, err := st.Load(t.Context(), "b.md"); !errors.Is(err, backend.ErrCorrupt) {
		t.Errorf("Load of the damaged key: %v, want ErrCorrupt", err)
	}
}

// TestMoveAsideOfDamagedMetadata: MoveAside moves a key whose metadata
// does not decode, both records as stored, out of the namespace.
func TestMoveAsideOfDamagedMetadata(t *testing.T) {
	st, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info := backend.Info{Mode: 0o644, MTime: time.Now()}
	if err := st.Save(t.Context(), backend.Entry{Key: "a.md", Value: []byte("a"), Info: info},
		backend.Entry{Key: "b.md", Value: []byte("b"), Info: info}); err != nil {
		t.Fatal(err)
	}
	if err := badgerstore.PutRawMeta(st, "b.md", []byte{0xEE, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	where, err := st.MoveAside(t.Context(), "b.md")
	if err != nil || !strings.Contains(where, "x/") {
		t.Fatalf("MoveAside = %q, %v", where, err)
	}
	if _, err := st.Load(t.Context(), "b.md"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Errorf("Load after MoveAside: %v, want not found", err)
	}
	if es, err := st.List(t.Context()); err != nil || len(es) != 1 || len(st.Damaged()) != 0 {
		t.Errorf("List after MoveAside: %v, %v, damaged %v", es, err, st.Damaged())
	}
	if _, err := st.MoveAside(t.Context(), "a.md"); err != nil {
		t.Errorf("MoveAside of an intact key: %v", err) // it moves whatever it is asked to
	}
}
