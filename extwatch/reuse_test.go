package extwatch_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/extwatch"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/session"
)

// TestFileInTheirDirectoryThatReplacedOurFile: on a shared store, B
// replaces a file with a directory and makes a file in it, while A has
// unflushed changes to the file. A's watcher cannot take B's file in yet
// (the name above it is still A's file); A's flush keeps both (A's file
// moves to a conflict copy, B's directory takes the name), and then B's
// file in it must arrive too (the two-writer model found it missing on A
// until a remount: issue 26).
func TestFileInTheirDirectoryThatReplacedOurFile(t *testing.T) {
	srv := etcdtest.Start(t)
	open := func() *etcdstore.Store {
		st, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "reuse"})
		must(t, err)
		t.Cleanup(func() { st.Close() })
		return st
	}
	var phase atomic.Value
	phase.Store("before")
	seen := newProcessed()
	sa := open()
	a, err := session.New(sa, session.Options{OnConflict: session.KeepBoth, Agent: "a"})
	must(t, err)
	must(t, a.Bootstrap(t.Context(), ""))
	w, err := extwatch.Start(sa, a, extwatch.Options{Debounce: 10 * time.Millisecond,
		OnProcessed: func(k string) { seen.add(k, phase.Load().(string)) }})
	must(t, err)
	defer w.Close()
	must(t, a.Set("n", []byte("base\n")))
	must(t, a.Flush(t.Context()))

	b, err := session.New(open(), session.Options{OnConflict: session.KeepBoth, Agent: "b"})
	must(t, err)
	must(t, b.Bootstrap(t.Context(), ""))
	must(t, b.Delete("n"))
	must(t, b.Mkdir("n", 0o755, 0, 0))
	must(t, b.Set("n/in.md", []byte("theirs\n")))
	must(t, a.Set("n", []byte("ours\n")))
	phase.Store("after")
	must(t, b.Flush(t.Context()))
	for _, k := range []string{"n", "n/in.md"} {
		if !seen.wait(k, "after", 5*time.Second) {
			t.Fatalf("A's watcher did not process %s after B's flush", k)
		}
	}

	must(t, a.Flush(t.Context()))
	if st, err := a.Stat("n"); err != nil || !st.IsDir {
		t.Fatalf("n on A after its flush: %+v, %v; want B's directory", st, err)
	}
	waitFor(t, "B's n/in.md on A", func() bool {
		if a.Resolve(t.Context(), "n/in.md") != nil {
			return false
		}
		v, _ := a.Get("n/in.md")
		return string(v) == "theirs\n"
	})
}
