package runs_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/runs"
)

var stores = []struct {
	name string
	open func(t testing.TB) backend.SysStore
}{
	{"dir", func(t testing.TB) backend.SysStore {
		st, err := dirstore.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
	{"badger", func(t testing.TB) backend.SysStore {
		st, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
	{"etcd", openEtcd},
}

// openEtcd is a namespace of a real etcd server of its own: a store that
// swaps system records, as many mounts share it.
func openEtcd(t testing.TB) backend.SysStore {
	srv := etcdtest.Start(t)
	cfg, err := etcdstore.ParseURL(srv.URL("runs"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := etcdstore.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// randomEvents appends n events of a few runs (and of none) with random
// ops and keys to l.
func randomEvents(t testing.TB, l *eventlog.Log, rng *rand.Rand, n int) {
	t.Helper()
	ops := []string{eventlog.OpWrite, eventlog.OpDelete, eventlog.OpRename, eventlog.OpAttr}
	var evs []eventlog.Event
	for range n {
		ev := eventlog.Event{Op: ops[rng.IntN(len(ops))], Key: fmt.Sprintf("memory/k%d.md", rng.IntN(40)), Session: "s"}
		if ev.Op == eventlog.OpRename {
			ev.OldKey = fmt.Sprintf("memory/k%d.md", rng.IntN(40))
		}
		if r := rng.IntN(4); r > 0 {
			ev.Writer = meta.WriterInfo{Comm: "agent", Run: fmt.Sprintf("run-%d", r)}
		}
		evs = append(evs, ev)
	}
	if _, err := l.Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
}

// checkRebuild fails t unless every run's projection (Current) equals the
// rebuild from the whole log, and List names exactly the rebuilt runs.
func checkRebuild(t *testing.T, p *runs.Projector, seed uint64) {
	t.Helper()
	ctx := context.Background()
	want, _, err := p.Rebuild(ctx)
	if err != nil {
		t.Fatal(err)
	}
	list, err := p.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kept := make(map[string]runs.Meta, len(list))
	for _, run := range list {
		m, ok, err := p.Current(ctx, run)
		if err != nil || !ok {
			t.Fatalf("seed %d: Current(%s): %v, %v", seed, run, ok, err)
		}
		kept[run] = m
	}
	for _, d := range runs.Diff(kept, want) {
		t.Errorf("seed %d: %s", seed, d)
	}
}

// A projection caught up at random points (and read between) equals the
// rebuild from the whole log, on every store, and a catch-up after
// another leaves it so; across a reopen of the store and the log.
func TestProjectionEqualsRebuild(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			rng := rand.New(rand.NewPCG(seed, seed))
			st := s.open(t)
			l, err := eventlog.Open(t.Context(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			p := runs.New(st, l)
			for range 30 {
				randomEvents(t, l, rng, 1+rng.IntN(60))
				if rng.IntN(2) == 0 {
					if err := p.CatchUp(t.Context()); err != nil {
						t.Fatal(err)
					}
				}
				if rng.IntN(4) == 0 {
					checkRebuild(t, p, seed)
				}
			}
			checkRebuild(t, p, seed)
			l2, err := eventlog.Open(t.Context(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			p2 := runs.New(st, l2)
			randomEvents(t, l2, rng, 50)
			checkRebuild(t, p2, seed)
			if err := p2.CatchUp(t.Context()); err != nil {
				t.Fatal(err)
			}
			checkRebuild(t, p2, seed)
		})
	}
}

// A catch-up that stops between the records and the cursor (the store
// fails the cursor's save, as a crash there would leave it) folds no
// event twice when the next catch-up starts again from the old cursor.
func TestCatchUpAfterRecordsWithoutCursor(t *testing.T) {
	ds, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	failCursor := false
	st := errorstore.Wrap(ds, func(op errorstore.Op, keys []string) error {
		if failCursor && op == errorstore.OpSaveSys && len(keys) == 1 && keys[0] == "runs/cursor" {
			return fmt.Errorf("crash before the cursor")
		}
		return nil
	}).(backend.SysStore)
	l, err := eventlog.Open(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := runs.New(st, l)
	rng := rand.New(rand.NewPCG(1, 2))
	randomEvents(t, l, rng, 40)
	if err := p.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	randomEvents(t, l, rng, 40)
	failCursor = true
	if err := p.CatchUp(t.Context()); err == nil {
		t.Fatal("the cursor's save failed, and CatchUp said nothing")
	}
	failCursor = false
	checkRebuild(t, p, 1)
	if err := p.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkRebuild(t, p, 1)
}

// A run's keys are bounded: past MaxKeys the projection says it lists
// only some, and keeps counting the events.
func TestKeysBounded(t *testing.T) {
	var m runs.Meta
	for i := range runs.MaxKeys + 10 {
		m.Apply(eventlog.Event{Seq: uint64(i + 1), Op: eventlog.OpWrite, Key: fmt.Sprintf("k%05d", i)})
	}
	if len(m.Keys) != runs.MaxKeys || !m.KeysTruncated || m.Events != runs.MaxKeys+10 {
		t.Errorf("%d keys, truncated %v, %d events", len(m.Keys), m.KeysTruncated, m.Events)
	}
	m.Apply(eventlog.Event{Seq: 3, Op: eventlog.OpWrite, Key: "again"})
	if m.Events != runs.MaxKeys+10 {
		t.Errorf("an event already folded in was counted again: %d", m.Events)
	}
}

// A catch-up reads only the chunks of the new events (1,500 of them, over
// two chunks of the log): one to three chunks with a log of 40,000 events
// as with one of 2,000 (the count stands for the time:
// the update of a projection does not grow with the log).
func TestCatchUpReadsOnlyNewEvents(t *testing.T) {
	loads := map[int]int64{}
	for _, n := range []int{2000, 40000} {
		st := stores[0].open(t)
		l, err := eventlog.Open(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := runs.New(st, l)
		rng := rand.New(rand.NewPCG(3, 4))
		for range n / 1000 {
			randomEvents(t, l, rng, 1000)
		}
		if err := p.CatchUp(t.Context()); err != nil {
			t.Fatal(err)
		}
		randomEvents(t, l, rng, 1500)
		// A log opened anew holds no chunk a catch-up could read from
		// memory: each it reads is a load.
		l2, err := eventlog.Open(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		p2 := runs.New(st, l2)
		before := l2.Loads()
		if err := p2.CatchUp(t.Context()); err != nil {
			t.Fatal(err)
		}
		loads[n] = l2.Loads() - before
		checkRebuild(t, p2, 3)
	}
	t.Logf("chunks read: %v", loads)
	if loads[40000] > 3 || loads[2000] > 3 || loads[40000] == 0 || loads[2000] == 0 {
		t.Errorf("chunks read by a catch-up of 1,500 new events: %d with 2,000 events, %d with 40,000; want 1 to 3 either way (a fold of the whole log reads 40)", loads[2000], loads[40000])
	}
}

// BenchmarkCatchUp is the cost of a catch-up of 100 new events, as the
// log grows: per new event, with logs of 1,000 and 100,000 events.
func BenchmarkCatchUp(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("log=%d", n), func(b *testing.B) {
			st := stores[1].open(b)
			l, err := eventlog.Open(context.Background(), st, nil)
			if err != nil {
				b.Fatal(err)
			}
			p := runs.New(st, l)
			rng := rand.New(rand.NewPCG(5, 6))
			for range n / 1000 {
				randomEvents(b, l, rng, 1000)
			}
			if err := p.CatchUp(context.Background()); err != nil {
				b.Fatal(err)
			}
			var spent time.Duration
			for b.Loop() {
				randomEvents(b, l, rng, 100)
				start := time.Now()
				if err := p.CatchUp(context.Background()); err != nil {
					b.Fatal(err)
				}
				spent += time.Since(start)
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N*100), "ns/event")
		})
	}
}

// One catch-up over the events of 300 runs saves them all on etcd, whose
// transactions take at most 128 operations (one swap of them all was
// refused, and the projection never moved again).
func TestCatchUpOfManyRunsOnEtcd(t *testing.T) {
	st := openEtcd(t)
	l, err := eventlog.Open(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var evs []eventlog.Event
	for i := range 300 {
		evs = append(evs, eventlog.Event{Op: eventlog.OpWrite, Key: fmt.Sprintf("memory/k%d.md", i), Session: "s",
			Writer: meta.WriterInfo{Run: fmt.Sprintf("task-%d", i)}})
	}
	if _, err := l.Append(t.Context(), evs); err != nil {
		t.Fatal(err)
	}
	p := runs.New(st, l)
	if err := p.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	recs, err := st.ListSys(t.Context(), "runs/r/")
	if err != nil || len(recs) != 300 {
		t.Fatalf("%d records (%v), want 300", len(recs), err)
	}
	checkRebuild(t, p, 0)
}

// A record that cannot be decoded is folded anew from its run's events,
// never taken for an empty one that the new events start again.
func TestDamagedRecordFoldedAnew(t *testing.T) {
	st := stores[0].open(t)
	l, err := eventlog.Open(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := runs.New(st, l)
	rng := rand.New(rand.NewPCG(7, 8))
	randomEvents(t, l, rng, 200)
	if err := p.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveSys(t.Context(), "runs/r/run-1", []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	randomEvents(t, l, rng, 50)
	checkRebuild(t, p, 7)
	if err := p.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkRebuild(t, p, 7)
}

// A log cut back (its records gone, as a recovery that cuts a damaged end
// leaves it, numbering its next events from the cut) is folded anew: the
// cursor's event is not the log's any more.
func TestLogCutBackFoldedAnew(t *testing.T) {
	st := stores[0].open(t)
	l, err := eventlog.Open(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := runs.New(st, l)
	rng := rand.New(rand.NewPCG(9, 10))
	randomEvents(t, l, rng, 300)
	if err := p.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	es, err := st.ListSys(t.Context(), "events")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if err := st.DeleteSys(t.Context(), e.Key); err != nil {
			t.Fatal(err)
		}
	}
	l2, err := eventlog.Open(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	p2 := runs.New(st, l2)
	randomEvents(t, l2, rng, 100)
	checkRebuild(t, p2, 9)
	if err := p2.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkRebuild(t, p2, 9)
}

// A damaged line in the middle of the log (and a chunk that cannot be
// read at all) is passed over by the catch-up, the current projection and
// the rebuild alike: the projection goes on, and equals its rebuild
// (found by this stop's review: one damaged line failed every catch-up,
// and .memfs/runs answered EIO).
func TestDamagedLogLinePassedOver(t *testing.T) {
	st := stores[0].open(t)
	l, err := eventlog.Open(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for range 3 {
		randomEvents(t, l, rng, 1000)
	}
	chunks, err := st.ListSys(t.Context(), "events/")
	if err != nil || len(chunks) < 3 {
		t.Fatalf("%d chunks (%v), want 3 or more", len(chunks), err)
	}
	damage := func(name string, at int) {
		b, err := st.LoadSys(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")
		lines[at] = strings.Repeat("#", len(lines[at])-1) + "\n" // the same size: only the line is bad
		if err := st.SaveSys(t.Context(), name, []byte(strings.Join(lines, ""))); err != nil {
			t.Fatal(err)
		}
	}
	damage(chunks[0].Key, 7)
	damage(chunks[1].Key, 500)
	l2, err := eventlog.Open(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := runs.New(st, l2)
	randomEvents(t, l2, rng, 20)
	checkRebuild(t, p, 11)
	if err := p.CatchUp(t.Context()); err != nil {
		t.Fatalf("a catch-up over a damaged line: %v", err)
	}
	checkRebuild(t, p, 11)
}

// A chunk the store itself reports damaged (a checksum that fails) is
// passed over as a damaged line is (found by this stop's second review).
func TestChunkTheStoreReportsDamagedPassedOver(t *testing.T) {
	ds, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	l, err := eventlog.Open(t.Context(), ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for range 3 {
		randomEvents(t, l, rng, 1000)
	}
	chunks, err := ds.ListSys(t.Context(), "events/")
	if err != nil || len(chunks) < 3 {
		t.Fatalf("%d chunks (%v)", len(chunks), err)
	}
	bad := chunks[1].Key
	st := errorstore.Wrap(ds, func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpLoadSys && len(keys) == 1 && keys[0] == bad {
			return fmt.Errorf("%s: %w", bad, backend.ErrCorrupt)
		}
		return nil
	}).(backend.SysStore)
	l2, err := eventlog.Open(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := runs.New(st, l2)
	if err := p.CatchUp(t.Context()); err != nil {
		t.Fatalf("a catch-up over a chunk the store reports damaged: %v", err)
	}
	checkRebuild(t, p, 13)
}
