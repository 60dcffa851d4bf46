package eventlog

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// benchStores gives each benchmark a fresh Sys, closed at the end.
var benchStores = []struct {
	name string
	open func(b *testing.B) Sys
}{
	{"mem", func(b *testing.B) Sys { return newMemSys() }},
	{"dirstore", func(b *testing.B) Sys {
		s := realStores[0].open(b, b.TempDir())
		b.Cleanup(func() { closeStore(b, s) })
		return s
	}},
	{"badgerstore", func(b *testing.B) Sys {
		s := realStores[1].open(b, b.TempDir())
		b.Cleanup(func() { closeStore(b, s) })
		return s
	}},
}

// BenchmarkAppend appends one batch per op to a growing log; on the real
// stores each op is one durable save per changed chunk plus the head.
func BenchmarkAppend(b *testing.B) {
	for _, bs := range benchStores {
		for _, batch := range []int{100, 10_000} {
			b.Run(fmt.Sprintf("%s/batch=%d", bs.name, batch), func(b *testing.B) {
				l := openLog(b, bs.open(b))
				evs := evsAt(0, batch, nil)
				ctx := context.Background()
				for b.Loop() {
					if _, err := l.Append(ctx, evs); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/event")
			})
		}
	}
}

// BenchmarkLastPage queries a log of 1,000,000 events on each real store:
// the last page on an open Log (the tail is in memory), a page in the
// middle (one or two chunk loads; the Log's chunk cache is cleared each
// time), and Open followed by the last page (a cold start).
func BenchmarkLastPage(b *testing.B) {
	const n = 1_000_000
	for _, bs := range benchStores[1:] {
		b.Run(bs.name, func(b *testing.B) {
			sys := bs.open(b)
			start := time.Now()
			l := openLog(b, sys)
			at := func(k int) time.Time { return epoch.Add(time.Duration(k) * time.Millisecond) }
			for i := 0; i < n; i += 50_000 {
				mustAppend(b, l, evsAt(i, 50_000, at))
			}
			b.Logf("%s: built a log of %d events (%d bytes) in %v", bs.name, n, l.Size(), time.Since(start))
			ctx := context.Background()
			l = openLog(b, sys)

			b.Run("last", func(b *testing.B) {
				for b.Loop() {
					if p, err := l.Query(ctx, Query{}); err != nil || len(p.Events) != DefaultLimit {
						b.Fatal(len(p.Events), err)
					}
				}
			})
			b.Run("middle", func(b *testing.B) {
				loads := l.Loads()
				for b.Loop() {
					l.mu.Lock()
					l.cache = [2]cached{}
					l.mu.Unlock()
					if p, err := l.Query(ctx, Query{Before: n / 2}); err != nil || len(p.Events) != DefaultLimit {
						b.Fatal(len(p.Events), err)
					}
				}
				b.ReportMetric(float64(l.Loads()-loads)/float64(b.N), "loads/op")
			})
			b.Run("open+last", func(b *testing.B) {
				var loads int64
				for b.Loop() {
					l, err := Open(ctx, sys, nil)
					if err != nil {
						b.Fatal(err)
					}
					if p, err := l.Query(ctx, Query{}); err != nil || len(p.Events) != DefaultLimit {
						b.Fatal(len(p.Events), err)
					}
					loads += l.Loads()
				}
				b.ReportMetric(float64(loads)/float64(b.N), "loads/op")
			})
		})
	}
}
