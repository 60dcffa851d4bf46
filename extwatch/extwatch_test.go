package extwatch_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/extwatch"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/session"
)

// processed records the keys a Watcher processed (Options.OnProcessed),
// each with a tag of the store's version then (a ctime; "" for none).
type processed struct {
	mu   sync.Mutex // guards seen
	seen map[string]map[string]bool
	more chan struct{} // closed and replaced at each add
}

func newProcessed() *processed {
	return &processed{seen: map[string]map[string]bool{}, more: make(chan struct{})}
}

func (p *processed) add(key, tag string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen[key] == nil {
		p.seen[key] = map[string]bool{}
	}
	p.seen[key][tag] = true
	close(p.more)
	p.more = make(chan struct{})
}

// wait reports whether key was processed with tag (any tag: "*") within d.
func (p *processed) wait(key, tag string, d time.Duration) bool {
	timeout := time.After(d)
	for {
		p.mu.Lock()
		ok := p.seen[key][tag] || (tag == "*" && len(p.seen[key]) > 0)
		more := p.more
		p.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-more:
		case <-timeout:
			return false
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	await.True(t, what, 3*time.Second, cond)
}

// Without an applier, changes go to the session directly.
func TestDirectToSession(t *testing.T) {
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.Save(t.Context(), backend.Entry{Key: "memory/a.md", Value: []byte("a"), Info: backend.Info{Mode: 0o644}})
	c := session.NewContext(st, session.Options{})
	if err := c.Bootstrap(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	seen := newProcessed()
	w, err := extwatch.Start(st, c, extwatch.Options{OnProcessed: func(k string) { seen.add(k, "*") }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	get := func(k string) string { v, _ := c.Get(k); return string(v) }

	os.WriteFile(filepath.Join(dir, "memory/a.md"), []byte("changed"), 0o644)
	waitFor(t, "a modification", func() bool { return get("memory/a.md") == "changed" })
	os.MkdirAll(filepath.Join(dir, "new/deep"), 0o755)
	os.WriteFile(filepath.Join(dir, "new/deep/b.md"), []byte("b"), 0o644)
	waitFor(t, "a file in a new directory", func() bool { return get("new/deep/b.md") == "b" })
	os.WriteFile(filepath.Join(dir, "memory/.a.md.swp"), []byte("swap"), 0o644)
	os.Remove(filepath.Join(dir, "memory/a.md"))
	waitFor(t, "a removal", func() bool { return !c.Has("memory/a.md") })
	if c.Has("memory/.a.md.swp") {
		t.Fatal("a hidden file in the store reached the session")
	}
	// memfs's own flush is not taken for an external change.
	c.Set("memory/own.md", []byte("own"))
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !seen.wait("memory/own.md", "*", 5*time.Second) {
		t.Fatal("the watcher never saw memfs's own flush come back")
	}
	if _, _, dirty, _ := c.Stats().Counts(); dirty != 0 {
		t.Fatalf("%d dirty after our own flush came back", dirty)
	}
	if get("memory/own.md") != "own" {
		t.Fatal("own write changed")
	}
}

// A file written in steps is never served half-written.
func TestPartialWriteNotServed(t *testing.T) {
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := session.NewContext(st, session.Options{})
	c.Bootstrap(t.Context())
	w, err := extwatch.Start(st, c, extwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	full := "first half, " + "second half\n"
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, _ := os.Create(filepath.Join(dir, "slow.md"))
		for _, part := range []string{"first half, ", "second half\n"} {
			f.WriteString(part)
			time.Sleep(20 * time.Millisecond) // less than the debounce
		}
		f.Close()
	}()
	seen := map[string]bool{}
	await.Cond(2*time.Second, time.Millisecond, func() bool { // every value served on the way
		v, ok := c.Get("slow.md")
		if ok {
			seen[string(v)] = true
		}
		return ok && string(v) == full
	})
	<-done
	for v := range seen {
		if v != full {
			t.Fatalf("served a partial value %q", v)
		}
	}
	if !seen[full] {
		t.Fatal("the finished file never arrived")
	}
}

// Under a conflict policy (a shared store), another writer's change to a
// key with unflushed changes is not kept beside it here: the flush meets
// it and the policy resolves it (keep-both: theirs keeps the name, ours
// moves to the agent's conflict key). Nothing is lost, and no copy without
// the agent's name appears.
func TestDirtyKeyLeftToThePolicy(t *testing.T) {
	st := memstore.New()
	defer st.Close()
	const key = "memory/a.md"
	if err := st.Save(t.Context(), backend.Entry{Key: key, Value: []byte("base\n"), Info: backend.Info{Mode: 0o644}}); err != nil {
		t.Fatal(err)
	}
	c, err := session.New(st, session.Options{OnConflict: session.KeepBoth, Agent: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Bootstrap(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	seen := newProcessed()
	w, err := extwatch.Start(st, c, extwatch.Options{OnProcessed: func(k string) { seen.add(k, "*") }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := c.Set(key, []byte("ours\n")); err != nil {
		t.Fatal(err)
	}
	if err := st.Other().Set(key, []byte("theirs\n")); err != nil {
		t.Fatal(err)
	}
	if !seen.wait(key, "*", 5*time.Second) {
		t.Fatal("the watcher never processed the other writer's change")
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	ents, err := st.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{}
	for _, e := range ents {
		if e.Info.Mode.IsRegular() {
			got, err := st.Load(t.Context(), e.Key)
			if err != nil {
				t.Fatal(err)
			}
			values[e.Key] = string(got[0].Value)
		}
	}
	if values[key] != "theirs\n" || len(values) != 2 {
		t.Fatalf("store after the flush: %q; want theirs under the name and ours beside it", values)
	}
	for k, v := range values {
		if k != key && (v != "ours\n" || !strings.Contains(k, ".conflict-me-")) {
			t.Errorf("%s = %q: want ours under the agent's conflict key", k, v)
		}
	}
}
