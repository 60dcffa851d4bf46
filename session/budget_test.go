package session_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"sync/atomic"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/session"
)

// budgetValue is the i-th test value: size bytes that differ per value.
func budgetValue(i, size int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("value %04d|", i)), size/11+1)[:size]
}

// readHandle reads the whole value through an open handle.
func readHandle(t *testing.T, h *session.File) []byte {
	t.Helper()
	buf := make([]byte, h.Stat().Size+1)
	n, err := h.ReadAt(buf, 0)
	if err != io.EOF {
		t.Fatalf("ReadAt: %d, %v; want EOF", n, err)
	}
	return buf[:n]
}

// budgetStore is a dir store holding n values of size bytes under v/.
func budgetStore(t *testing.T, n, size int) backend.Store {
	t.Helper()
	st, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var entries []backend.Entry
	for i := range n {
		entries = append(entries, backend.Entry{Key: fmt.Sprintf("v/%03d", i), Value: budgetValue(i, size), Info: backend.Info{Mode: 0o644}})
	}
	if err := st.Save(context.Background(), entries...); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestBudgetBoundsReads reads far more than the budget, value after
// value: the held bytes stay under the budget plus the one value open,
// the values dropped on the way load again with the right bytes, and a
// value held open is never dropped.
func TestBudgetBoundsReads(t *testing.T) {
	const n, size, budget = 64, 64 << 10, 512 << 10 // 4 MiB read through a 512 KiB budget
	ctx := context.Background()
	var released atomic.Int64
	c := session.NewContext(budgetStore(t, n, size), session.Options{MaxMemory: budget, Released: func(n int64) { released.Add(n) }})
	if err := c.Bootstrap(ctx, ""); err != nil { // asks to load everything
		t.Fatal(err)
	}
	if m := c.Stats().Memory(); m.Held > budget {
		t.Fatalf("after a bootstrap that loads everything: %d bytes held, over the budget of %d", m.Held, budget)
	}
	pinned, err := c.Open(ctx, "v/000")
	if err != nil {
		t.Fatal(err)
	}
	defer pinned.Close()
	for round := range 2 { // the second round reloads what the first dropped
		for i := range n {
			key := fmt.Sprintf("v/%03d", i)
			h, err := c.Open(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if got := readHandle(t, h); !bytes.Equal(got, budgetValue(i, size)) {
				t.Fatalf("round %d: %s read %d bytes that are not its value", round, key, len(got))
			}
			// Open: the budget, the pinned value and this one.
			if m := c.Stats().Memory(); m.Held > budget+2*size {
				t.Fatalf("round %d, %s open: %d bytes held, want at most the budget %d plus two values open", round, key, m.Held, budget)
			}
			h.Close()
			if m := c.Stats().Memory(); m.Held > budget+size {
				t.Fatalf("round %d, %s closed: %d bytes held, want at most the budget %d plus the value open", round, key, m.Held, budget)
			}
		}
	}
	if m := c.Stats().Memory(); m.Dropped < n {
		t.Errorf("%d values dropped reading %d values twice through a budget of %d of them; want at least %d", m.Dropped, n, budget/size, n)
	}
	if m := c.Stats().Memory(); released.Load() < int64(m.Dropped)*size {
		t.Errorf("%d values dropped, %d bytes told as released; want at least %d", m.Dropped, released.Load(), int64(m.Dropped)*size)
	}
	if got := readHandle(t, pinned); !bytes.Equal(got, budgetValue(0, size)) {
		t.Errorf("the value held open changed under its reader")
	}
	if st, _ := c.Stat("v/000"); !st.Loaded {
		t.Errorf("the value held open was dropped")
	}
}

// TestBudgetKeepsDirty writes more than the budget: no written value is
// dropped before it is flushed, the session asks for a flush, and after
// the flush the values are held within the budget and read back right.
func TestBudgetKeepsDirty(t *testing.T) {
	const n, size, budget = 32, 64 << 10, 512 << 10
	ctx := context.Background()
	c, asked := budgetSession(t, budget)
	for i := range n {
		key := fmt.Sprintf("v/%03d", i)
		if i%2 == 0 {
			if err := c.Set(key, budgetValue(i, size)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		h, err := c.Create(key, session.CreateOptions{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		v := budgetValue(i, size)
		for off := 0; off < size; off += 4096 {
			if _, err := h.WriteAt(v[off:min(off+4096, size)], int64(off)); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
	}
	m := c.Stats().Memory()
	if m.Dropped != 0 {
		t.Fatalf("%d values dropped before they were flushed", m.Dropped)
	}
	if m.Dirty < n*size {
		t.Fatalf("%d dirty bytes held, want every value written (%d)", m.Dirty, n*size)
	}
	for i := range n {
		if v, ok := c.Get(fmt.Sprintf("v/%03d", i)); !ok || !bytes.Equal(v, budgetValue(i, size)) {
			t.Fatalf("v/%03d: not in memory or not its bytes before the flush", i)
		}
	}
	if asked.Load() == 0 {
		t.Errorf("%d dirty bytes over a budget of %d and no flush asked for", m.Dirty, budget)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if m := c.Stats().Memory(); m.Held > budget || m.Dirty != 0 {
		t.Errorf("after the flush: %d bytes held (%d dirty), want at most the budget %d", m.Held, m.Dirty, budget)
	}
	for i := range n {
		key := fmt.Sprintf("v/%03d", i)
		h, err := c.Open(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if got := readHandle(t, h); !bytes.Equal(got, budgetValue(i, size)) {
			t.Fatalf("%s: reloaded %d bytes that are not its value", key, len(got))
		}
		h.Close()
	}
}

// TestBudgetAsksForAFlushOnlyWhenItFrees: values still open for writing
// stay in memory after a flush, so writing past the budget through open
// files asks for none; closing them does.
func TestBudgetAsksForAFlushOnlyWhenItFrees(t *testing.T) {
	const n, size, budget = 8, 256 << 10, 1 << 20
	c, asked := budgetSession(t, budget)
	var open []*session.File
	for i := range n {
		h, err := c.Create(fmt.Sprintf("v%d", i), session.CreateOptions{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.WriteAt(budgetValue(i, size), 0); err != nil {
			t.Fatal(err)
		}
		open = append(open, h)
	}
	if got := asked.Load(); got != 0 {
		t.Errorf("%d flushes asked for with every value open for writing, want none", got)
	}
	for _, h := range open {
		h.Close()
	}
	if asked.Load() == 0 {
		t.Errorf("no flush asked for with %d unflushed bytes closed, over a budget of %d", n*size, budget)
	}
}

// TestBudgetDropsNothingAChangeLoaded: an attribute change, an extended
// attribute and a new name load the value to save it with them; values
// dropped by other opens meanwhile never fail them.
func TestBudgetDropsNothingAChangeLoaded(t *testing.T) {
	const n, size = 16, 4 << 10
	ctx := context.Background()
	c := session.NewContext(budgetStore(t, n, size), session.Options{MaxMemory: 1})
	if err := c.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // every open and close trims: each drops every other value
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if h, err := c.Open(ctx, fmt.Sprintf("v/%03d", i%n)); err == nil {
				h.Close()
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for round := range 200 {
		key := fmt.Sprintf("v/%03d", round%n)
		mode := fs.FileMode(0o600 + round%2*0o40)
		if _, err := c.SetAttr(ctx, key, session.Attr{Mode: &mode}); err != nil {
			t.Fatalf("round %d: chmod %s: %v", round, key, err)
		}
		if err := c.XAttrs().Set(ctx, key, "user.round", []byte(fmt.Sprint(round)), 0); err != nil {
			t.Fatalf("round %d: setxattr %s: %v", round, key, err)
		}
		if err := c.Link(ctx, key, fmt.Sprintf("v/l%d", round)); err != nil {
			t.Fatalf("round %d: link %s: %v", round, key, err)
		}
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// budgetSession is a session over a fresh directory store with budget,
// and the count of the flushes it asked for (Options.Pressure).
func budgetSession(t *testing.T, budget int64) (*session.Context, *atomic.Int32) {
	t.Helper()
	st, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	asked := new(atomic.Int32)
	c := session.NewContext(st, session.Options{MaxMemory: budget, Pressure: func() { asked.Add(1) }})
	if err := c.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c, asked
}
