package eventlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/memfs/memfs/backend"
)

// Report is the result of Verify.
type Report struct {
	Events int  // events read (lines, parsed or not)
	Chunks int  // chunks read
	OK     bool // no problem found
	// Problem describes the first break found, "" when OK.
	Problem string
	// Seq is the first event the problem puts in doubt: for a Prev that
	// does not match, the edited event (the one before, unless the next
	// event's Prev shows the breaking event itself was changed); for a gap,
	// the first missing event.
	Seq uint64
	// Damage lists the damage on record, one sentence each: every
	// OpBreak event in the log (what Open found damaged, where its bytes
	// are kept, where the log resumed), then every copy of a damaged
	// record under events.damaged/. Damage is never cleared: once the log
	// was damaged, OK stays false (Problem names the first break if
	// nothing else is wrong).
	Damage []string
	// Warnings are findings that do not break the log: a head record
	// behind the last event (the process stopped between saving a chunk
	// and the head; the events after the head are not vouched for), no
	// head record, records a failed Append left behind.
	Warnings []string
}

// Verify reads the whole log in sys and checks it: every line parses, seqs
// run from 1 without gaps across chunks, each chunk's name matches its first
// event, each Prev is the hash of the line before, times do not go
// backwards, no chunk holds more than ChunkEvents events, and the head record
// matches the last event. It reports the first break and keeps reading to
// count the rest. A log that records damage (OpBreak events, copies under
// events.damaged/) is never OK, even when every link holds: events were
// lost or moved aside. It reads one chunk at a time and changes nothing; it
// works on a store no Log has open, and does not set aside what Open would.
//
// The error is for store failures only; a broken log is a Report with OK
// false.
func Verify(ctx context.Context, sys Sys) (Report, error) {
	entries, err := sys.ListSys(ctx, chunkPrefix)
	if err != nil {
		return Report{}, fmt.Errorf("eventlog: verify: list: %w", err)
	}
	var v verifier
	if err := v.loadHead(ctx, sys); err != nil {
		return Report{}, err
	}
	chunks, ignored := index(entries)
	for _, ig := range ignored {
		v.r.Warnings = append(v.r.Warnings, fmt.Sprintf("%s: ignored (%s)", ig.name, ig.why))
	}
	for _, c := range chunks {
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
		data, err := sys.LoadSys(ctx, c.name)
		if err != nil {
			return Report{}, fmt.Errorf("eventlog: verify: load %s: %w", c.name, err)
		}
		v.chunk(c, data)
	}
	v.end()
	if err := v.kept(ctx, sys); err != nil {
		return Report{}, err
	}
	v.r.OK = v.r.Problem == ""
	return v.r, nil
}

// verifier is Verify's state, from line to line.
type verifier struct {
	r        Report
	hd       head
	hasHead  bool
	st       lineState // the last line read
	headHash string    // hash of the line with the head's seq
	headSeen bool
	// A Prev that does not match the line before it leaves a doubt the
	// next line settles: if that line's Prev is the hash of the suspect
	// line, the suspect is intact and the line before it was edited; if
	// not, the suspect itself was (its Prev, say).
	suspect     uint64 // seq of the line whose Prev broke, 0 for none
	suspectHash string
}

// fail records the first problem; seq is the event it puts in doubt.
func (v *verifier) fail(seq uint64, format string, args ...any) {
	if v.r.Problem == "" {
		v.r.Problem, v.r.Seq = fmt.Sprintf(format, args...), seq
	}
}

// loadHead reads the head record; one that is damaged or does not parse
// is a problem, and the log is checked as if it had none.
func (v *verifier) loadHead(ctx context.Context, sys Sys) error {
	switch data, err := sys.LoadSys(ctx, headName); {
	case errors.Is(err, backend.ErrKeyNotFound):
	case errors.Is(err, backend.ErrCorrupt):
		v.fail(0, "the head record %s is damaged in the store: %v", headName, err)
	case err != nil:
		return fmt.Errorf("eventlog: verify: load %s: %w", headName, err)
	default:
		if err := json.Unmarshal(data, &v.hd); err != nil || v.hd.Seq == 0 {
			v.fail(0, "the head record %s does not parse: %s", headName, quoteShort(data))
			v.hd = head{}
			return nil
		}
		v.hasHead = true
	}
	return nil
}

// settle decides the suspect, if any, by the Prev of the line after it
// (known false: that line does not parse, or there is none).
func (v *verifier) settle(nextPrev string, known bool) {
	if v.suspect == 0 {
		return
	}
	edited := v.suspect - 1
	if known && nextPrev != v.suspectHash {
		edited = v.suspect
	}
	v.fail(edited, "event %d: prev hash does not match event %d (event %d edited or replaced)", v.suspect, v.suspect-1, edited)
	v.suspect = 0
}

// chunk checks the lines of chunk c, whose bytes are data.
func (v *verifier) chunk(c chunk, data []byte) {
	v.r.Chunks++
	lines, torn := splitLines(data)
	for j, ln := range lines {
		v.line(c, j, ln)
	}
	if len(lines) > ChunkEvents {
		v.fail(c.seq, "chunk %s holds %d events, more than %d", c.name, len(lines), ChunkEvents)
	}
	if torn > 0 {
		v.fail(v.st.seq+1, "chunk %s: the last line has no newline (a torn write of event %d)", c.name, v.st.seq+1)
	}
}

// line checks line j of chunk c.
func (v *verifier) line(c chunk, j int, ln []byte) {
	v.r.Events++
	expect := v.st.seq + 1
	h := lineHash(ln)
	ev, err := decodeLine(ln)
	if err != nil {
		v.settle("", false)
		v.fail(expect, "event %d (%s line %d) does not parse: %v", expect, c.name, j+1, err)
		v.st = lineState{seq: expect, hash: h, time: v.st.time}
		return
	}
	v.settle(ev.Prev, true)
	v.link(c, j, &ev, h)
	if ev.Op == OpBreak {
		d := describeBreak(&ev)
		v.r.Damage = append(v.r.Damage, d)
		at := ev.Seq
		if ev.Break != nil && ev.Break.First > 0 {
			at = ev.Break.First
		}
		v.fail(at, "%s", d)
	}
	if v.hasHead && ev.Seq == v.hd.Seq {
		v.headHash, v.headSeen = h, true
	}
	v.st = lineState{seq: ev.Seq, hash: h, time: ev.Time}
}

// link checks that ev, line j of chunk c whose hash is h, follows the line
// before: the next seq, its hash as Prev, a time not before, and for a
// first line the chunk's name.
func (v *verifier) link(c chunk, j int, ev *Event, h string) {
	expect := v.st.seq + 1
	switch {
	case ev.Seq == expect+1:
		v.fail(expect, "event %d is missing (removed)", expect)
	case ev.Seq > expect:
		v.fail(expect, "events %d to %d are missing (removed events or chunk)", expect, ev.Seq-1)
	case ev.Seq < expect:
		v.fail(ev.Seq, "event %d appears again after event %d (duplicated or reordered)", ev.Seq, v.st.seq)
	case ev.Prev != v.st.hash && expect == 1:
		v.fail(1, "event 1: prev is %q, want empty", ev.Prev)
	case ev.Prev != v.st.hash:
		v.suspect, v.suspectHash = ev.Seq, h
	case j == 0 && (ev.Seq != c.seq || !ev.Time.Equal(c.time)):
		v.fail(ev.Seq, "chunk %s: name does not match its first event (seq %d, time %s)", c.name, ev.Seq, ev.Time.Format(nameLayout))
	case ev.Time.Before(v.st.time):
		v.fail(ev.Seq, "event %d: time %s is before event %d's %s", ev.Seq, ev.Time.Format(nameLayout), v.st.seq, v.st.time.Format(nameLayout))
	}
}

// end settles the last suspect and checks the head against the end of
// the log.
func (v *verifier) end() {
	hd, st := v.hd, v.st
	v.settle(hd.Hash, v.hasHead && hd.Seq == v.suspect)
	switch {
	case !v.hasHead:
		if v.r.Events > 0 && v.r.Problem == "" {
			v.r.Warnings = append(v.r.Warnings, fmt.Sprintf("no head record: removal of events at the end would go unnoticed (%d events)", v.r.Events))
		}
	case hd.Seq > st.seq:
		v.fail(st.seq+1, "the head record is at event %d but the log ends at event %d (events removed at the end)", hd.Seq, st.seq)
	case v.headSeen && v.headHash != hd.Hash && hd.Seq == st.seq:
		v.fail(hd.Seq, "event %d does not match the head record (last event edited)", hd.Seq)
	case v.headSeen && v.headHash != hd.Hash:
		v.fail(hd.Seq, "event %d does not match the head record (edited)", hd.Seq)
	case hd.Seq < st.seq:
		v.r.Warnings = append(v.r.Warnings, fmt.Sprintf(
			"the head record is at event %d, the log ends at event %d: the process stopped between saving a chunk and the head; events after %d are not vouched for",
			hd.Seq, st.seq, hd.Seq))
	}
}

// kept lists the copies of damaged records under events.damaged/.
func (v *verifier) kept(ctx context.Context, sys Sys) error {
	kept, err := sys.ListSys(ctx, damagedPrefix)
	if err != nil {
		return fmt.Errorf("eventlog: verify: list: %w", err)
	}
	for _, e := range kept {
		v.r.Damage = append(v.r.Damage, fmt.Sprintf("%s: a damaged record of the log (%d bytes) kept aside", e.Key, e.Info.Size))
	}
	if len(kept) > 0 {
		v.fail(0, "%d damaged records of the log are kept under %s", len(kept), damagedPrefix)
	}
	return nil
}

// describeBreak says what the OpBreak event ev records.
func describeBreak(ev *Event) string {
	b := ev.Break
	if b == nil {
		return fmt.Sprintf("event %d records a break in %s without saying what broke", ev.Seq, ev.Key)
	}
	var s strings.Builder
	fmt.Fprintf(&s, "event %d records damage in %s: %s (bytes %d to %d of %d", ev.Seq, b.Record, b.Reason, b.Off, b.Off+b.Len, ev.Size)
	switch {
	case b.Moved && b.SavedTo != "":
		fmt.Fprintf(&s, ", left the log; the record as found is kept in %s)", b.SavedTo)
	case b.Moved:
		s.WriteString(", left the log)")
	default:
		s.WriteString(", left in place)")
	}
	switch {
	case b.First > 0 && b.Last >= b.First:
		fmt.Fprintf(&s, "; events %d to %d in doubt", b.First, b.Last)
	case b.First > 0:
		fmt.Fprintf(&s, "; events from %d on in doubt", b.First)
	}
	if ev.Seq > 1 {
		fmt.Fprintf(&s, "; the log resumes here, chained to event %d", ev.Seq-1)
	} else {
		s.WriteString("; the log starts again here")
	}
	return s.String()
}
