package extwatch_test

import (
	"testing"
	"time"

	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/extwatch"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/session"
)

// A chowns a directory that B has unflushed changes in (a file made in
// it moved its mtime): B's flush must keep A's owner, as it does for a
// file's metadata (their owner, the most restrictive mode), not put its
// older one back. The two-writer model's seed 119 (etcd) found the
// store with B's older owner of n1 after both flushed.
func TestTheirChownOfOurDirtyDirectory(t *testing.T) {
	srv := etcdtest.Start(t)
	open := func() *etcdstore.Store {
		st, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "dirowner"})
		must(t, err)
		t.Cleanup(func() { st.Close() })
		return st
	}
	a, err := session.New(open(), session.Options{OnConflict: session.KeepBoth, Agent: "a"})
	must(t, err)
	must(t, a.Bootstrap(t.Context(), ""))
	must(t, a.Mkdir("d", 0o755, 1000, 1000))
	must(t, a.Flush(t.Context()))

	sb := open()
	b, err := session.New(sb, session.Options{OnConflict: session.KeepBoth, Agent: "b"})
	must(t, err)
	must(t, b.Bootstrap(t.Context(), ""))
	seen := newProcessed()
	w, err := extwatch.Start(sb, b, extwatch.Options{Debounce: 10 * time.Millisecond,
		OnProcessed: func(k string) { seen.add(k, "*") }})
	must(t, err)
	defer w.Close()
	must(t, b.Set("d/in.md", []byte("b\n"))) // d's mtime moves: d is dirty on B

	uid, gid := uint32(1001), uint32(1002)
	_, err = a.SetAttr(t.Context(), "d", session.Attr{UID: &uid, GID: &gid})
	must(t, err)
	must(t, a.Flush(t.Context()))
	if !seen.wait("d", "*", 5*time.Second) {
		t.Fatal("B's watcher did not process d")
	}
	must(t, b.Flush(t.Context()))
	fresh := session.NewContext(open(), session.Options{})
	must(t, fresh.Bootstrap(t.Context(), ""))
	st, err := fresh.Stat("d")
	must(t, err)
	if st.UID != 1001 || st.GID != 1002 {
		t.Fatalf("d in the store after B's flush: owner %d:%d, want A's 1001:1002", st.UID, st.GID)
	}
}
