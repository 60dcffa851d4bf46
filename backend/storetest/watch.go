package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
)

// ExternalFunc changes the store kept in dir as another writer would (a
// program editing a directory store, another client of a shared store),
// not through the Store the suite holds: it sets key to value, or removes
// key when value is nil. A store that is a backend.Watcher passes one in
// Options.External, so that the suite can check that such a change is
// reported.
type ExternalFunc func(t *testing.T, dir, key string, value []byte)

// watchWait bounds how long a change may take to be reported.
const watchWait = 10 * time.Second

// testWatcher checks the change feed of a store that claims
// backend.Watcher: another writer's creation (in a new directory),
// modification and removal are each reported, by key or by Lost; the
// channel closes when the context is done, and when the store is closed.
func (s suite) testWatcher(t *testing.T) {
	dir := t.TempDir()
	st := s.openT(t, dir)
	w, ok := st.(backend.Watcher)
	if !ok {
		if s.opts.External != nil {
			t.Fatal("Options.External is set, but the store is not backend.Watcher")
		}
		t.Skip("the store is not backend.Watcher")
	}

	t.Run("External", func(t *testing.T) {
		if s.opts.External == nil {
			t.Fatal("the store is backend.Watcher: set Options.External so that the suite can change it as another writer")
		}
		save(t, st, entry("memory/a.md", []byte("ours")))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := w.Watch(ctx)
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		for _, step := range []struct {
			what, key string
			value     []byte
		}{
			{"a creation in a new directory", "notes/deep/new.md", []byte("theirs")},
			{"a modification", "memory/a.md", []byte("theirs, changed")},
			{"a removal", "memory/a.md", nil},
		} {
			s.opts.External(t, dir, step.key, step.value)
			waitChange(t, ch, step.what, step.key)
		}
	})

	t.Run("CancelCloses", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := w.Watch(ctx)
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		cancel()
		waitClosed(t, ch, "the context was cancelled")
	})

	t.Run("CloseCloses", func(t *testing.T) {
		st := s.fresh(t)
		ch, err := st.(backend.Watcher).Watch(t.Context())
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		waitClosed(t, ch, "the store was closed")
	})
}

// waitChange waits for a Change of key (or Lost) on ch; the store's own
// changes and others may come first.
func waitChange(t *testing.T, ch <-chan backend.Change, what, key string) {
	t.Helper()
	deadline := time.After(watchWait)
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatalf("%s of %s: the channel closed before it was reported", what, key)
			}
			if c.Lost || c.Key == key {
				return
			}
		case <-deadline:
			t.Fatalf("%s of %s: not reported within %v", what, key, watchWait)
		}
	}
}

// waitClosed drains ch until it closes.
func waitClosed(t *testing.T, ch <-chan backend.Change, why string) {
	t.Helper()
	deadline := time.After(watchWait)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("%s, but the channel is still open after %v", why, watchWait)
		}
	}
}
