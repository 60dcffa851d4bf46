package history_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/history"
)

// gcFixture is a history whose versions are dated: write adds a version
// of key at seq with value v made at t.
type gcFixture struct {
	t   *testing.T
	h   *history.Store
	s   backend.SysStore
	seq uint64
	all map[uint64]history.Version // every version written, by seq
	val map[history.Addr][]byte
}

func newGCFixture(t *testing.T, s backend.SysStore) *gcFixture {
	return &gcFixture{t: t, h: history.New(s), s: s, all: map[uint64]history.Version{}, val: map[history.Addr][]byte{}}
}

func (f *gcFixture) write(key string, v []byte, at time.Time) history.Version {
	f.t.Helper()
	ctx := f.t.Context()
	a, _, err := f.h.Put(ctx, v)
	if err != nil {
		f.t.Fatal(err)
	}
	f.seq++
	e := &backend.Entry{Key: key, Value: v, Info: backend.Info{Mode: 0o644, CTime: at, MTime: at}}
	ver := history.NewVersion(f.seq, history.OpWrite, e, a)
	recs, err := f.h.PlanVersions([]history.Version{ver})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.h.Write(ctx, recs); err != nil {
		f.t.Fatal(err)
	}
	f.all[f.seq], f.val[a] = ver, v
	return ver
}

// kept returns the seqs of key's versions Versions lists, checking each
// reads back byte for byte.
func (f *gcFixture) kept(key string) []uint64 {
	f.t.Helper()
	vs, err := f.h.Versions(f.t.Context(), key)
	if err != nil {
		f.t.Fatalf("Versions %s: %v", key, err)
	}
	var out []uint64
	for _, v := range vs {
		got, err := f.h.Get(f.t.Context(), v.Addr)
		if err != nil || !bytes.Equal(got, f.val[v.Addr]) {
			f.t.Errorf("version %d of %s: %d bytes, %v; want its %d bytes", v.Seq, key, len(got), err, len(f.val[v.Addr]))
		}
		out = append(out, v.Seq)
	}
	return out
}

func (f *gcFixture) collect(now time.Time) history.Collected {
	f.t.Helper()
	c, err := f.h.Collect(f.t.Context(), history.CollectOptions{Retention: history.RetentionOptions{Default: history.Retention{Last: 1}}, Now: func() time.Time { return now }})
	if err != nil {
		f.t.Fatalf("Collect at %v: %v", now, err)
	}
	return c
}

// Collect thins by age, keeps what a snapshot references, and sweeps an
// object only when it was unreferenced at a mark a grace period before:
// an object written for a flush whose version is not written yet stays.
func TestCollect(t *testing.T) {
	eachStore(t, func(t *testing.T, s backend.SysStore) {
		f := newGCFixture(t, s)
		ctx := t.Context()
		now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		day := 24 * time.Hour
		big := func(i int) []byte { return bytes.Repeat(fmt.Appendf(nil, "line %d of a large value\n", i), 4000) } // chunked
		// Of one old day, only the day's last is kept; a snapshot pins the first.
		v1 := f.write("memory/a.md", []byte("one"), now.Add(-60*day))
		f.write("memory/a.md", big(2), now.Add(-60*day+time.Hour))
		v3 := f.write("memory/a.md", []byte("three"), now.Add(-60*day+2*time.Hour))
		if err := f.h.Snapshot(ctx, "before", v1.Seq, "test/1"); err != nil {
			t.Fatal(err)
		}
		v4 := f.write("memory/a.md", []byte("four"), now.Add(-time.Hour))
		f.write("memory/b.md", big(2), now.Add(-90*day)) // the value of a's second
		v6 := f.write("memory/b.md", big(6), now.Add(-90*day+time.Minute))
		v7 := f.write("memory/b.md", []byte("seven"), now.Add(-time.Minute))

		c := f.collect(now)
		if c.VersionsRemoved != 2 || c.Pinned != 1 || c.Removed != 0 || c.Swept {
			t.Errorf("first Collect = %+v; want 2 versions removed, 1 pinned, nothing swept", c)
		}
		if got, want := fmt.Sprint(f.kept("memory/a.md")), fmt.Sprint([]uint64{v1.Seq, v3.Seq, v4.Seq}); got != want {
			t.Errorf("versions of a after thinning: %s, want %s", got, want)
		}
		if got, want := fmt.Sprint(f.kept("memory/b.md")), fmt.Sprint([]uint64{v6.Seq, v7.Seq}); got != want {
			t.Errorf("versions of b after thinning: %s, want %s", got, want)
		}
		// What the thinned versions alone held is still there (within grace).
		if got, err := f.h.Get(ctx, history.AddrOf(big(2))); err != nil || !bytes.Equal(got, big(2)) {
			t.Errorf("the thinned versions' value right after the mark: %v", err)
		}
		// A flush stores an object, its version not written yet.
		orphan := []byte("written by a flush still under way")
		if _, _, err := f.h.Put(ctx, orphan); err != nil {
			t.Fatal(err)
		}
		if c := f.collect(now.Add(30 * time.Minute)); c.Removed != 0 || c.Swept {
			t.Errorf("Collect within the grace period = %+v; want nothing swept", c)
		}
		c = f.collect(now.Add(2 * time.Hour))
		if !c.Swept || c.Removed == 0 {
			t.Errorf("Collect after the grace period = %+v; want a sweep", c)
		}
		if _, err := f.h.Get(ctx, history.AddrOf(big(2))); !errors.Is(err, backend.ErrKeyNotFound) {
			t.Errorf("the thinned versions' value after the sweep: %v, want gone", err)
		}
		if got, err := f.h.Get(ctx, history.AddrOf(orphan)); err != nil || !bytes.Equal(got, orphan) {
			t.Errorf("the object of a flush under way, first seen unreferenced by this collection: %v; want kept", err)
		}
		f.kept("memory/a.md")
		f.kept("memory/b.md")
		if c := f.collect(now.Add(4 * time.Hour)); c.Removed != 1 {
			t.Errorf("Collect a grace period later = %+v; want the orphan removed", c)
		}
		checkAllReadBack(t, f.h, ctx)
	})
}

// checkAllReadBack reads every version of every key a namespace lists.
func checkAllReadBack(t *testing.T, h *history.Store, ctx context.Context) {
	t.Helper()
	for _, k := range []string{"memory/a.md", "memory/b.md"} {
		vs, err := h.Versions(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if _, err := h.Get(ctx, v.Addr); err != nil {
				t.Errorf("version %d of %s: %v", v.Seq, k, err)
			}
		}
	}
}

// A flush that reuses an unreferenced object (its Missing found it present)
// and writes its version while a sweep is deleting: the sweep, guarded on
// the event log's head that the flush moves, stops and marks again, and
// the object stays.
func TestCollectGuard(t *testing.T) {
	mem := memstore.New()
	var once sync.Once
	var armed atomic.Bool // the collections' deletes only
	var f *gcFixture
	reused := []byte("a value an old, thinned version held, written again")
	st := errorstore.Wrap(mem, func(op errorstore.Op, keys []string) error {
		if armed.Load() && (op == errorstore.OpSwapSys || op == errorstore.OpDeleteSys) && slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, "history/o/") }) {
			once.Do(func() {
				// The flush, between the mark and this delete: its
				// version and its event log head, in one step.
				f.h = history.New(mem)
				f.write("memory/a.md", reused, time.Now())
				if err := mem.SaveSys(t.Context(), "events.head", []byte("2")); err != nil {
					t.Error(err)
				}
			})
		}
		return nil
	}).(backend.SysStore)
	f = newGCFixture(t, st)
	ctx := t.Context()
	now := time.Now()
	f.write("memory/a.md", reused, now.Add(-100*24*time.Hour))
	f.write("memory/a.md", []byte("a later one"), now.Add(-100*24*time.Hour+time.Minute))
	if err := mem.SaveSys(ctx, "events.head", []byte("1")); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	o := history.CollectOptions{Retention: history.RetentionOptions{Default: history.Retention{Last: 1}}, Guard: "events.head"}
	for _, at := range []time.Time{now, now.Add(2 * time.Hour)} {
		o.Now = func() time.Time { return at }
		c, err := history.New(st).Collect(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("Collect at %v: %+v", at, c)
	}
	if got, err := f.h.Get(ctx, history.AddrOf(reused)); err != nil || !bytes.Equal(got, reused) {
		t.Errorf("the value a version written during the sweep names: %v; want it kept", err)
	}
}
