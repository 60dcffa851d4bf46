package eventlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
)

// DefaultLimit is the page size of a Query with no Limit.
const DefaultLimit = 100

// Query selects events. The zero Query is the last DefaultLimit events.
type Query struct {
	KeyPrefix string    // events whose Key or OldKey starts with KeyPrefix; "" for all
	Ops       []string  // events with one of these ops; empty for all
	Run       string    // events of this run (Writer.Run); "" for all
	Since     time.Time // events at or after Since; zero for no bound
	Until     time.Time // events before Until; zero for no bound
	Before    uint64    // events with Seq < Before; 0 for no bound
	After     uint64    // events with Seq > After; 0 for no bound
	// Forward pages from the start of the range instead of its end; an
	// After above 0 implies it.
	Forward bool
	Limit   int // the most events in the page; 0 (or less) for DefaultLimit
	// SkipDamaged passes over what cannot be read (a line that does not
	// decode, or holds another seq; a chunk that cannot be read at all,
	// or that the store reports damaged)
	// instead of failing the query, and counts it in Page.Damaged: for a
	// reader that folds the log (the projection of runs), one bad entry
	// never blocks the rest. Verify and memfs fsck say what is damaged.
	SkipDamaged bool
}

// Page is the answer to a Query.
type Page struct {
	// Events are the matching events in ascending seq order: the last
	// Limit of the range, or with After (or Forward) the first Limit.
	Events []Event
	// More reports that further events match in the direction of
	// paging: before Events[0] when paging back (ask again with Before set
	// to Events[0].Seq), after the last event when paging forward (ask
	// again with After set to its Seq).
	More bool
	// Damaged is how many lines (and chunks that could not be read at
	// all) a SkipDamaged query passed over.
	Damaged int
}

func (q *Query) match(ev *Event) bool {
	switch {
	case q.After > 0 && ev.Seq <= q.After,
		q.Before > 0 && ev.Seq >= q.Before,
		!q.Since.IsZero() && ev.Time.Before(q.Since),
		!q.Until.IsZero() && !ev.Time.Before(q.Until),
		len(q.Ops) > 0 && !slices.Contains(q.Ops, ev.Op),
		q.Run != "" && ev.Writer.Run != q.Run,
		q.KeyPrefix != "" && !strings.HasPrefix(ev.Key, q.KeyPrefix) &&
			(ev.OldKey == "" || !strings.HasPrefix(ev.OldKey, q.KeyPrefix)):
		return false
	}
	return true
}

// Query returns one page of events. The chunk names bound the chunks that
// can hold a match (by seq for Before and After, by time for Since and
// Until); the chunks in that range are then read one at a time from the
// paging end until the page is full, plus one event to settle More. So the
// last page of an unfiltered log reads at most two chunks, whatever the
// log's length, and a filter that matches little may read the whole range.
//
// Query trusts the layout: the line at position j of a chunk is event
// first seq + j. A line that does not parse, or holds another seq (a line
// removed or added by hand), is an error wrapping ErrCorrupt; Verify says
// what happened.
func (l *Log) Query(ctx context.Context, q Query) (Page, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	v := l.view()
	n := v.count()
	if n == 0 {
		return Page{}, nil
	}
	minSeq, maxSeq := q.After+1, v.lastSeq
	if q.Before > 0 {
		maxSeq = min(maxSeq, q.Before-1)
	}
	if minSeq > maxSeq {
		return Page{}, nil
	}
	lo, hi := v.chunkOf(minSeq), v.chunkOf(maxSeq)
	if !q.Since.IsZero() {
		// Times are non-decreasing, so only the chunk before the first
		// one that starts at or after Since can hold earlier matches.
		i := sort.Search(n, func(i int) bool { return !v.at(i).time.Before(q.Since) })
		lo = max(lo, i-1)
	}
	if !q.Until.IsZero() {
		i := sort.Search(n, func(i int) bool { return !v.at(i).time.Before(q.Until) })
		hi = min(hi, i-1)
	}

	var got []Event // in paging order
	damaged := 0
	forward := q.Forward || q.After > 0
	for k := range max(0, hi-lo+1) {
		if len(got) > limit {
			break
		}
		i := hi - k
		if forward {
			i = lo + k
		}
		if err := ctx.Err(); err != nil {
			return Page{}, err
		}
		var err error
		if got, err = l.chunkEvents(ctx, &v, i, &q, forward, limit, got, &damaged); err != nil {
			return Page{}, err
		}
	}
	p := Page{Events: got, More: len(got) > limit, Damaged: damaged}
	if p.More {
		p.Events = got[:limit]
	}
	if !forward {
		slices.Reverse(p.Events)
	}
	return p, nil
}

// chunkEvents appends to got the events of chunk i of v that q matches,
// in paging order, until it holds more than limit; damaged counts what a
// SkipDamaged query passed over.
func (l *Log) chunkEvents(ctx context.Context, v *view, i int, q *Query, forward bool, limit int, got []Event, damaged *int) ([]Event, error) {
	c := v.at(i)
	lines, err := l.lines(ctx, v, i)
	if err != nil && q.SkipDamaged && (errors.Is(err, ErrCorrupt) || errors.Is(err, backend.ErrCorrupt)) {
		*damaged++
		return got, nil
	}
	if err != nil {
		return got, err
	}
	for k := range lines {
		j := k
		if !forward {
			j = len(lines) - 1 - k
		}
		// A line's position gives its seq, so lines outside Before and
		// After are skipped without decoding.
		seq := c.seq + uint64(j)
		if q.After > 0 && seq <= q.After || q.Before > 0 && seq >= q.Before {
			continue
		}
		ev, err := decodeLine(lines[j])
		if err == nil && ev.Seq != seq {
			err = fmt.Errorf("holds event %d, want %d", ev.Seq, seq)
		}
		if err != nil && q.SkipDamaged {
			*damaged++
			continue
		}
		if err != nil {
			return got, fmt.Errorf("%w: %s line %d: %v", ErrCorrupt, c.name, j+1, err)
		}
		if q.match(&ev) {
			got = append(got, ev)
			if len(got) > limit {
				break
			}
		}
	}
	return got, nil
}

// view is a consistent snapshot of the log's chunks.
type view struct {
	full    []chunk // never modified: Append only appends past len
	tail    chunk
	data    []byte // the tail's bytes
	lastSeq uint64
}

func (l *Log) view() view {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.viewLocked()
}

func (l *Log) viewLocked() view {
	return view{full: l.full[:len(l.full):len(l.full)], tail: l.tail, data: l.tailData, lastSeq: l.lastSeq}
}

// count is the number of chunks, the tail included.
func (v *view) count() int {
	if v.tail.name == "" {
		return 0
	}
	return len(v.full) + 1
}

func (v *view) at(i int) chunk {
	if i == len(v.full) {
		c := v.tail
		c.size = int64(len(v.data))
		return c
	}
	return v.full[i]
}

// size is the length of the JSONL stream.
func (v *view) size() int64 {
	if v.tail.name == "" {
		return 0
	}
	return v.tail.off + int64(len(v.data))
}

// chunkOf returns the index of the chunk that holds seq, or would: the last
// chunk whose first seq is not above it (0 if none).
func (v *view) chunkOf(seq uint64) int {
	i := sort.Search(v.count(), func(i int) bool { return v.at(i).seq > seq })
	return max(0, i-1)
}

// chunkData returns chunk i's bytes: the tail from memory, others from the
// cache or the store.
func (l *Log) chunkData(ctx context.Context, v *view, i int) ([]byte, error) {
	if i == len(v.full) {
		return v.data, nil
	}
	c := v.full[i]
	l.mu.Lock()
	for k, e := range l.cache {
		if e.name == c.name {
			l.cache[0], l.cache[k] = l.cache[k], l.cache[0]
			l.mu.Unlock()
			return e.data, nil
		}
	}
	l.mu.Unlock()
	data, err := l.load(ctx, c.name)
	if err != nil {
		return nil, fmt.Errorf("eventlog: load %s: %w", c.name, err)
	}
	if int64(len(data)) != c.size {
		return nil, fmt.Errorf("%w: %s is %d bytes, listed as %d", ErrCorrupt, c.name, len(data), c.size)
	}
	l.mu.Lock()
	l.cache[1], l.cache[0] = l.cache[0], cached{name: c.name, data: data}
	l.mu.Unlock()
	return data, nil
}

// lines returns chunk i's lines, without their newlines.
func (l *Log) lines(ctx context.Context, v *view, i int) ([][]byte, error) {
	data, err := l.chunkData(ctx, v, i)
	if err != nil {
		return nil, err
	}
	lines, torn := splitLines(data)
	if torn > 0 {
		return nil, fmt.Errorf("%w: %s: last line has no newline", ErrCorrupt, v.at(i).name)
	}
	return lines, nil
}

// load is the one place the log calls LoadSys.
func (l *Log) load(ctx context.Context, name string) ([]byte, error) {
	l.loads.Add(1)
	return l.sys.LoadSys(ctx, name)
}

// Loads returns how many LoadSys calls the Log has made, Open's included.
func (l *Log) Loads() int64 { return l.loads.Load() }
