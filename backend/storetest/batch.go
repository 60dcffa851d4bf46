package storetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/memfs/memfs/backend"
)

// testBatcher checks Apply on stores that offer it (backend.Batcher): saves
// and deletes land together, durably, and a reader never sees half a
// batch; a batch with an invalid entry or key, a key both saved and
// deleted, or a cancelled context fails with nothing written; Expect
// works as SaveIf does (or is refused by a store that is not Versioned).
func (s suite) testBatcher(t *testing.T) {
	dir := t.TempDir()
	st := s.openT(t, dir)
	bt, ok := st.(backend.Batcher)
	if !ok {
		t.Skip("the store is not backend.Batcher")
	}
	ctx := t.Context()
	save(t, st, entry("a", []byte("a1")), entry("b", []byte("b1")), entry("c", []byte("c1")))
	keys := func(st backend.Store) string {
		t.Helper()
		return strings.Join(keysOf(s.list(t, st)), " ")
	}

	conflicts, err := bt.Apply(ctx, backend.Batch{
		Saves:   []backend.Entry{entry("a", []byte("a2")), entry("d", []byte("d1"))},
		Deletes: []string{"b", "never/was"},
	})
	if err != nil || len(conflicts) != 0 {
		t.Fatalf("Apply: %v, conflicts %v; want nil, none", err, conflicts)
	}
	check := func(st backend.Store, when string) {
		t.Helper()
		if got := keys(st); got != "a c d" {
			t.Errorf("%s: keys %q, want %q", when, got, "a c d")
		}
		if got := loadOne(t, st, "a"); string(got.Value) != "a2" {
			t.Errorf("%s: a = %q, want a2", when, got.Value)
		}
	}
	check(st, "after Apply")

	bad := invalidEntries()[0]
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	refused := []struct {
		name string
		ctx  context.Context
		b    backend.Batch
		is   error // the error must wrap it
	}{
		{"invalid entry", ctx, backend.Batch{Saves: []backend.Entry{entry("e", []byte("e1")), bad}, Deletes: []string{"c"}}, backend.ErrInvalidEntry},
		{"invalid key saved", ctx, backend.Batch{Saves: []backend.Entry{entry("e", []byte("e1")), entry("../x", nil)}, Deletes: []string{"c"}}, backend.ErrInvalidKey},
		{"invalid key deleted", ctx, backend.Batch{Saves: []backend.Entry{entry("e", []byte("e1"))}, Deletes: []string{"c", "/abs"}}, backend.ErrInvalidKey},
		{"reserved key deleted", ctx, backend.Batch{Saves: []backend.Entry{entry("e", []byte("e1"))}, Deletes: []string{"c", ".memfs"}}, backend.ErrInvalidKey},
		{"saved and deleted", ctx, backend.Batch{Saves: []backend.Entry{entry("e", []byte("e1")), entry("c", []byte("c2"))}, Deletes: []string{"c"}}, backend.ErrSavedAndDeleted},
		{"cancelled", cancelled, backend.Batch{Saves: []backend.Entry{entry("e", []byte("e1"))}, Deletes: []string{"c"}}, context.Canceled},
	}
	for _, tt := range refused {
		_, err := bt.Apply(tt.ctx, tt.b)
		if !errors.Is(err, tt.is) {
			t.Errorf("Apply, %s: %v, want an error wrapping %v", tt.name, err, tt.is)
		}
		check(st, "after a refused Apply ("+tt.name+")")
		if got := loadOne(t, st, "c"); string(got.Value) != "c1" {
			t.Errorf("after a refused Apply (%s): c = %q, want c1", tt.name, got.Value)
		}
	}

	st.Close()
	st = s.openT(t, dir)
	check(st, "after reopen")
	bt = st.(backend.Batcher)

	// Expect: the version a save replaces, as SaveIf checks it.
	ver := backend.VersionOf(loadOne(t, st, "a").Info)
	stale := backend.Batch{
		Saves:   []backend.Entry{entry("a", []byte("a3")), entry("f", []byte("f1"))},
		Deletes: []string{"d"},
		Expect:  map[string]backend.Version{"a": {Size: 99, MTime: 1}},
	}
	if _, ok := st.(backend.Versioned); !ok {
		if _, err := bt.Apply(ctx, stale); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Apply with Expect on a store that is not Versioned: %v, want errors.ErrUnsupported", err)
		}
		check(st, "after a refused Apply (Expect)")
	} else {
		if conflicts, err := bt.Apply(ctx, backend.Batch{Saves: []backend.Entry{entry("a", []byte("a3"))},
			Expect: map[string]backend.Version{"a": ver}}); err != nil || len(conflicts) != 0 {
			t.Fatalf("Apply expecting the stored version: %v, conflicts %v; want nil, none", err, conflicts)
		}
		conflicts, err := bt.Apply(ctx, stale)
		if err != nil || len(conflicts) != 1 || conflicts["a"] == "" {
			t.Fatalf("Apply expecting another version: %v, conflicts %v; want a conflict for a", err, conflicts)
		}
		if got := loadOne(t, st, conflicts["a"]); string(got.Value) != "a3" {
			t.Errorf("conflict copy %s = %q, want the version found (a3)", conflicts["a"], got.Value)
		}
		if got := loadOne(t, st, "a"); string(got.Value) != "a3" {
			t.Errorf("a = %q after the conflicting save, want a3", got.Value)
		}
		if got, want := keys(st), "a "+conflicts["a"]+" c f"; got != want {
			t.Errorf("keys %q, want %q", got, want)
		}
	}

	// A reader never sees half a batch: a key moved back and forth
	// between two names is always under exactly one.
	st2 := s.fresh(t)
	bt2 := st2.(backend.Batcher)
	save(t, st2, entry("x", []byte("moving")))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		from, to := "x", "y"
		for range 200 {
			if _, err := bt2.Apply(ctx, backend.Batch{Saves: []backend.Entry{entry(to, []byte("moving"))}, Deletes: []string{from}}); err != nil {
				t.Errorf("Apply moving %s to %s: %v", from, to, err)
				break
			}
			from, to = to, from
		}
		close(stop)
	})
	for done := false; !done; {
		select {
		case <-stop:
			done = true
		default:
		}
		l, err := st2.List(ctx)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		var n int
		for _, e := range l {
			if e.Key == "x" || e.Key == "y" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("a List during Apply saw %d of x and y (%q), want exactly one", n, keysOf(l))
		}
	}
	wg.Wait()
}
