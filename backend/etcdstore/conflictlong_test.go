package etcdstore_test

import (
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/etcdtest"
)

// A conflict over a key of the longest length the store holds keeps their
// version under a copy within the limit too.
func TestSaveIfConflictAtTheKeyLimit(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "keylimit")
	max := st.KeyLimit().Max
	dir := strings.TrimSuffix(strings.Repeat(strings.Repeat("d", 200)+"/", (max-120)/201), "/")
	key := dir + "/" + strings.Repeat("n", max-len(dir)-1-len(".md")) + ".md"
	if err := st.Save(t.Context(), entry(key, []byte("theirs"))); err != nil {
		t.Fatal(err)
	}
	c, err := st.SaveIf(t.Context(), []backend.Entry{entry(key, []byte("ours"))}, []backend.Version{{}})
	if err != nil || c[key] == "" {
		t.Fatalf("SaveIf = %v, %v; want a conflict", c, err)
	}
	if err := st.KeyLimit().Check(c[key]); err != nil {
		t.Fatalf("the conflict copy: %v", err)
	}
	if got := loadValue(t, st, c[key]); string(got) != "theirs" {
		t.Errorf("conflict copy = %q, want theirs", got)
	}
	if got := loadValue(t, st, key); string(got) != "ours" {
		t.Errorf("key = %q, want ours", got)
	}
}
