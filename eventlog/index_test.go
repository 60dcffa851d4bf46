package eventlog

import (
	"testing"
	"time"
)

// bigLog builds a log of n events on the in-memory store, event k at
// epoch + k ms, in batches of 50,000, and opens it afresh.
func bigLog(t testing.TB, n int) (*memSys, *Log) {
	t.Helper()
	sys := newMemSys()
	l := openLog(t, sys)
	at := func(k int) time.Time { return epoch.Add(time.Duration(k) * time.Millisecond) }
	const batch = 50_000
	for i := 0; i < n; i += batch {
		mustAppend(t, l, evsAt(i, min(batch, n-i), at))
	}
	return sys, openLog(t, sys)
}

// The chunk names are the index: a page at the end, at a seq or at a time
// costs one or two chunk loads however long the log is. indexEvents is
// 1,000,000, or less under the race detector (race_on_test.go).
func TestIndexLoads(t *testing.T) {
	t.Parallel()
	n := indexEvents
	start := time.Now()
	_, l := bigLog(t, n)
	t.Logf("built a log of %d events in %v; %d chunks, %d bytes", n, time.Since(start), n/ChunkEvents+1, l.Size())
	mid := uint64(n / 2)
	midTime := epoch.Add(time.Duration(n/2) * time.Millisecond)
	tests := []struct {
		name     string
		q        Query
		maxLoads int64
		first    uint64 // the page's first and last seq
		last     uint64
	}{
		{"last page", Query{Limit: 100}, 2, uint64(n - 99), uint64(n)},
		{"last page of 1000", Query{Limit: 1000}, 2, uint64(n - 999), uint64(n)},
		{"before the middle", Query{Before: mid, Limit: 100}, 2, mid - 100, mid - 1},
		{"after the middle", Query{After: mid, Limit: 100}, 2, mid + 1, mid + 100},
		{"since the middle", Query{Since: midTime, Limit: 100}, 3, uint64(n - 99), uint64(n)},
		{"since the middle, forward", Query{Since: midTime, Forward: true, Limit: 100}, 3, mid + 1, mid + 100},
		{"until the middle", Query{Until: midTime, Limit: 100}, 3, mid - 99, mid},
		{"a window in the middle", Query{Since: midTime, Until: midTime.Add(50 * time.Millisecond), Limit: 100}, 3, mid + 1, mid + 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l.mu.Lock()
			l.cache = [2]cached{} // each case pays for its own loads
			l.mu.Unlock()
			before := l.Loads()
			p, err := l.Query(t.Context(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			got := l.Loads() - before
			if got > tt.maxLoads {
				t.Errorf("got %d loads, want at most %d", got, tt.maxLoads)
			}
			t.Logf("%d loads", got)
			if len(p.Events) == 0 || p.Events[0].Seq != tt.first || p.Events[len(p.Events)-1].Seq != tt.last {
				t.Fatalf("got %d events %s, want [%d..%d]", len(p.Events), seqRange(p.Events), tt.first, tt.last)
			}
			for i := 1; i < len(p.Events); i++ {
				if p.Events[i].Seq != p.Events[i-1].Seq+1 {
					t.Fatalf("seq %d after %d", p.Events[i].Seq, p.Events[i-1].Seq)
				}
			}
		})
	}
}
