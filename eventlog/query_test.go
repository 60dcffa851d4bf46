package eventlog

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// queryLog builds a log of n events, event i (seq i+1) at epoch + i seconds
// except that runs of 10 events share a time, spanning several chunks.
func queryLog(t *testing.T, n int) (*Log, []Event) {
	t.Helper()
	sys := newMemSys()
	l := openLog(t, sys)
	at := func(k int) time.Time { return epoch.Add(time.Duration(k/10*10) * time.Second) }
	var all []Event
	for i := 0; i < n; i += 700 {
		all = append(all, mustAppend(t, l, evsAt(i, min(700, n-i), at))...)
	}
	return openLog(t, sys), all
}

// oracle answers q by filtering every event.
func oracle(all []Event, q Query) Page {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	var m []Event
	for _, e := range all {
		if q.match(&e) {
			m = append(m, e)
		}
	}
	if q.After > 0 || q.Forward {
		if len(m) > limit {
			return Page{Events: m[:limit], More: true}
		}
		return Page{Events: m}
	}
	if len(m) > limit {
		return Page{Events: m[len(m)-limit:], More: true}
	}
	return Page{Events: m}
}

func TestQuery(t *testing.T) {
	t.Parallel()
	const n = 3*ChunkEvents + 500
	l, all := queryLog(t, n)
	sec := func(s int) time.Time { return epoch.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name string
		q    Query
		want int // the page's length, a check on the oracle itself
		more bool
	}{
		{"default: last 100", Query{}, 100, true},
		{"limit", Query{Limit: 7}, 7, true},
		{"limit above the log", Query{Limit: n + 1}, n, false},
		{"negative limit is the default", Query{Limit: -1}, 100, true},
		{"key prefix", Query{KeyPrefix: "skills/", Limit: 5000}, (n + 1) / 3, false},
		{"key prefix, last page", Query{KeyPrefix: "agents/"}, 100, true},
		{"key prefix matches old_key", Query{KeyPrefix: "old/", Limit: 5000}, n / 5, false},
		{"exact key", Query{KeyPrefix: "memory/k3000"}, 1, false},
		{"no match", Query{KeyPrefix: "nothing/"}, 0, false},
		{"ops", Query{Ops: []string{OpDelete, OpRename}, Limit: 5000}, 2 * n / 5, false},
		{"ops and prefix", Query{Ops: []string{OpAttr}, KeyPrefix: "memory/", Limit: 50}, 50, true},
		{"since", Query{Since: sec(3500), Limit: 5000}, n - 3500, false},
		{"since inside a run of equal times", Query{Since: sec(3495), Limit: 5000}, n - 3500, false},
		// Events 1021-1030 share a time and straddle the first chunk boundary.
		{"since at a time two chunks share", Query{Since: sec(1020), Limit: 5000}, n - 1020, false},
		{"until at a time two chunks share", Query{Until: sec(1020), Limit: 5000}, 1020, false},
		{"until", Query{Until: sec(1000)}, 100, true},
		{"until, all", Query{Until: sec(1000), Limit: 5000}, 1000, false},
		{"since and until", Query{Since: sec(1020), Until: sec(2050), Limit: 5000}, 1030, false},
		{"since and until, last page", Query{Since: sec(1020), Until: sec(2050)}, 100, true},
		{"until before the log", Query{Until: epoch}, 0, false},
		{"since after the log", Query{Since: sec(n + 100)}, 0, false},
		{"before", Query{Before: 1500}, 100, true},
		{"before near the start", Query{Before: 30}, 29, false},
		{"before 1", Query{Before: 1}, 0, false},
		{"before past the end", Query{Before: n + 100, Limit: 3}, 3, true},
		{"after", Query{After: 1500}, 100, true},
		{"after near the end", Query{After: n - 10}, 10, false},
		{"after the end", Query{After: n}, 0, false},
		{"after and before", Query{After: 1000, Before: 1100, Limit: 200}, 99, false},
		{"after and before, one page of several", Query{After: 1000, Before: 2100, Limit: 200}, 200, true},
		{"after across a chunk boundary", Query{After: ChunkEvents - 5, Limit: 10}, 10, true},
		{"before across a chunk boundary", Query{Before: 2*ChunkEvents + 5, Limit: 10}, 10, true},
		{"forward from the start", Query{Forward: true, Limit: 10}, 10, true},
		{"forward with since", Query{Forward: true, Since: sec(2000), Limit: 10}, 10, true},
		{"after with since later", Query{After: 10, Since: sec(2000), Limit: 10}, 10, true},
		{"everything", Query{KeyPrefix: "memory/", Ops: []string{OpWrite}, Since: sec(100), Until: sec(3000), After: 50, Before: 2900, Limit: 40}, 40, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.Query(t.Context(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			want := oracle(all, tt.q)
			if len(want.Events) != tt.want || want.More != tt.more {
				t.Fatalf("oracle: got %d events, More %v; the test expects %d, %v", len(want.Events), want.More, tt.want, tt.more)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %d events %s, More %v; want %d events %s, More %v",
					len(got.Events), seqRange(got.Events), got.More, len(want.Events), seqRange(want.Events), want.More)
			}
		})
	}
}

func seqRange(evs []Event) string {
	if len(evs) == 0 {
		return "[]"
	}
	return fmt.Sprintf("[%d..%d]", evs[0].Seq, evs[len(evs)-1].Seq)
}

// Paging with Before (backwards) and After (forwards) visits every matching
// event once.
func TestQueryPaging(t *testing.T) {
	t.Parallel()
	l, all := queryLog(t, ChunkEvents+300)
	filters := []Query{
		{},
		{KeyPrefix: "skills/"},
		{Ops: []string{OpRename}, Since: epoch.Add(500 * time.Second)},
	}
	for _, f := range filters {
		t.Run(fmt.Sprintf("%+v", f), func(t *testing.T) {
			want := oracle(all, Query{KeyPrefix: f.KeyPrefix, Ops: f.Ops, Since: f.Since, Limit: len(all)}).Events

			var back []Event
			q := f
			q.Limit = 97
			for {
				p, err := l.Query(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				back = append(slices.Clone(p.Events), back...)
				if !p.More {
					break
				}
				q.Before = p.Events[0].Seq
			}
			if !reflect.DeepEqual(back, want) {
				t.Errorf("paging back: got %d events %s, want %d %s", len(back), seqRange(back), len(want), seqRange(want))
			}

			var fwd []Event
			q = f
			q.Limit, q.Forward = 97, true
			for {
				p, err := l.Query(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				fwd = append(fwd, p.Events...)
				if !p.More {
					break
				}
				q.After = p.Events[len(p.Events)-1].Seq
			}
			if !reflect.DeepEqual(fwd, want) {
				t.Errorf("paging forward: got %d events %s, want %d %s", len(fwd), seqRange(fwd), len(want), seqRange(want))
			}
		})
	}
}

func TestQueryEmptyLog(t *testing.T) {
	l := openLog(t, newMemSys())
	for _, q := range []Query{{}, {After: 5}, {Before: 5}, {Since: epoch}, {KeyPrefix: "x"}} {
		p, err := l.Query(t.Context(), q)
		if err != nil || len(p.Events) != 0 || p.More {
			t.Errorf("Query(%+v) on an empty log: got %+v, %v", q, p, err)
		}
	}
}

// A chunk whose line does not parse, or holds another seq than its
// position says, is an error wrapping ErrCorrupt, not a wrong page.
func TestQueryCorruptChunk(t *testing.T) {
	tests := []struct {
		name   string
		damage func(string) string
	}{
		{"line does not parse", func(d string) string { return strings.Replace(d, `{"seq":500,`, `{"seq":500x`, 1) }},
		{"line removed", func(d string) string {
			i := strings.Index(d, `{"seq":500,`)
			return d[:i] + d[i+strings.IndexByte(d[i:], '\n')+1:]
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := newMemSys()
			l := openLog(t, sys)
			mustAppend(t, l, evsAt(0, 2*ChunkEvents, nil))
			first := sys.chunkNames(t)[0]
			sys.put(t, first, []byte(tt.damage(string(sys.get(t, first)))))
			l2 := openLog(t, sys)
			if _, err := l2.Query(t.Context(), Query{Before: 600, After: 400}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), first) {
				t.Fatalf("got %v, want ErrCorrupt naming %s", err, first)
			}
			// Pages that do not reach the damage are served.
			if p, err := l2.Query(t.Context(), Query{Limit: 1000}); err != nil || len(p.Events) != 1000 {
				t.Fatalf("last page: got %d events, %v", len(p.Events), err)
			}
		})
	}
}
