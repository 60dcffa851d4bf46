package badgerstore

import (
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
)

// A conflict over a key of the longest length the store holds keeps their
// version under a copy within the limit too, which the store then saves
// and loads as any key.
func TestSaveIfConflictAtTheKeyLimit(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	max := s.KeyLimit().Max
	dir := strings.TrimSuffix(strings.Repeat(strings.Repeat("d", 200)+"/", (max-120)/201), "/")
	name := strings.Repeat("n", max-len(dir)-1-len(".md")) + ".md"
	key := dir + "/" + name
	if len(key) != max {
		t.Fatalf("key of %d bytes, want %d", len(key), max)
	}
	if err := s.Save(t.Context(), entry(key, []byte("theirs"))); err != nil {
		t.Fatal(err)
	}
	c, err := s.SaveIf(t.Context(), []backend.Entry{entry(key, []byte("ours"))}, []backend.Version{{}})
	if err != nil || c[key] == "" {
		t.Fatalf("SaveIf = %v, %v; want a conflict", c, err)
	}
	ck := c[key]
	if err := s.KeyLimit().Check(ck); err != nil {
		t.Fatalf("the conflict copy: %v", err)
	}
	if err := backend.ValidateKey(ck); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(t.Context(), key, ck)
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Value) != "ours" || string(got[1].Value) != "theirs" {
		t.Errorf("key = %q, copy = %q; want ours and theirs", got[0].Value, got[1].Value)
	}
	if err := s.Save(t.Context(), entry(ck, []byte("theirs, edited"))); err != nil {
		t.Errorf("saving the copy: %v", err)
	}
}
