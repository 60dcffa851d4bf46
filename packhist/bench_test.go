package packhist_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/packhist"
)

// BenchmarkStateAt measures a rebuild's state as of the head of a log of
// 20,000 writes to 200 notes (the replay of the whole log, then one record
// per note), and reports the archiving rate.
func BenchmarkStateAt(b *testing.B) {
	benchStateAt(b, memstore.New(), 20000)
}

// BenchmarkStateAtBadger is BenchmarkStateAt on badger (durable saves),
// with 5,000 events.
func BenchmarkStateAtBadger(b *testing.B) {
	st, err := badgerstore.Open(b.TempDir(), badgerstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchStateAt(b, st, 5000)
}

func benchStateAt(b *testing.B, st backend.SysStore, events int) {
	l, err := eventlog.Open(b.Context(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	a := packhist.NewArchiver(st, l, packhist.Options{})
	defer a.Close(b.Context())
	const notes, batch = 200, 100
	start := time.Now()
	for i := 0; i < events; i += batch {
		evs := make([]eventlog.Event, batch)
		vals := make([][]byte, batch)
		for j := range evs {
			vals[j] = fmt.Appendf(nil, "# note %d\nversion %d\n", (i+j)%notes, i+j)
			evs[j] = eventlog.Event{Op: eventlog.OpWrite, Key: fmt.Sprintf("memory/n%03d.md", (i+j)%notes), SHA256: hexSum(vals[j]), Size: int64(len(vals[j]))}
		}
		out, err := l.Append(b.Context(), evs)
		if err != nil {
			b.Fatal(err)
		}
		items := make([]packhist.Item, batch)
		for j := range out {
			items[j] = packhist.Item{Event: out[j], Saved: entry(out[j].Key, vals[j])}
		}
		a.Add(items)
	}
	if err := a.Sync(b.Context()); err != nil {
		b.Fatal(err)
	}
	rate := float64(events) / time.Since(start).Seconds()
	b.ResetTimer()
	for b.Loop() {
		s, err := packhist.StateAt(b.Context(), st, l, uint64(events), nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Keys()) != notes {
			b.Fatalf("%d notes, want %d", len(s.Keys()), notes)
		}
	}
	b.ReportMetric(rate, "archived-events/s")
}
