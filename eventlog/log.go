package eventlog

// Lock order: Log.appendMu before Log.mu. No I/O happens under mu; appendMu
// is held across Append's saves, which is what serializes appends.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memfs/memfs/backend"
)

// ErrCorrupt is wrapped by the errors of Query and ReadAt for a chunk whose
// content does not parse or does not have the size the store listed.
// [Verify] tells what exactly is wrong.
var ErrCorrupt = errors.New("eventlog: corrupt chunk")

// Log is an open event log. Its methods are safe for concurrent use.
type Log struct {
	sys   Sys              // immutable after Open
	log   *slog.Logger     // immutable after Open
	now   func() time.Time // immutable after Open
	loads atomic.Int64     // LoadSys calls made

	appendMu sync.Mutex // serializes Append across its saves; taken before mu
	unsure   *attempt   // guarded by appendMu: a shared store's Append in doubt (see attempt)

	mu       sync.Mutex // guards the fields below
	full     []chunk    // the chunks before the tail, in seq order; elements never change once here
	tail     chunk      // the last chunk; name "" when the log is empty
	tailData []byte     // the tail's bytes; the bytes below len(tailData) never change
	tailN    int        // events in the tail
	lastSeq  uint64     // seq of the last event, 0 when empty
	lastHash string     // line hash of the last event
	floor    time.Time  // no new event gets an earlier time (see Append)
	pending  []string   // chunk names a failed Append (or one before Open) left in the store
	cache    [2]cached  // the chunks loaded last, most recent first
	fix      repair     // what Open found damaged, for the next Append to record
	found    []Break    // everything Open found damaged (Damage)
	// records are the sizes of the log's records as the store holds
	// them, by name, and head is events.head's bytes (nil when there is
	// none): see records.go.
	records map[string]int64
	head    []byte
}

// chunk is one chunk as its name and the store's listing describe it.
type chunk struct {
	name string
	seq  uint64    // first event's seq
	time time.Time // first event's time
	off  int64     // offset of the chunk's first byte in the JSONL stream
	size int64     // bytes; for the tail, len(Log.tailData) is authoritative
}

type cached struct {
	name string
	data []byte
}

// lineState is what the next line must chain to.
type lineState struct {
	seq  uint64
	hash string
	time time.Time
}

// Open opens the log stored in sys. It loads the head record, lists the
// chunks and loads the last chunk (and, when the head does not vouch for that
// chunk, the last line of the one before it). An empty store gives an
// empty log. A nil logger discards.
//
// Open never writes. What it finds damaged at the end of the log — a torn
// or unreadable end of the last chunk, a last chunk that holds nothing
// intact, a head record that does not parse or does not match the log —
// is left out of the Log, logged, and reported by [Log.Damage]; the next
// Append records it before its own events (see the package doc, "Damage").
// Damage that intact events follow is left in place for [Verify] to find.
// Open fails only when the store fails.
func Open(ctx context.Context, sys Sys, log *slog.Logger) (*Log, error) {
	return OpenOptions(ctx, sys, Options{Logger: log})
}

// Options are the settings of [OpenOptions]. The zero value is the
// default: a logger that discards, and the wall clock.
type Options struct {
	Logger *slog.Logger
	// Now is the clock that times events appended without a Time (and
	// names their chunks); nil means time.Now.
	Now func() time.Time
}

// OpenOptions is [Open] with opts.
func OpenOptions(ctx context.Context, sys Sys, opts Options) (*Log, error) {
	log, now := opts.Logger, opts.Now
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	l := &Log{sys: sys, log: log, now: now}
	hr, err := loadHead(ctx, l, "open")
	if err != nil {
		return nil, err
	}
	if err := l.loadEnd(ctx, hr, "open"); err != nil {
		return nil, err
	}
	l.warnGaps()
	return l, nil
}

// loadEnd lists the chunks and finds the end of the log (see recover) into
// l, which nobody else uses yet: Open's Log, or a scratch Log that reload
// then installs. hr is the head record, loaded before the listing so that
// on a shared store the listing holds every chunk the head vouches for
// (chunks are only ever added, or grow); a listing newer than the head
// only adds events that chain. op names the caller in errors.
func (l *Log) loadEnd(ctx context.Context, hr headRecord, op string) error {
	l.records = make(map[string]int64)
	entries, err := l.sys.ListSys(ctx, chunkPrefix)
	if err != nil {
		return fmt.Errorf("eventlog: %s: list: %w", op, err)
	}
	for _, e := range entries {
		if isRecord(e.Key) {
			l.records[e.Key] = e.Info.Size
		}
	}
	chunks, ignored := index(entries)
	for _, ig := range ignored {
		if ig.why != whyEmpty {
			l.log.Warn("eventlog: ignoring record", "name", ig.name, "reason", ig.why)
		}
		// A stale chunk's time still bounds new times, so that a chunk
		// written later at the same seq sorts after it (see index).
		if ig.time.After(l.floor) {
			l.floor = ig.time
		}
	}
	for _, c := range chunks {
		if c.time.After(l.floor) {
			l.floor = c.time
		}
	}
	if hr.data != nil {
		l.records[headName], l.head = int64(len(hr.data)), hr.data
	}
	return l.recover(ctx, chunks, hr, op)
}

func quoteShort(b []byte) string {
	const max = 200
	if len(b) > max {
		return fmt.Sprintf("%q...", b[:max])
	}
	return fmt.Sprintf("%q", b)
}

// drop removes chunks that are not part of the log: with DeleteSys when sys
// has it, else by saving them empty (index ignores empty chunks). A failure
// is logged, not returned: index's rule that the later of two chunks at one
// seq wins, and Append's floor on times, keep the log whole without it (and
// a damaged chunk left behind is found, and recorded, again).
func (l *Log) drop(ctx context.Context, names []string) {
	var err error
	if d, ok := l.sys.(deleter); ok {
		if err = d.DeleteSys(ctx, names...); err == nil {
			l.noteRemoved(names)
		}
	} else {
		for _, n := range names {
			if err = l.sys.SaveSys(ctx, n, nil); err != nil {
				break
			}
			l.noteSaved(n, nil)
		}
	}
	if err != nil {
		l.log.Warn("eventlog: could not remove chunks that are not part of the log", "chunks", names, "err", err)
	}
}

const whyEmpty = "empty"

type ignoredChunk struct {
	name string
	time time.Time // from the name, when it parses
	why  string
}

// index turns the listing of events/ into the chunk list. Names that are not
// chunk names and empty records are ignored; of two chunks with the same
// first seq, the later name wins (a retried Append writes a chunk at the same
// seq with a time no earlier than the failed attempt's: see Log.floor).
func index(entries []backend.Entry) ([]chunk, []ignoredChunk) {
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	var chunks []chunk
	var ignored []ignoredChunk
	for _, e := range entries {
		seq, t, ok := parseChunkName(e.Key)
		switch {
		case !ok:
			ignored = append(ignored, ignoredChunk{name: e.Key, why: "not a chunk name"})
			continue
		case e.Info.Size == 0:
			ignored = append(ignored, ignoredChunk{name: e.Key, time: t, why: whyEmpty})
			continue
		}
		c := chunk{name: e.Key, seq: seq, time: t, size: e.Info.Size}
		if n := len(chunks); n > 0 && chunks[n-1].seq == seq {
			old := chunks[n-1]
			ignored = append(ignored, ignoredChunk{name: old.name, time: old.time, why: "superseded by " + e.Key})
			chunks[n-1] = c
			continue
		}
		chunks = append(chunks, c)
	}
	var off int64
	for i := range chunks {
		chunks[i].off = off
		off += chunks[i].size
	}
	return chunks, ignored
}

// Append adds evs to the log and returns them as stored: Seq and Prev
// filled, Time in UTC. A zero Time becomes now; a Time earlier than the
// previous event's (or than any time an earlier failed Append tried) becomes
// that time, so times never go backwards. Events go to the tail chunk while
// it has room, then to new chunks; each changed chunk is saved with one
// SaveSys, in seq order, and then the head record.
//
// The first Append after Open records the damage Open found (Log.Damage):
// it saves a copy of each damaged record under events.damaged/, writes one
// OpBreak event per damaged record before evs (which therefore get later
// seqs), and once those are durable removes the chunks taken out of the
// log. See the package doc, "Damage".
//
// If a save fails, Append returns the error and the Log is as it was before
// the call: the events were not appended, and the caller may retry. (The
// store may hold some of them, in chunks the retry overwrites or removes.)
// An event with an unknown Op (OpBreak included: only the log writes it) or
// an empty Key is refused before anything is saved.
//
// On a shared store (Sys has SwapSys, as a backend.SysSwapper does) Append
// saves nothing with SaveSys: the copies, the changed chunks and the head
// go in one SwapSys guarded by the head the Log knows, and the chunks to
// remove are deleted in it. When another writer moved the head, Append
// reloads the end of the log and numbers evs again after the other
// writer's events; after SwapTries lost races it fails with an error
// wrapping ErrContended, having appended nothing. When SwapSys fails, the
// events may have been appended after all: offered again (alone or
// followed by others), they are not appended twice. Events too many for
// one SwapSys are appended in several, in order, each a prefix of the
// rest. See the package doc, "Many writers".
func (l *Log) Append(ctx context.Context, evs []Event) ([]Event, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	for i := range evs {
		if !validOp(evs[i].Op) {
			return nil, fmt.Errorf("eventlog: append: event %d: unknown op %q", i, evs[i].Op)
		}
		if evs[i].Key == "" {
			return nil, fmt.Errorf("eventlog: append: event %d: empty key", i)
		}
	}
	return l.append(ctx, evs)
}

// append is Append of valid events; with none, it records only the damage
// Open found (RecordDamage), if any.
func (l *Log) append(ctx context.Context, evs []Event) ([]Event, error) {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()

	if sw, ok := l.sys.(swapper); ok {
		return l.appendSwap(ctx, sw, evs)
	}

	l.mu.Lock()
	tp := l.tipLocked()
	l.mu.Unlock()
	if len(evs) == 0 && len(tp.fix.breaks) == 0 {
		return nil, nil
	}
	fix := tp.fix
	oldTail := tp.cur.name
	b, err := l.build(tp, evs)
	if err != nil {
		return nil, err
	}
	finished, saves, cur, data, n := b.finished, b.saves, b.cur, b.data, b.n
	seq, prev, t0, hd, out := b.seq, b.prev, b.t0, b.hd, b.out

	// The copies first: no damaged byte leaves its place before it is
	// kept elsewhere.
	for _, s := range fix.copies {
		if err := l.sys.SaveSys(ctx, s.name, s.data); err != nil {
			return nil, fmt.Errorf("eventlog: append: save a copy of a damaged record: %s: %w", s.name, err)
		}
	}
	for k, s := range saves {
		if err := l.sys.SaveSys(ctx, s.name, s.data); err != nil {
			l.failed(t0, oldTail, saves[:k+1])
			return nil, fmt.Errorf("eventlog: append: save %s: %w", s.name, err)
		}
		l.noteSaved(s.name, s.data)
	}
	if err := l.sys.SaveSys(ctx, headName, hd); err != nil {
		l.failed(t0, oldTail, saves)
		return nil, fmt.Errorf("eventlog: append: save %s: %w", headName, err)
	}
	l.noteSaved(headName, hd)

	l.mu.Lock()
	l.full = append(l.full, finished...)
	l.tail, l.tailData, l.tailN = cur, data, n
	l.lastSeq, l.lastHash, l.floor = seq, prev, t0
	l.fix = repair{}
	var stale []string
	for _, name := range slices.Concat(l.pending, fix.remove) {
		kept := name == cur.name || slices.ContainsFunc(finished, func(c chunk) bool { return c.name == name })
		if !kept && !slices.Contains(stale, name) {
			stale = append(stale, name)
		}
	}
	l.pending = nil
	l.mu.Unlock()

	if len(stale) > 0 {
		l.drop(ctx, stale)
	}
	return out[len(fix.breaks):], nil
}

// tip is the end of the log an Append builds on, as the Log knows it.
type tip struct {
	cur   chunk  // the tail
	data  []byte // its bytes
	n     int    // its events
	seq   uint64 // the last event's seq and hash
	prev  string
	t0    time.Time // the floor on new times
	fix   repair    // damage to record first
	guard []byte    // events.head as the Log knows it (nil: none)
}

func (l *Log) tipLocked() tip {
	return tip{
		cur: l.tail, data: l.tailData, n: l.tailN,
		seq: l.lastSeq, prev: l.lastHash, t0: l.floor,
		fix: l.fix, guard: l.head,
	}
}

// batch is one attempt at an Append: the events numbered onto a tip, and
// the records that hold them.
type batch struct {
	finished []chunk // chunks the attempt filled, in seq order
	saves    []save  // changed chunks, in seq order
	cur      chunk   // the new tail
	data     []byte  // its bytes
	n        int     // its events
	seq      uint64  // the last event's seq and hash
	prev     string
	t0       time.Time // the last event's time
	hd       []byte    // the new events.head
	out      []Event   // the events as stored, tp.fix's breaks first
}

// build numbers the break events tp.fix plans and evs onto tp: seqs,
// Prevs, times no earlier than tp.t0, new chunks when the tail is full
// (or sealed). It writes nothing. It appends to tp.data in place, which is
// safe: readers only look below the length they were given, and only the
// caller (under appendMu) writes past it.
func (l *Log) build(tp tip, evs []Event) (batch, error) {
	fix := tp.fix
	cur, data, n := tp.cur, tp.data, tp.n
	seq, prev, t0 := tp.seq, tp.prev, tp.t0
	all := evs
	if len(fix.breaks) > 0 {
		all = append(slices.Clone(fix.breaks), evs...)
	}
	var (
		finished []chunk      // chunks this call filled, in seq order
		saves    []save       // changed chunks, in seq order
		dirty    = fix.cut    // cur has bytes the store does not
		sealed   = fix.sealed // cur must not grow
		now      = l.now().UTC()
		out      = make([]Event, len(all))
	)
	for i, ev := range all {
		seq++
		ev.Seq, ev.Prev = seq, prev
		t := ev.Time
		if t.IsZero() {
			t = now
		}
		t = t.UTC()
		if t.Before(t0) {
			t = t0
		}
		ev.Time, t0 = t, t
		line, h, err := encodeLine(&ev)
		if err != nil {
			return batch{}, fmt.Errorf("eventlog: append: event %d: %w", i-len(fix.breaks), err)
		}
		if cur.name == "" || n == ChunkEvents || sealed {
			if cur.name != "" {
				cur.size = int64(len(data))
				finished = append(finished, cur)
				if dirty {
					saves = append(saves, save{cur.name, data})
				}
			}
			cur = chunk{name: chunkName(seq, t), seq: seq, time: t, off: cur.off + int64(len(data))}
			data = make([]byte, 0, min(len(all)-i, ChunkEvents)*(len(line)+1))
			n, sealed = 0, false
		}
		data = append(data, line...)
		data = append(data, '\n')
		n++
		dirty = true
		prev = h
		out[i] = ev
	}
	cur.size = int64(len(data))
	saves = append(saves, save{cur.name, data})
	hd, _ := json.Marshal(head{Seq: seq, Hash: prev}) // cannot fail: plain fields
	return batch{
		finished: finished, saves: saves, cur: cur, data: data, n: n,
		seq: seq, prev: prev, t0: t0, hd: hd, out: out,
	}, nil
}

type save struct {
	name string
	data []byte
}

// failed records what a failed Append may have left in the store: the new
// chunks it tried to save (removed after the next successful Append) and its
// last time (later events are not earlier, so a chunk saved later at the same
// seq gets a name that sorts after the leftover, or the same name).
func (l *Log) failed(t time.Time, oldTail string, tried []save) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.After(l.floor) {
		l.floor = t
	}
	for _, s := range tried {
		if s.name != oldTail {
			l.pending = append(l.pending, s.name)
		}
	}
}
