package live

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/search"
	"github.com/memfs/memfs/search/internal/searchtest"
)

// TestServiceInMemory: an index opened InMemory (a command that only
// reads) answers from the values, repairing a stale index and rebuilding
// a corrupt one in memory, and saves or deletes no record, also at Close.
func TestServiceInMemory(t *testing.T) {
	st := searchtest.NewMemSys()
	e := newSvcEnv(t, st, ServiceOptions{})
	e.put(t, "memory/a.md", "wombat", 0o644, 1000)
	e.flush(t)
	e.svc(t)
	if err := e.lazy.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Behind the index: a new value; then a corrupt shard.
	if err := st.Save(t.Context(), backend.Entry{Key: "memory/b.md", Value: []byte("numbat"),
		Info: backend.Info{Mode: 0o644, MTime: time.Now().Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	for _, damage := range []func(){func() {}, func() { st.Put(t, search.ShardName(search.ShardOf("memory/a.md")), []byte("garbage")) }} {
		damage()
		before := st.Records(t)
		e := newSvcEnv(t, st, ServiceOptions{InMemory: true})
		s := e.svc(t)
		if got := strings.Join(found(t, s, credOwner, "numbat", 0), " "); got != "memory/b.md" {
			t.Errorf("numbat: got %q, want memory/b.md", got)
		}
		if got := strings.Join(found(t, s, credOwner, "wombat", 0), " "); got != "memory/a.md" {
			t.Errorf("wombat: got %q, want memory/a.md", got)
		}
		if err := e.lazy.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if after := st.Records(t); !maps.EqualFunc(before, after, func(a, b []byte) bool { return string(a) == string(b) }) {
			t.Errorf("an InMemory index changed the store's records: %d before, %d after", len(before), len(after))
		}
	}
}
