package eventlog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// wev is event i of writer w, with a key that names both.
func wev(w string, i int) Event {
	e := ev(i)
	e.Key = fmt.Sprintf("%s/%d", w, i)
	e.Session = w
	return e
}

// checkOnce opens a fresh Log on sys and checks that it holds exactly the
// keys in want, each once, with seqs 1..len(want), and that the chain
// verifies without warnings.
func checkOnce(t *testing.T, sys Sys, want []string) []Event {
	t.Helper()
	checkChain(t, sys, len(want))
	r := mustVerifyOK(t, sys)
	if len(r.Warnings) > 0 {
		t.Errorf("Verify warnings: %q", r.Warnings)
	}
	l := openLog(t, sys)
	p, err := l.Query(t.Context(), Query{Limit: len(want) + 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != len(want) {
		t.Fatalf("fresh Open: got %d events, want %d", len(p.Events), len(want))
	}
	seen := make(map[string]int)
	for i, e := range p.Events {
		if e.Seq != uint64(i+1) {
			t.Fatalf("fresh Open: event %d has seq %d", i+1, e.Seq)
		}
		seen[e.Key]++
	}
	for _, k := range want {
		if seen[k] != 1 {
			t.Errorf("key %s: stored %d times, want once", k, seen[k])
		}
	}
	return p.Events
}

// Two processes (two Logs on one shared store), each with several
// goroutines appending at once: every event is stored exactly once, in
// one chain.
func TestSwapConcurrent(t *testing.T) {
	sys := newSwapSys()
	ctx := context.Background()
	logs := []*Log{openLog(t, sys), openLog(t, sys)}
	const goroutines, events = 4, 200
	// A random pause before each swap lets the other writer in more
	// often than the scheduler alone would.
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	var rndMu sync.Mutex // guards rnd
	rnd := rand.New(rand.NewPCG(uint64(seed), 0))
	sys.setHook(func() {
		rndMu.Lock()
		d := time.Duration(rnd.IntN(2000)) * time.Microsecond
		rndMu.Unlock()
		time.Sleep(d)
	})
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex // guards got
		got  []Event    // as Append returned them
		want []string
	)
	for li, l := range logs {
		for g := range goroutines {
			w := fmt.Sprintf("log%d-g%d", li, g)
			for i := range events {
				want = append(want, wev(w, i).Key)
			}
			wg.Go(func() {
				for i := 0; i < events; {
					n := min(1+i%5, events-i) // batches of 1 to 5 events
					var evs []Event
					for k := range n {
						evs = append(evs, wev(w, i+k))
					}
					out, err := l.Append(ctx, evs)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					got = append(got, out...)
					mu.Unlock()
					i += n
				}
			})
		}
	}
	// Readers on both Logs, refreshing, beside the writers.
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for _, l := range logs {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := l.Refresh(ctx); err != nil {
					t.Error(err)
					return
				}
				p, err := l.Query(ctx, Query{Limit: 50})
				if err != nil {
					t.Error(err)
					return
				}
				for i := 1; i < len(p.Events); i++ {
					if p.Events[i].Seq != p.Events[i-1].Seq+1 {
						t.Errorf("page not consecutive: %d after %d", p.Events[i].Seq, p.Events[i-1].Seq)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("%d swaps, %d lost to the other writer", sys.swaps.Load(), sys.lost.Load())

	stored := checkOnce(t, sys, want)
	// What Append returned is what the store holds.
	slices.SortFunc(got, func(a, b Event) int { return int(a.Seq) - int(b.Seq) })
	if len(got) != len(stored) {
		t.Fatalf("Append returned %d events, the store holds %d", len(got), len(stored))
	}
	for i := range got {
		a, b := mustLine(t, &got[i]), mustLine(t, &stored[i])
		if string(a) != string(b) {
			t.Fatalf("event %d: Append returned %s, the store holds %s", stored[i].Seq, a, b)
		}
	}
	// After a Refresh both Logs see the whole log.
	for i, l := range logs {
		if err := l.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		p, err := l.Query(ctx, Query{Limit: len(want) + 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Events) != len(want) {
			t.Errorf("log %d after Refresh: got %d events, want %d", i, len(p.Events), len(want))
		}
	}
}

// B appends between A's Open and A's Append: A's first swap fails, A
// reloads and numbers its events after B's, whatever chunk that falls in.
func TestSwapConflict(t *testing.T) {
	tests := []struct {
		name      string
		start     int // events before A and B open
		b, a      int // events B appends first, then A
		wantFresh int // chunks when done
	}{
		{"in the tail", 10, 3, 2, 1},
		{"empty log", 0, 3, 2, 1},
		{"B fills the tail", ChunkEvents - 2, 5, 3, 2},
		{"A would have filled the tail", ChunkEvents - 5, 2, 10, 2},
		{"B starts a chunk A had planned", ChunkEvents, 1, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := newSwapSys()
			var want []string
			if tt.start > 0 {
				first := openLog(t, sys)
				for _, e := range mustAppend(t, first, evsAt(0, tt.start, nil)) {
					want = append(want, e.Key)
				}
			}
			a, b := openLog(t, sys), openLog(t, sys)
			var bEvs, aEvs []Event
			for i := range tt.b {
				bEvs = append(bEvs, wev("b", i))
				want = append(want, bEvs[i].Key)
			}
			for i := range tt.a {
				aEvs = append(aEvs, wev("a", i))
				want = append(want, aEvs[i].Key)
			}
			bOut := mustAppend(t, b, bEvs)
			swaps, lost := sys.swaps.Load(), sys.lost.Load()
			aOut := mustAppend(t, a, aEvs)
			if got := sys.swaps.Load() - swaps; got != 2 {
				t.Errorf("A's swaps: got %d, want 2", got)
			}
			if got := sys.lost.Load() - lost; got != 1 {
				t.Errorf("A's lost swaps: got %d, want 1", got)
			}
			if got, want := aOut[0].Seq, bOut[len(bOut)-1].Seq+1; got != want {
				t.Errorf("A's first seq: got %d, want %d", got, want)
			}
			if got, want := aOut[0].Prev, lineHash(mustLine(t, &bOut[len(bOut)-1])); got != want {
				t.Errorf("A's first prev: got %s, want the hash of B's last event %s", got, want)
			}
			for i := range aOut {
				if aOut[i].Key != aEvs[i].Key || aOut[i].Session != "a" {
					t.Errorf("A's event %d: got key %s, want %s", i, aOut[i].Key, aEvs[i].Key)
				}
			}
			checkOnce(t, sys, want)
			if got := len(sys.chunkNames(t)); got != tt.wantFresh {
				t.Errorf("chunk records: got %d, want %d: %q", got, tt.wantFresh, sys.chunkNames(t))
			}
			// A knows the whole log now; B does after a Refresh.
			if b.Size() >= a.Size() {
				t.Errorf("B sees A's events before a Refresh")
			}
			if err := b.Refresh(t.Context()); err != nil {
				t.Fatal(err)
			}
			if a.Size() != b.Size() || !slices.Equal(a.RecordNames(""), b.RecordNames("")) {
				t.Errorf("after Refresh: B has size %d and records %q, A %d and %q", b.Size(), b.RecordNames(""), a.Size(), a.RecordNames(""))
			}
			// And B appends on top.
			mustAppend(t, b, []Event{wev("b", 1000)})
			checkOnce(t, sys, append(want, wev("b", 1000).Key))
		})
	}
}

// Refresh shows what another writer appended, and costs one LoadSys when
// nothing moved.
func TestSwapRefresh(t *testing.T) {
	sys := newSwapSys()
	ctx := t.Context()
	a, b := openLog(t, sys), openLog(t, sys)
	mustAppend(t, b, evsAt(0, ChunkEvents+5, nil))
	if p, _ := a.Query(ctx, Query{}); len(p.Events) != 0 {
		t.Fatalf("before Refresh: A sees %d events", len(p.Events))
	}
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := a.Query(ctx, Query{Limit: 2 * ChunkEvents})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != ChunkEvents+5 {
		t.Fatalf("after Refresh: A sees %d events, want %d", len(p.Events), ChunkEvents+5)
	}
	if a.Size() != b.Size() {
		t.Errorf("Size: A %d, B %d", a.Size(), b.Size())
	}
	buf := make([]byte, a.Size())
	if n, err := a.ReadAt(ctx, buf, 0); int64(n) != b.Size() || err != nil {
		t.Errorf("ReadAt: %d bytes, %v", n, err)
	}
	all, _ := stored(t, sys)
	if string(buf) != string(all) {
		t.Errorf("ReadAt after Refresh differs from the store")
	}
	for _, name := range b.RecordNames("") {
		got, err := a.ReadRecord(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if want := sys.get(t, name); string(got) != string(want) {
			t.Errorf("ReadRecord %s differs from the store", name)
		}
	}

	loads, sysLoads := a.Loads(), sys.loads.Load()
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := a.Loads() - loads; got != 1 {
		t.Errorf("Refresh with nothing new: %d loads, want 1", got)
	}
	if got := sys.loads.Load() - sysLoads; got != 1 {
		t.Errorf("Refresh with nothing new: the store saw %d loads, want 1", got)
	}
	// A few more events in the tail: the head, the tail, no earlier chunk.
	mustAppend(t, b, evsAt(2000, 3, nil))
	loads = a.Loads()
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := a.Loads() - loads; got > 2 {
		t.Errorf("Refresh after 3 events: %d loads, want at most 2", got)
	}
	if got, want := a.Size(), b.Size(); got != want {
		t.Errorf("Size after Refresh: got %d, want %d", got, want)
	}
}

// A writer that keeps losing gives up after SwapTries swaps with
// ErrContended, having written nothing; its events offered again are
// stored once.
func TestSwapContended(t *testing.T) {
	sys := newSwapSys()
	a, b := openLog(t, sys), openLog(t, sys)
	var inHook atomic.Bool
	var bN int
	// Before each of A's swaps, B appends: A always loses.
	sys.setHook(func() {
		if inHook.Swap(true) {
			return // B's own swap
		}
		defer inHook.Store(false)
		mustAppend(t, b, []Event{wev("b", bN)})
		bN++
	})
	swaps := sys.swaps.Load()
	evs := []Event{wev("a", 0), wev("a", 1)}
	_, err := a.Append(t.Context(), evs)
	if !errors.Is(err, ErrContended) {
		t.Fatalf("Append: got %v, want ErrContended", err)
	}
	sys.setHook(nil)
	if got := (sys.swaps.Load() - swaps) - int64(bN); got != SwapTries {
		t.Errorf("A's swaps: got %d, want %d", got, SwapTries)
	}
	var want []string
	for i := range bN {
		want = append(want, wev("b", i).Key)
	}
	checkOnce(t, sys, want)

	mustAppend(t, a, evs)
	checkOnce(t, sys, append(want, evs[0].Key, evs[1].Key))
}

// A SwapSys error: the store may or may not have committed the swap, now
// or later. The caller offers the same events again; they are stored
// exactly once.
func TestSwapError(t *testing.T) {
	tests := []struct {
		name string
		err  error // what the failing swap does
		// between runs after the failure, before the retry
		between func(t *testing.T, sys *swapSys, b *Log)
		more    bool // the retry offers one more event after the same ones
	}{
		{name: "not committed", err: errInjected},
		{name: "committed", err: errLanded},
		{name: "committed, more offered", err: errLanded, more: true},
		{name: "committed, then another writer", err: errLanded, between: func(t *testing.T, sys *swapSys, b *Log) {
			mustAppend(t, b, []Event{wev("b", 0)})
		}},
		{name: "not committed, then another writer", err: errInjected, between: func(t *testing.T, sys *swapSys, b *Log) {
			mustAppend(t, b, []Event{wev("b", 0)})
		}},
		{name: "committed late, before the retry", err: errLater, between: func(t *testing.T, sys *swapSys, b *Log) {
			if oks := sys.applyLate(t); !slices.Equal(oks, []bool{true}) {
				t.Fatalf("late swap: got %v, want it to hold", oks)
			}
		}},
		{name: "committed late, after another writer", err: errLater, between: func(t *testing.T, sys *swapSys, b *Log) {
			mustAppend(t, b, []Event{wev("b", 0)})
			if oks := sys.applyLate(t); !slices.Equal(oks, []bool{false}) {
				t.Fatalf("late swap: got %v, want it to fail its guard", oks)
			}
		}},
		{name: "in doubt across the retry", err: errLater},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := newSwapSys()
			a, b := openLog(t, sys), openLog(t, sys)
			want := []string{}
			for _, e := range mustAppend(t, a, evsAt(0, 5, nil)) {
				want = append(want, e.Key)
			}
			evs := []Event{wev("a", 0), wev("a", 1), wev("a", 2)}
			sys.setFail(func(op, name string) error {
				if op == "swap" {
					return tt.err
				}
				return nil
			})
			if _, err := a.Append(t.Context(), evs); !errors.Is(err, tt.err) {
				t.Fatalf("Append: got %v, want %v", err, tt.err)
			}
			sys.setFail(nil)
			if tt.between != nil {
				tt.between(t, sys, b)
				if strings.Contains(tt.name, "another writer") {
					want = append(want, wev("b", 0).Key)
				}
			}
			offer := evs
			if tt.more {
				offer = append(slices.Clone(evs), wev("a", 3))
			}
			out := mustAppend(t, a, offer)
			if len(out) != len(offer) {
				t.Fatalf("retry: got %d events back, want %d", len(out), len(offer))
			}
			for i := range out {
				if out[i].Key != offer[i].Key {
					t.Errorf("retry: event %d is %s, want %s", i, out[i].Key, offer[i].Key)
				}
			}
			for _, e := range offer {
				want = append(want, e.Key)
			}
			if tt.name == "in doubt across the retry" {
				// The retry held its guard, so the swap in doubt cannot.
				if oks := sys.applyLate(t); !slices.Equal(oks, []bool{false}) {
					t.Fatalf("late swap: got %v, want it to fail its guard", oks)
				}
			}
			stored := checkOnce(t, sys, want)
			// What the retry returned is what the store holds.
			for _, e := range out {
				if got, want := string(mustLine(t, &stored[e.Seq-1])), string(mustLine(t, &e)); got != want {
					t.Errorf("event %d: the store holds %s, the retry returned %s", e.Seq, got, want)
				}
			}
		})
	}
}

// A Log on a store that is not shared writes as before: no SwapSys.
func TestNoSwapOnPlainStore(t *testing.T) {
	sys := newMemSys()
	var _ Sys = sys
	if _, ok := Sys(sys).(swapper); ok {
		t.Fatal("memSys claims SwapSys")
	}
	l := openLog(t, sys)
	mustAppend(t, l, evsAt(0, 10, nil))
	loads := sys.loads.Load()
	if err := l.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := sys.loads.Load() - loads; got != 0 {
		t.Errorf("Refresh on a store that is not shared: %d loads, want 0", got)
	}
	checkChain(t, sys, 10)
}

// Two writers open a log whose end is damaged: the first Append records
// the damage, the other's, which loses the race, does not record it again.
func TestSwapDamageRecordedOnce(t *testing.T) {
	sys := newSwapSys()
	first := openLog(t, sys)
	mustAppend(t, first, evsAt(0, 10, nil))
	last := sys.chunkNames(t)[0]
	sys.put(t, last, append(sys.get(t, last), `{"seq":11,"ti`...))

	a, b := openLog(t, sys), openLog(t, sys)
	if len(a.Damage()) != 1 || len(b.Damage()) != 1 {
		t.Fatalf("Damage: A %v, B %v, want one each", a.Damage(), b.Damage())
	}
	bOut := mustAppend(t, b, []Event{wev("b", 0)})
	aOut := mustAppend(t, a, []Event{wev("a", 0)})
	if bOut[0].Seq != 12 || aOut[0].Seq != 13 {
		t.Errorf("seqs: B %d, A %d, want 12 (after the break event) and 13", bOut[0].Seq, aOut[0].Seq)
	}
	_, evs := stored(t, sys)
	breaks := 0
	for _, e := range evs {
		if e.Op == OpBreak {
			breaks++
		}
	}
	if breaks != 1 {
		t.Errorf("break events: got %d, want 1", breaks)
	}
	r, err := Verify(t.Context(), sys)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || len(r.Damage) != 2 || r.Events != 13 {
		t.Errorf("Verify: OK %v, %d events, damage %q; want not OK, 13 events, one break event and one copy", r.OK, r.Events, r.Damage)
	}
}
