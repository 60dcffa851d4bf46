package eventlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAppendQueryRoundTrip(t *testing.T) {
	sys := newMemSys()
	l := openLog(t, sys)
	ctx := t.Context()

	var want []Event
	// Batch 1: zero times (now, from the test clock).
	want = append(want, mustAppend(t, l, evsAt(0, 3, nil))...)
	// Batch 2: explicit times, one of them earlier than the last event.
	late := epoch.Add(time.Hour)
	b2 := evsAt(3, 3, nil)
	b2[0].Time = late
	b2[1].Time = epoch.Add(-time.Hour) // earlier: must become late
	b2[2].Time = late.Add(time.Second).In(time.FixedZone("X", 3600))
	got2 := mustAppend(t, l, b2)
	want = append(want, got2...)
	if !got2[1].Time.Equal(late) {
		t.Errorf("earlier time: got %v, want the previous event's %v", got2[1].Time, late)
	}
	if got2[2].Time.Location() != time.UTC || !got2[2].Time.Equal(b2[2].Time) {
		t.Errorf("time: got %v, want %v in UTC", got2[2].Time, b2[2].Time)
	}
	// Batch 3: zero time after explicit later times: not before them.
	got3 := mustAppend(t, l, evsAt(6, 4, nil))
	want = append(want, got3...)
	if got3[0].Time.Before(got2[2].Time) {
		t.Errorf("time went backwards: %v after %v", got3[0].Time, got2[2].Time)
	}
	if b2[1].Seq != 0 || b2[1].Time != epoch.Add(-time.Hour) {
		t.Errorf("Append changed the caller's events: %+v", b2[1])
	}

	for i, e := range want {
		if e.Seq != uint64(i+1) {
			t.Errorf("event %d: got seq %d", i, e.Seq)
		}
		in := ev(i)
		if e.Key != in.Key || e.Op != in.Op || e.OldKey != in.OldKey || e.Writer != in.Writer || e.SHA256 != in.SHA256 {
			t.Errorf("event %d: got %+v, want the fields of %+v", i, e, in)
		}
	}
	p, err := l.Query(ctx, Query{})
	if err != nil {
		t.Fatal(err)
	}
	if p.More {
		t.Error("More: got true for the whole log")
	}
	if !reflect.DeepEqual(p.Events, want) {
		t.Errorf("Query:\n got %+v\nwant %+v", p.Events, want)
	}
	checkChain(t, sys, len(want))
	mustVerifyOK(t, sys)

	hd := sys.get(t, headName)
	if wantHead := fmt.Sprintf(`{"seq":10,"hash":%q}`, lineHash(mustLine(t, &want[9]))); string(hd) != wantHead {
		t.Errorf("head: got %s, want %s", hd, wantHead)
	}
}

func mustLine(t *testing.T, e *Event) []byte {
	t.Helper()
	b, _, err := encodeLine(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAppendRefuses(t *testing.T) {
	tests := []struct {
		name string
		ev   Event
	}{
		{"unknown op", Event{Op: "chmod", Key: "a"}},
		{"no op", Event{Key: "a"}},
		{"empty key", Event{Op: OpWrite}},
		{"break op, the log's own", Event{Op: OpBreak, Key: "events.head", Break: &Break{Record: "events.head"}}},
		{"time past year 9999", Event{Op: OpWrite, Key: "a", Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := newMemSys()
			l := openLog(t, sys)
			mustAppend(t, l, evsAt(0, 2, nil))
			if _, err := l.Append(t.Context(), []Event{ev(2), tt.ev}); err == nil {
				t.Fatal("Append: got nil error")
			}
			p, err := l.Query(t.Context(), Query{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Events) != 2 {
				t.Errorf("got %d events after a refused Append, want 2", len(p.Events))
			}
			checkChain(t, sys, 2)
		})
	}
}

func TestChunkRollover(t *testing.T) {
	t.Parallel()
	sys := newMemSys()
	l := openLog(t, sys)
	mustAppend(t, l, evsAt(0, ChunkEvents, nil))
	if names := sys.chunkNames(t); len(names) != 1 {
		t.Fatalf("after %d events: got chunks %v, want 1", ChunkEvents, names)
	}
	out := mustAppend(t, l, evsAt(ChunkEvents, 1, nil))
	names := sys.chunkNames(t)
	if len(names) != 2 {
		t.Fatalf("after %d events: got chunks %v, want 2", ChunkEvents+1, names)
	}
	if want := chunkName(ChunkEvents+1, out[0].Time); names[1] != want {
		t.Errorf("second chunk: got %s, want %s", names[1], want)
	}
	// A batch that fills the tail and spans several chunks.
	mustAppend(t, l, evsAt(ChunkEvents+1, 3*ChunkEvents, nil))
	n := 4*ChunkEvents + 1
	if names := sys.chunkNames(t); len(names) != 5 {
		t.Fatalf("after %d events: got %d chunks, want 5", n, len(names))
	}
	for i, name := range sys.chunkNames(t) {
		lines := bytes.Count(sys.get(t, name), []byte("\n"))
		if want := min(ChunkEvents, n-i*ChunkEvents); lines != want {
			t.Errorf("chunk %s: got %d events, want %d", name, lines, want)
		}
	}
	checkChain(t, sys, n)
	mustVerifyOK(t, sys)
}

func TestReopen(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 1000, ChunkEvents, ChunkEvents + 1, 2500} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			sys := newMemSys()
			l := openLog(t, sys)
			var first []Event
			if n > 0 {
				first = mustAppend(t, l, evsAt(0, n, nil))
			}
			size := l.Size()

			l2 := openLogAt(t, sys, func() time.Time { return epoch.Add(time.Hour) })
			if got := l2.Loads(); got > 2 {
				t.Errorf("Open: got %d loads, want at most 2 (head and last chunk)", got)
			}
			if l2.Size() != size {
				t.Errorf("Size after reopen: got %d, want %d", l2.Size(), size)
			}
			more := mustAppend(t, l2, evsAt(n, 10, nil))
			if more[0].Seq != uint64(n+1) {
				t.Errorf("first seq after reopen: got %d, want %d", more[0].Seq, n+1)
			}
			wantPrev := ""
			if n > 0 {
				wantPrev = lineHash(mustLine(t, &first[n-1]))
			}
			if more[0].Prev != wantPrev {
				t.Errorf("first prev after reopen: got %q, want %q", more[0].Prev, wantPrev)
			}
			checkChain(t, sys, n+10)
			mustVerifyOK(t, sys)
		})
	}
}

func TestTornTail(t *testing.T) {
	t.Parallel()
	// Each case damages the end of a log of n events (head at n unless
	// the case says otherwise) and says how many events survive Open.
	tests := []struct {
		name   string
		n      int
		damage func(t *testing.T, sys *memSys, last string)
		keep   int
	}{
		{"partial last line", 10, func(t *testing.T, sys *memSys, last string) {
			d := sys.get(t, last)
			sys.put(t, last, append(d, `{"seq":11,"time":"2025-06-01T12:00:00Z","op":"wri`...))
		}, 10},
		{"garbage last line", 10, func(t *testing.T, sys *memSys, last string) {
			d := sys.get(t, last)
			sys.put(t, last, append(d, "\x00\x01garbage\n"...))
		}, 10},
		{"last line cut short of its newline", 10, func(t *testing.T, sys *memSys, last string) {
			d := sys.get(t, last)
			sys.put(t, last, d[:len(d)-20])
			sys.put(t, headName, fmt.Appendf(nil, `{"seq":9,"hash":%q}`, lineHash(lineOf(t, d, 9))))
		}, 9},
		{"whole last line that does not chain", 10, func(t *testing.T, sys *memSys, last string) {
			d := sys.get(t, last)
			e := Event{Seq: 11, Time: epoch.Add(time.Hour), Op: OpWrite, Key: "x", Prev: strings.Repeat("0", 64)}
			sys.put(t, last, append(append(d, mustLine(t, &e)...), '\n'))
		}, 10},
		{"duplicated last line", 10, func(t *testing.T, sys *memSys, last string) {
			d := sys.get(t, last)
			sys.put(t, last, append(d, append(lineOf(t, d, 10), '\n')...))
		}, 10},
		{"torn first line of a new chunk", ChunkEvents, func(t *testing.T, sys *memSys, last string) {
			sys.put(t, chunkName(ChunkEvents+1, epoch.Add(time.Hour)), []byte(`{"seq":1025,"ti`))
		}, ChunkEvents},
		{"torn line after a full chunk", ChunkEvents, func(t *testing.T, sys *memSys, last string) {
			d := sys.get(t, last)
			sys.put(t, last, append(d, `{"seq":1025`...))
		}, ChunkEvents},
		{"torn line after a full chunk and a partial one", ChunkEvents + 3, func(t *testing.T, sys *memSys, last string) {
			d := sys.get(t, last)
			sys.put(t, last, append(d, `{"seq":1028`...))
		}, ChunkEvents + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := newMemSys()
			l := openLog(t, sys)
			mustAppend(t, l, evsAt(0, tt.n, nil))
			names := sys.chunkNames(t)
			tt.damage(t, sys, names[len(names)-1])
			names = sys.chunkNames(t)
			last := names[len(names)-1] // the damaged chunk
			damaged := sys.clone(t)
			torn := sys.get(t, last)

			l2 := openLogAt(t, sys, func() time.Time { return epoch.Add(2 * time.Hour) })
			p, err := l2.Query(t.Context(), Query{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Events) != 1 || p.Events[0].Seq != uint64(tt.keep) {
				t.Fatalf("last event after Open: got %+v, want seq %d", p.Events, tt.keep)
			}
			if !equalRecords(sys.records(t), damaged.records(t)) {
				t.Fatal("Open wrote to the store")
			}
			if d := l2.Damage(); len(d) != 1 || d[0].Record != last || !d[0].Moved || d[0].First != uint64(tt.keep+1) {
				t.Fatalf("Damage: got %+v, want one break of %s from event %d, moved", d, last, tt.keep+1)
			}
			more := mustAppend(t, l2, evsAt(tt.keep, 5, nil))
			if more[0].Seq != uint64(tt.keep+2) {
				t.Errorf("next seq: got %d, want %d (after the break event)", more[0].Seq, tt.keep+2)
			}
			// The stored log is whole: the intact events, the break, the
			// new events; the torn chunk as found is kept aside.
			checkChain(t, sys, tt.keep+6)
			if data, _ := stored(t, sys); int64(len(data)) != l2.Size() {
				t.Errorf("Size: got %d, want the stored %d", l2.Size(), len(data))
			}
			brk, err := l2.Query(t.Context(), Query{After: uint64(tt.keep), Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			b := brk.Events[0]
			if b.Op != OpBreak || b.Break == nil || b.Break.SavedTo != damagedName(last, torn) || b.Key != last || b.SHA256 != recordSum(torn) {
				t.Fatalf("event %d: got %+v, want the break naming %s and its copy", tt.keep+1, b, last)
			}
			if got := sys.get(t, b.Break.SavedTo); !bytes.Equal(got, torn) {
				t.Errorf("the copy holds %d bytes, want the %d of the chunk as found", len(got), len(torn))
			}
			for range 2 {
				r, err := Verify(t.Context(), sys)
				if err != nil {
					t.Fatal(err)
				}
				if r.OK || r.Seq != uint64(tt.keep+1) || len(r.Damage) != 2 || !strings.Contains(r.Damage[0], b.Break.SavedTo) {
					t.Errorf("Verify: got OK %v at %d: %q, damage %q; want the break at %d and its copy", r.OK, r.Seq, r.Problem, r.Damage, tt.keep+1)
				}
				l3 := openLog(t, sys)
				if l3.Size() != l2.Size() || len(l3.Damage()) != 0 {
					t.Errorf("reopen: Size %d (want %d), damage %+v (want none: recorded)", l3.Size(), l2.Size(), l3.Damage())
				}
				mustAppend(t, l3, evsAt(100, 3, nil))
				l2 = l3
			}
		})
	}
}

// lineOf returns line seq (1-based within data's events, by seq) of data.
func lineOf(t *testing.T, data []byte, seq uint64) []byte {
	t.Helper()
	for ln := range bytes.Lines(data) {
		ln = bytes.TrimSuffix(ln, []byte("\n"))
		if e, err := decodeLine(ln); err == nil && e.Seq == seq {
			return ln
		}
	}
	t.Fatalf("no line with seq %d", seq)
	return nil
}

// An edited event that the head vouches for is not cut by Open: the
// evidence stays for Verify.
func TestOpenKeepsVouchedLines(t *testing.T) {
	sys := newMemSys()
	l := openLog(t, sys)
	mustAppend(t, l, evsAt(0, 20, nil))
	name := sys.chunkNames(t)[0]
	d := sys.get(t, name)
	edited := bytes.Replace(d, []byte(`"memory/k9"`), []byte(`"memory/k8"`), 1)
	if bytes.Equal(edited, d) {
		t.Fatal("test did not edit")
	}
	sys.put(t, name, edited)
	l2 := openLog(t, sys)
	if l2.Size() != int64(len(edited)) {
		t.Errorf("Size: got %d, want %d (nothing cut)", l2.Size(), len(edited))
	}
	if got := sys.get(t, name); !bytes.Equal(got, edited) {
		t.Error("Open rewrote a chunk the head vouches for")
	}
	r, err := Verify(t.Context(), sys)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || r.Seq != 10 {
		t.Errorf("Verify: got OK %v seq %d (%s), want a problem at event 10", r.OK, r.Seq, r.Problem)
	}
}

// A chunk left by an Append that failed after saving it, whose retry then
// wrote fewer events, does not chain to the log: Open drops it.
func TestOpenDropsLeftoverChunk(t *testing.T) {
	for _, withDelete := range []bool{true, false} {
		t.Run(fmt.Sprintf("DeleteSys=%v", withDelete), func(t *testing.T) {
			mem := newMemSys()
			var sys Sys = mem
			if !withDelete {
				sys = noDelete{mem}
			}
			l := openLog(t, sys)
			mustAppend(t, l, evsAt(0, 1000, nil))
			// Attempt A: events 1001-1030; the tail and the new chunk
			// land, the head fails; then removing leftovers fails too.
			mem.setFail(func(op, name string) error {
				switch {
				case op == "save" && name == headName:
					return errInjected
				case op == "delete":
					return errInjected
				}
				return nil
			})
			if _, err := l.Append(t.Context(), evsAt(1000, 30, nil)); !errors.Is(err, errInjected) {
				t.Fatalf("Append: got %v, want the injected error", err)
			}
			if n := len(mem.chunkNames(t)); n != 2 {
				t.Fatalf("got %d chunks after the failed append, want 2", n)
			}
			// Retry B: fewer events; its leftover removal fails (or
			// empties the chunk without DeleteSys).
			mem.setFail(func(op, name string) error {
				if op == "delete" {
					return errInjected
				}
				return nil
			})
			mustAppend(t, l, evsAt(1000, 5, nil))
			mem.setFail(nil)

			l2 := openLog(t, sys)
			p, err := l2.Query(t.Context(), Query{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Events) != 1 || p.Events[0].Seq != 1005 {
				t.Fatalf("last event after Open: got %+v, want seq 1005", p.Events)
			}
			if l2.Size() != l.Size() {
				t.Errorf("Size after reopen: got %d, want %d", l2.Size(), l.Size())
			}
			mustAppend(t, l2, evsAt(1005, 100, nil))
			checkChain(t, sys, 1105)
			mustVerifyOK(t, sys)
		})
	}
}

func TestAppendSaveFails(t *testing.T) {
	t.Parallel()
	// Each case starts from a log of start events, fails the k-th SaveSys
	// of an Append of n events, then retries.
	tests := []struct {
		name     string
		start, n int
		failAt   int
		landed   bool // the failing save stores the record anyway
	}{
		{"tail save", 10, 5, 1, false},
		{"tail save that landed", 10, 5, 1, true},
		{"head save", 10, 5, 2, false},
		{"head save, chunk landed", 10, 5, 2, true},
		{"new chunk save", 1000, 100, 2, false},
		{"new chunk save that landed", 1000, 100, 2, true},
		{"head after a new chunk", 1000, 100, 3, false},
		{"new chunk after a full tail", ChunkEvents, 10, 1, true},
		{"third chunk", 10, 3 * ChunkEvents, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := newMemSys()
			l := openLog(t, sys)
			mustAppend(t, l, evsAt(0, tt.start, nil))
			before, _ := l.Query(t.Context(), Query{Limit: 1 << 20})
			size := l.Size()

			saves := 0
			sys.setFail(func(op, name string) error {
				if op != "save" {
					return nil
				}
				if saves++; saves == tt.failAt {
					if tt.landed {
						return errLanded
					}
					return errInjected
				}
				return nil
			})
			if _, err := l.Append(t.Context(), evsAt(tt.start, tt.n, nil)); err == nil {
				t.Fatal("Append: got nil error")
			}
			sys.setFail(nil)
			after, err := l.Query(t.Context(), Query{Limit: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(after, before) || l.Size() != size {
				t.Fatalf("the Log changed: got %d events (size %d), want %d (size %d)",
					len(after.Events), l.Size(), len(before.Events), size)
			}
			stream := make([]byte, size+10)
			if n, _ := l.ReadAt(t.Context(), stream, 0); int64(n) != size {
				t.Errorf("ReadAt after a failed Append: got %d bytes, want %d", n, size)
			}

			out := mustAppend(t, l, evsAt(tt.start, tt.n, nil))
			if out[0].Seq != uint64(tt.start+1) {
				t.Errorf("retry: first seq %d, want %d", out[0].Seq, tt.start+1)
			}
			total := tt.start + tt.n
			checkChain(t, sys, total)
			r := mustVerifyOK(t, sys)
			if len(r.Warnings) > 0 {
				t.Errorf("Verify warnings after a retry: %q", r.Warnings)
			}
			l2 := openLog(t, sys)
			if l2.Size() != l.Size() {
				t.Errorf("Size after reopen: got %d, want %d", l2.Size(), l.Size())
			}
		})
	}
}

// A crash after an Append whose head save failed but whose chunks landed:
// the store holds those events; the head is behind (a warning, not a break).
func TestCrashBeforeHead(t *testing.T) {
	sys := newMemSys()
	l := openLog(t, sys)
	mustAppend(t, l, evsAt(0, 1020, nil))
	sys.setFail(func(op, name string) error {
		if op == "save" && name == headName {
			return errInjected
		}
		return nil
	})
	if _, err := l.Append(t.Context(), evsAt(1020, 10, nil)); err == nil {
		t.Fatal("Append: got nil error")
	}
	sys.setFail(nil)
	r := mustVerifyOK(t, sys)
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "head record is at event 1020") {
		t.Errorf("Verify warnings: got %q, want one about the head at 1020", r.Warnings)
	}
	l2 := openLog(t, sys)
	out := mustAppend(t, l2, evsAt(1030, 1, nil))
	if out[0].Seq != 1031 {
		t.Errorf("next seq: got %d, want 1031", out[0].Seq)
	}
	checkChain(t, sys, 1031)
	if r := mustVerifyOK(t, sys); len(r.Warnings) != 0 {
		t.Errorf("Verify warnings: %q", r.Warnings)
	}
}

func TestConcurrent(t *testing.T) {
	sys := newMemSys()
	l := openLog(t, sys)
	ctx := context.Background()
	const writers, batches, batch = 4, 20, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				if _, err := l.Append(ctx, evsAt(w*1000+b*batch, batch, nil)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			buf := make([]byte, 4096)
			for {
				select {
				case <-stop:
					return
				default:
				}
				p, err := l.Query(ctx, Query{Limit: 300})
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
				size := l.Size()
				if _, err := l.ReadAt(ctx, buf, max(0, size-int64(len(buf)))); err != nil && !errors.Is(err, io.EOF) {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	checkChain(t, sys, writers*batches*batch)
	mustVerifyOK(t, sys)
}

// A retry never goes back in time before a failed attempt, so that when
// the attempt's chunk cannot be removed, the retry's chunk at the same seq
// still wins (the same name, or a later one).
func TestRetryNotEarlierThanFailedAttempt(t *testing.T) {
	sys := newMemSys()
	l := openLog(t, sys)
	mustAppend(t, l, evsAt(0, ChunkEvents, nil))
	sys.setFail(func(op, name string) error {
		if op == "save" && name != headName {
			return errLanded
		}
		return nil
	})
	if _, err := l.Append(t.Context(), evsAt(5000, 10, func(int) time.Time { return epoch.Add(10 * time.Hour) })); err == nil {
		t.Fatal("Append: got nil error")
	}
	sys.setFail(func(op, name string) error {
		if op == "delete" {
			return errInjected
		}
		return nil
	})
	want := mustAppend(t, l, evsAt(7000, 10, func(int) time.Time { return epoch.Add(time.Hour) }))
	sys.setFail(nil)
	if !want[0].Time.Equal(epoch.Add(10 * time.Hour)) {
		t.Errorf("retry time: got %v, want the failed attempt's %v", want[0].Time, epoch.Add(10*time.Hour))
	}
	l2 := openLog(t, sys)
	p, err := l2.Query(t.Context(), Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Events, want) {
		t.Fatalf("after reopen: got %s %q..., want the retry's events %s %q...", seqRange(p.Events), p.Events[0].Key, seqRange(want), want[0].Key)
	}
	checkChain(t, sys, ChunkEvents+10)
	mustVerifyOK(t, sys)
}

// Open repairs only the end of the log: a log whose first chunk and head
// were removed keeps its remaining chunks (Verify reports the loss).
func TestOpenKeepsALogWithoutItsStart(t *testing.T) {
	sys := newMemSys()
	l := openLog(t, sys)
	mustAppend(t, l, evsAt(0, ChunkEvents+100, nil))
	names := sys.chunkNames(t)
	sys.remove(t, names[0])
	sys.remove(t, headName)
	want := sys.get(t, names[1])
	l2 := openLog(t, sys)
	if l2.Size() != int64(len(want)) {
		t.Fatalf("Size: got %d, want the remaining chunk's %d", l2.Size(), len(want))
	}
	if got := sys.get(t, names[1]); !bytes.Equal(got, want) {
		t.Fatal("Open changed the remaining chunk")
	}
	r, err := Verify(t.Context(), sys)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || r.Seq != 1 {
		t.Errorf("Verify: got OK %v at %d (%s), want events from 1 missing", r.OK, r.Seq, r.Problem)
	}
}
