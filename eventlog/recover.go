package eventlog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/memfs/memfs/backend"
)

// repair is what Open found damaged, for the next Append to carry out
// before its own events: save the copies, write the break events (with the
// cut tail, or after a sealed one), and once they are durable remove the
// chunks taken out of the log. A failed Append leaves it for the retry.
type repair struct {
	copies []save   // whole damaged records as found, into events.damaged/
	breaks []Event  // OpBreak events, without seq, time or prev
	remove []string // chunks taken out of the log
	cut    bool     // the tail in memory is the stored tail cut short: save it
	sealed bool     // the tail holds damage left in place: never write it again
}

// headRecord is events.head as Open found it.
type headRecord struct {
	head
	data []byte // as stored; nil when there is none
	bad  bool   // stored, but does not parse or names no event
}

// loadHead reads events.head.
func loadHead(ctx context.Context, l *Log, op string) (headRecord, error) {
	data, err := l.load(ctx, headName)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return headRecord{}, nil
	}
	if errors.Is(err, backend.ErrCorrupt) {
		// A head the store cannot decode is a head that does not
		// parse: the log continues past it, with the break recorded
		// and its bytes (when the store gives them) copied aside.
		var ce *backend.CorruptError
		if errors.As(err, &ce) {
			data = ce.Raw
		}
		return headRecord{data: data, bad: true}, nil
	}
	if err != nil {
		return headRecord{}, fmt.Errorf("eventlog: %s: load %s: %w", op, headName, err)
	}
	var hd head
	if err := json.Unmarshal(data, &hd); err != nil || hd.Seq == 0 {
		return headRecord{data: data, bad: true}, nil
	}
	return headRecord{head: hd, data: data}, nil
}

// Damage returns what Open (or a later reload, on a shared store) found
// damaged, one Break per record, as the break events record it. The first successful Append after Open writes
// them (and the copies they name); until then the store is as Open found
// it. Damage that Open did not look at (inside earlier chunks, a missing
// chunk) is not here: Verify finds it.
func (l *Log) Damage() []Break {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.found)
}

// recover finds the end of the log and sets the Log's tail to it: the last
// chunk that holds an intact event, cut after its last intact line. A
// failed Append's leftover chunk is set to be removed; every other chunk
// or byte left out, and a head record that disagrees with the log, is
// planned as a break (see repair).
func (l *Log) recover(ctx context.Context, chunks []chunk, hr headRecord, op string) error {
	var (
		data  []byte  // the last chunk's bytes, when already loaded
		moved []noted // whole chunks left out, the last first
		sc    scan    // of the chunk that became the tail
		fix   repair  // what the next Append does
	)
	for len(chunks) > 0 {
		i := len(chunks) - 1
		c := chunks[i]
		if data == nil {
			var err error
			if data, err = l.load(ctx, c.name); err != nil {
				return fmt.Errorf("eventlog: %s: load %s: %w", op, c.name, err)
			}
		}
		var prevData []byte
		prev := func() (lineState, bool, error) {
			if i == 0 {
				return lineState{}, c.seq == 1, nil
			}
			var err error
			if prevData, err = l.load(ctx, chunks[i-1].name); err != nil {
				return lineState{}, false, fmt.Errorf("eventlog: %s: load %s: %w", op, chunks[i-1].name, err)
			}
			st, ok := lastLine(prevData)
			return st, ok, nil
		}
		var err error
		if sc, err = scanTail(c, data, hr.head, prev); err != nil {
			return err
		}
		if sc.leftover {
			l.log.Warn("eventlog: a chunk a failed append left behind will be removed at the next append", "chunk", c.name)
			l.pending = append(l.pending, c.name)
		} else if sc.keep == 0 {
			moved = append(moved, noted{Break{
				Record: c.name, Reason: sc.endWhy, Len: int64(len(data)), Moved: true,
				SavedTo: damagedName(c.name, data), First: c.seq,
			}, data, false})
			fix.remove = append(fix.remove, c.name)
		} else {
			l.full = chunks[:i:i]
			c.size = int64(sc.end)
			l.tail, l.tailData, l.tailN = c, data[:sc.end:sc.end], sc.keep
			l.lastSeq, l.lastHash = sc.st.seq, sc.st.hash
			if sc.st.time.After(l.floor) {
				l.floor = sc.st.time
			}
			break
		}
		chunks, data = chunks[:i], prevData
	}

	// The breaks in log order: the end of the tail, the chunks after it,
	// then the head.
	var breaks []noted
	cut := sc.keep > 0 && sc.end < len(data)
	if cut {
		breaks = append(breaks, noted{Break{
			Record: l.tail.name, Reason: sc.endWhy, Off: int64(sc.end), Len: int64(len(data) - sc.end), Moved: true,
			SavedTo: damagedName(l.tail.name, data), First: l.lastSeq + 1,
		}, data, sc.tornOnly})
	}
	slices.Reverse(moved)
	breaks = append(breaks, moved...)
	if b, ok := l.checkHead(hr, sc, cut || len(moved) > 0); ok {
		breaks = append(breaks, noted{b, hr.data, false})
	}
	for _, n := range breaks {
		l.note(ctx, n)
		l.found = append(l.found, n.b)
		fix.breaks = append(fix.breaks, n.event())
		if n.b.SavedTo != "" {
			fix.copies = append(fix.copies, save{n.b.SavedTo, bytes.Clone(n.data)})
		}
	}
	fix.cut = cut
	if sc.keep > 0 && sc.inner {
		// Intact events follow the damage: it stays where it is, and the
		// tail is never written again, so nothing can hide it from Verify.
		// A tail whose end is cut is rewritten anyway (after its copy is
		// saved), and then with the break events in the same save, so
		// that no crash can leave the cut without its record.
		fix.sealed = !cut
		if !sc.innerVouched {
			l.log.Warn("eventlog: the last chunk holds damaged lines that intact events follow; left in place, the next event starts a new chunk (run verify)",
				"chunk", l.tail.name, "line", sc.innerWhy)
		}
	}
	l.fix = fix
	return nil
}

// checkHead returns the break for a head record that disagrees with the
// end of the log recover found: the next Append replaces the head, so what
// it said must be kept. lost says recover left damaged bytes out at the
// end.
func (l *Log) checkHead(hr headRecord, sc scan, lost bool) (Break, bool) {
	hd := hr.head
	b := Break{Record: headName, Len: int64(len(hr.data)), Moved: true}
	if len(hr.data) > 0 {
		b.SavedTo = damagedName(headName, hr.data)
	}
	switch {
	case hr.bad:
		b.Reason = "the head record does not parse: nothing vouches for the end of the log"
	case hd.Seq == 0:
		return Break{}, false // no head: nothing said, nothing to keep (Verify warns)
	case hd.Seq > l.lastSeq && lost:
		b.Reason = fmt.Sprintf("the head record is at event %d, past event %d, the last intact one", hd.Seq, l.lastSeq)
		b.First, b.Last = l.lastSeq+1, hd.Seq
	case hd.Seq > l.lastSeq:
		b.Reason = fmt.Sprintf("the head record is at event %d but the log ends at event %d: events were removed at the end", hd.Seq, l.lastSeq)
		b.First, b.Last = l.lastSeq+1, hd.Seq
	case sc.headMatch || sc.prevKnown && hd.Seq == sc.prevSt.seq && hd.Hash == sc.prevSt.hash:
		return Break{}, false // vouched; events after it are a crash between chunk and head
	case hd.Seq >= l.tail.seq || sc.prevKnown && hd.Seq == sc.prevSt.seq:
		b.Reason = fmt.Sprintf("event %d does not match the head record: the event or the head was altered", hd.Seq)
		b.First, b.Last = hd.Seq, hd.Seq
	default:
		return Break{}, false // the head's event is in an earlier chunk: Verify checks it
	}
	return b, true
}

// noted is a damaged record Open found: its break and its bytes as found.
type noted struct {
	b    Break
	data []byte
	torn bool // a torn last line, the one ordinary case
}

// event is the OpBreak event recording n.
func (n noted) event() Event {
	b := n.b
	return Event{Op: OpBreak, Key: b.Record, Size: int64(len(n.data)), SHA256: recordSum(n.data), Break: &b}
}

// note logs n.
func (l *Log) note(ctx context.Context, n noted) {
	level, msg := slog.LevelError, "eventlog: damaged record, left out of the log: the next append (a mount's next flush) copies it to events.damaged/ and records the break"
	if n.torn {
		// The one ordinary case: a write that did not complete on a store
		// without atomic replacement (or a hand edit).
		level, msg = slog.LevelWarn, "eventlog: the last chunk ends in a torn line, left out of the log: the next append copies it to events.damaged/ and records the break"
	}
	b := n.b
	l.log.Log(ctx, level, msg, "record", b.Record, "reason", b.Reason,
		"off", b.Off, "bytes", b.Len, "saved_to", b.SavedTo, "damaged", short(n.data[b.Off:b.Off+b.Len]))
}

// short is the start of b for a log line (which quotes it).
func short(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

// warnGaps logs the gaps the chunk names show (events missing before a
// chunk): Verify reports them; nothing can be done here.
func (l *Log) warnGaps() {
	chunks := append(slices.Clone(l.full), l.tail)
	if l.tail.name == "" {
		chunks = chunks[:len(chunks)-1]
	}
	next := uint64(1)
	for _, c := range chunks {
		if c.seq > next {
			l.log.Warn("eventlog: events are missing before a chunk (removed events or chunk; run verify)", "chunk", c.name, "from", next, "to", c.seq-1)
		}
		next = c.seq + ChunkEvents
	}
}

// scan is what Open found in the last chunk.
type scan struct {
	keep, end    int       // whole lines kept in the log, and their bytes
	st           lineState // the last kept line
	endWhy       string    // why the bytes after end are damaged
	tornOnly     bool      // they are only a last line without its newline
	inner        bool      // a kept line does not parse or chain: damage left in place
	innerWhy     string    // the first such line
	innerVouched bool      // every such line is at or before the one the head vouches for
	leftover     bool      // the chunk is a failed Append's leftover
	headMatch    bool      // a kept line is the head's event, with the head's hash
	prevSt       lineState // the last line of the chunk before, when loaded
	prevKnown    bool
}

// scanTail decides what of the last chunk c stays in the log. Each line
// must parse and chain to the line before it (the first one to the chunk
// before, which scanTail loads through prev only when the head vouches for
// no line of c, and must match c's name). The log keeps every line up to
// the last one that does, or that the head vouches for; lines among them
// that do not are damage left in place. What follows is the damaged end.
//
// A chunk whose lines all chain but whose first line skips past the end of
// the chunk before, which the head vouches for, is the leftover of a
// failed Append whose retry wrote fewer events: not damage.
func scanTail(c chunk, data []byte, hd head, prev func() (lineState, bool, error)) (scan, error) {
	var sc scan
	t := parseTail(c, data, hd)
	if t.vouched < 0 {
		var err error
		if sc.prevSt, sc.prevKnown, err = prev(); err != nil {
			return scan{}, err
		}
	}
	for j := range t.lines {
		t.why[j] = lineWhy(c, j, t.evs, t.parsed, t.hashes, sc.prevSt, sc.prevKnown)
	}
	if t.leftover(sc, hd) {
		sc.leftover = true
		return sc, nil
	}
	last := t.lastKept()
	if last < 0 {
		sc.endWhy = t.noneKept()
		return sc, nil
	}
	t.keep(&sc, last)
	t.inner(&sc)
	sc.headMatch = t.vouched >= 0 && t.vouched <= last
	return sc, nil
}

// tailLines are the lines of the last chunk as scanTail judges them.
type tailLines struct {
	c       chunk
	lines   [][]byte
	torn    int // length of a last line without its newline
	evs     []Event
	parsed  []bool
	hashes  []string
	why     []string // what is wrong with each line, "" if nothing (see lineWhy)
	vouched int      // the line the head vouches for, -1 for none
}

// parseTail parses the lines of chunk c, whose bytes are data, and finds
// the one that the head hd vouches for.
func parseTail(c chunk, data []byte, hd head) *tailLines {
	lines, torn := splitLines(data)
	t := &tailLines{
		c: c, lines: lines, torn: torn,
		evs:     make([]Event, len(lines)),
		parsed:  make([]bool, len(lines)),
		hashes:  make([]string, len(lines)),
		why:     make([]string, len(lines)),
		vouched: -1,
	}
	for j, ln := range lines {
		t.hashes[j] = lineHash(ln)
		ev, err := decodeLine(ln)
		if err != nil {
			continue
		}
		t.evs[j], t.parsed[j] = ev, true
		if t.vouched < 0 && hd.Seq > 0 && ev.Seq == hd.Seq && t.hashes[j] == hd.Hash {
			t.vouched = j
		}
	}
	return t
}

// seqAt is the seq line j holds, or would.
func (t *tailLines) seqAt(j int) uint64 {
	for k := j; k >= 0; k-- {
		if t.parsed[k] {
			return t.evs[k].Seq + uint64(j-k)
		}
	}
	return t.c.seq + uint64(j)
}

// okAfter reports whether the lines from j on are all sound.
func (t *tailLines) okAfter(j int) bool {
	return !slices.ContainsFunc(t.why[j:], func(w string) bool { return w != "" })
}

// leftover reports whether the chunk is a failed Append's leftover: its
// lines all chain, but its first line skips past the end of the chunk
// before, which the head vouches for.
func (t *tailLines) leftover(sc scan, hd head) bool {
	if !sc.prevKnown || t.torn != 0 || len(t.lines) == 0 || !t.parsed[0] {
		return false
	}
	first := &t.evs[0]
	return first.Seq == t.c.seq && first.Time.Equal(t.c.time) && first.Seq > sc.prevSt.seq+1 &&
		hd.Seq == sc.prevSt.seq && hd.Hash == sc.prevSt.hash && t.okAfter(1)
}

// lastKept is the last line the log keeps: the last sound one, or the
// one the head vouches for; -1 for none.
func (t *tailLines) lastKept() int {
	last := -1
	for j := range t.lines {
		if t.why[j] == "" || j == t.vouched {
			last = j
		}
	}
	return last
}

// noneKept says why no line of the chunk continues the log.
func (t *tailLines) noneKept() string {
	if len(t.lines) == 0 {
		return "the chunk holds no whole line (its only line has no newline)"
	}
	return fmt.Sprintf("no line continues the log; line 1 (event %d) %s", t.seqAt(0), t.why[0])
}

// keep records in sc the lines up to last as kept, and why what follows
// them is the damaged end.
func (t *tailLines) keep(sc *scan, last int) {
	sc.keep = last + 1
	for _, ln := range t.lines[:sc.keep] {
		sc.end += len(ln) + 1
	}
	sc.st = lineState{seq: t.evs[last].Seq, hash: t.hashes[last], time: t.evs[last].Time}
	switch {
	case last+1 < len(t.lines):
		sc.endWhy = fmt.Sprintf("line %d (event %d) %s", last+2, t.seqAt(last+1), t.why[last+1])
		if t.torn > 0 {
			sc.endWhy += ", and the last line has no newline"
		}
	case t.torn > 0:
		sc.endWhy = "the last line has no newline (a write that did not complete, or damage)"
		sc.tornOnly = true
	}
}

// inner records in sc the damage among the kept lines, left in place.
func (t *tailLines) inner(sc *scan) {
	sc.innerVouched = true
	for j := range sc.keep {
		if t.why[j] == "" {
			continue
		}
		if !sc.inner {
			sc.inner, sc.innerWhy = true, fmt.Sprintf("line %d (event %d) %s", j+1, t.seqAt(j), t.why[j])
		}
		if j > t.vouched {
			sc.innerVouched = false
		}
	}
}

// lineWhy says what is wrong with line j of chunk c, "" if nothing: it
// must parse and chain to the line before it, or for the first line match
// the chunk's name and chain to prevSt when known.
func lineWhy(c chunk, j int, evs []Event, parsed []bool, hashes []string, prevSt lineState, known bool) string {
	if !parsed[j] {
		return "does not parse"
	}
	ev := &evs[j]
	st := prevSt
	switch {
	case j == 0 && (ev.Seq != c.seq || !ev.Time.Equal(c.time)):
		return "does not match the chunk's name"
	case j == 0 && !known:
		return ""
	case j > 0 && !parsed[j-1]:
		return "follows a line that does not parse"
	case j > 0:
		st = lineState{seq: evs[j-1].Seq, hash: hashes[j-1], time: evs[j-1].Time}
	}
	switch {
	case ev.Seq != st.seq+1:
		return fmt.Sprintf("holds event %d after event %d", ev.Seq, st.seq)
	case ev.Prev != st.hash:
		return fmt.Sprintf("does not chain to event %d", st.seq)
	case ev.Time.Before(st.time):
		return fmt.Sprintf("has a time before event %d's", st.seq)
	}
	return ""
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

// recordSum is the hex SHA-256 of a record as found.
func recordSum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
