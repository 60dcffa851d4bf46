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
	now   func() time.Time // immutable after Open (tests set it before use)
	loads atomic.Int64     // LoadSys calls made

	appendMu sync.Mutex // serializes Append across its saves; taken before mu

	mu       sync.Mutex // guards the fields below
	full     []chunk    // the chunks before the tail, in seq order; elements never change once here
	tail     chunk      // the last chunk; name "" when the log is empty
	tailData []byte     // the tail's bytes; the bytes below len(tailData) never change
	tailN    int        // events in the tail
	lastSeq  uint64     // seq of the last event, 0 when empty
	lastHash string     // line hash of the last event
	floor    time.Time  // no new event gets an earlier time (see Append)
	pending  []string   // chunk names a failed Append may have left in the store
	cache    [2]cached  // the chunks loaded last, most recent first
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

// Open opens the log stored in sys. It lists the chunks and loads the last
// one (and, when the head record does not vouch for that chunk, the one
// before it). A torn or corrupt end of the last chunk — a last line with no
// newline, or one that does not parse or does not chain to the line before it
// — is cut at the last whole event, logged as a warning, and the repaired
// chunk saved back; lines the head record vouches for are never cut. An
// empty store gives an empty log. A nil logger discards.
func Open(ctx context.Context, sys Sys, log *slog.Logger) (*Log, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Log{sys: sys, log: log, now: time.Now}
	entries, err := sys.ListSys(ctx, chunkPrefix)
	if err != nil {
		return nil, fmt.Errorf("eventlog: open: list: %w", err)
	}
	chunks, ignored := index(entries)
	for _, ig := range ignored {
		if ig.why != whyEmpty {
			log.Warn("eventlog: ignoring record", "name", ig.name, "reason", ig.why)
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
	hd, err := loadHead(ctx, l)
	if err != nil {
		return nil, err
	}
	if err := l.recover(ctx, chunks, hd); err != nil {
		return nil, err
	}
	switch {
	case hd.Seq > l.lastSeq:
		log.Warn("eventlog: the head record is past the end of the log: events were lost or removed at the end (run verify)",
			"head", hd.Seq, "last", l.lastSeq)
	case hd.Seq == l.lastSeq && hd.Seq > 0 && hd.Hash != l.lastHash:
		log.Warn("eventlog: the last event does not match the head record: it was edited (run verify)", "seq", hd.Seq)
	}
	return l, nil
}

// loadHead reads events.head; a missing or unreadable head is the zero head.
func loadHead(ctx context.Context, l *Log) (head, error) {
	data, err := l.load(ctx, headName)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return head{}, nil
	}
	if err != nil {
		return head{}, fmt.Errorf("eventlog: open: load %s: %w", headName, err)
	}
	var hd head
	if err := json.Unmarshal(data, &hd); err != nil {
		l.log.Warn("eventlog: the head record does not parse; ignoring it", "err", err)
		return head{}, nil
	}
	return hd, nil
}

// recover makes the last chunk that chains the tail, repairing its end.
func (l *Log) recover(ctx context.Context, chunks []chunk, hd head) error {
	var data []byte // the last chunk's bytes, when already loaded
	for len(chunks) > 0 {
		i := len(chunks) - 1
		c := chunks[i]
		if data == nil {
			var err error
			if data, err = l.load(ctx, c.name); err != nil {
				return fmt.Errorf("eventlog: open: load %s: %w", c.name, err)
			}
		}
		var prevData []byte
		prev := func() (lineState, bool, error) {
			if i == 0 {
				return lineState{}, c.seq == 1, nil
			}
			var err error
			if prevData, err = l.load(ctx, chunks[i-1].name); err != nil {
				return lineState{}, false, fmt.Errorf("eventlog: open: load %s: %w", chunks[i-1].name, err)
			}
			st, ok := lastLine(prevData)
			return st, ok, nil
		}
		keep, end, st, err := repair(c, data, hd, prev)
		if err != nil {
			return err
		}
		if keep == 0 {
			// Nothing in the chunk chains to the log before it: the
			// leftover of an Append that failed, or a chunk whose first
			// line is torn. Drop it and look at the one before.
			l.log.Warn("eventlog: dropping a chunk that does not continue the log", "chunk", c.name)
			l.drop(ctx, []string{c.name})
			chunks = chunks[:i]
			data = prevData
			continue
		}
		if end < len(data) {
			l.log.Warn("eventlog: cutting a torn or corrupt end of the log",
				"chunk", c.name, "last_seq", st.seq, "cut_bytes", len(data)-end,
				"cut", quoteShort(data[end:]))
			if err := l.sys.SaveSys(ctx, c.name, data[:end]); err != nil {
				return fmt.Errorf("eventlog: open: save repaired %s: %w", c.name, err)
			}
		}
		c.size = int64(end)
		l.full = chunks[:i:i]
		l.tail = c
		l.tailData = data[:end]
		l.tailN = keep
		l.lastSeq, l.lastHash = st.seq, st.hash
		if st.time.After(l.floor) {
			l.floor = st.time
		}
		return nil
	}
	return nil
}

// repair decides how much of the last chunk c to keep: keep whole lines,
// ending at byte end, the last of which is st. Lines up to the one the head
// vouches for are kept as they are (a break among them is for Verify to
// report, not for Open to erase); after it, each line must parse and chain to
// the one before. The first line chains to prev, which repair calls only when
// the head vouches for no line of c.
func repair(c chunk, data []byte, hd head, prev func() (lineState, bool, error)) (keep, end int, st lineState, err error) {
	lines, _ := splitLines(data)
	evs := make([]Event, len(lines))
	parsed := make([]bool, len(lines))
	hashes := make([]string, len(lines))
	vouched := -1
	for j, ln := range lines {
		hashes[j] = lineHash(ln)
		ev, err := decodeLine(ln)
		if err != nil {
			continue
		}
		evs[j], parsed[j] = ev, true
		if vouched < 0 && hd.Seq > 0 && ev.Seq == hd.Seq && hashes[j] == hd.Hash {
			vouched = j
		}
	}
	// known: st is what line 0 must chain to. Not needed when the head
	// vouches for a line; unknown when the previous chunk's last line does
	// not parse, or the first chunk does not start the log.
	known := false
	if vouched < 0 {
		if st, known, err = prev(); err != nil {
			return 0, 0, lineState{}, err
		}
	}
	for j := range lines {
		ok := parsed[j]
		if ok && j == 0 {
			ok = evs[j].Seq == c.seq && evs[j].Time.Equal(c.time)
		}
		if ok && (known || j > 0) {
			ok = evs[j].Seq == st.seq+1 && evs[j].Prev == st.hash && !evs[j].Time.Before(st.time)
		}
		if !ok && j > vouched {
			break
		}
		keep = j + 1
		end += len(lines[j]) + 1
		if parsed[j] {
			st = lineState{seq: evs[j].Seq, hash: hashes[j], time: evs[j].Time}
		}
	}
	return keep, end, st, nil
}

// lastLine returns the state of a chunk's last whole line.
func lastLine(data []byte) (lineState, bool) {
	lines, _ := splitLines(data)
	if len(lines) == 0 {
		return lineState{}, false
	}
	ln := lines[len(lines)-1]
	ev, err := decodeLine(ln)
	if err != nil {
		return lineState{}, false
	}
	return lineState{seq: ev.Seq, hash: lineHash(ln), time: ev.Time}, true
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
// seq wins, and Append's floor on times, keep the log whole without it.
func (l *Log) drop(ctx context.Context, names []string) {
	var err error
	if d, ok := l.sys.(deleter); ok {
		err = d.DeleteSys(ctx, names...)
	} else {
		for _, n := range names {
			if err = l.sys.SaveSys(ctx, n, nil); err != nil {
				break
			}
		}
	}
	if err != nil {
		l.log.Warn("eventlog: could not remove chunks a failed append left behind", "chunks", names, "err", err)
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
// If a save fails, Append returns the error and the Log is as it was before
// the call: the events were not appended, and the caller may retry. (The
// store may hold some of them, in chunks the retry overwrites or removes.)
// An event with an unknown Op or an empty Key is refused before anything is
// saved.
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
	l.appendMu.Lock()
	defer l.appendMu.Unlock()

	l.mu.Lock()
	cur, data, n := l.tail, l.tailData, l.tailN
	seq, prev, t0 := l.lastSeq, l.lastHash, l.floor
	l.mu.Unlock()
	oldTail := cur.name

	var (
		finished []chunk // chunks this call filled, in seq order
		saves    []save  // changed chunks, in seq order
		dirty    bool    // cur has new lines
		now      = l.now().UTC()
		out      = make([]Event, len(evs))
	)
	for i, ev := range evs {
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
			return nil, fmt.Errorf("eventlog: append: event %d: %w", i, err)
		}
		if cur.name == "" || n == ChunkEvents {
			if cur.name != "" {
				cur.size = int64(len(data))
				finished = append(finished, cur)
				if dirty {
					saves = append(saves, save{cur.name, data})
				}
			}
			cur = chunk{name: chunkName(seq, t), seq: seq, time: t, off: cur.off + int64(len(data))}
			data = make([]byte, 0, min(len(evs)-i, ChunkEvents)*(len(line)+1))
			n = 0
		}
		// Appending in place is safe: readers only look below the
		// length they were given, and only this call (under appendMu)
		// writes past it.
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
	for k, s := range saves {
		if err := l.sys.SaveSys(ctx, s.name, s.data); err != nil {
			l.failed(t0, oldTail, saves[:k+1])
			return nil, fmt.Errorf("eventlog: append: save %s: %w", s.name, err)
		}
	}
	if err := l.sys.SaveSys(ctx, headName, hd); err != nil {
		l.failed(t0, oldTail, saves)
		return nil, fmt.Errorf("eventlog: append: save %s: %w", headName, err)
	}

	l.mu.Lock()
	l.full = append(l.full, finished...)
	l.tail, l.tailData, l.tailN = cur, data, n
	l.lastSeq, l.lastHash, l.floor = seq, prev, t0
	var stale []string
	for _, name := range l.pending {
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
	return out, nil
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
