package eventlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// storeSys is what the damage tests need of a store: a Sys that can also
// delete (memSys and every backend.Store).
type storeSys interface {
	Sys
	DeleteSys(ctx context.Context, names ...string) error
}

// damageSeed seeds the random bytes of the damage cases; printed by each.
const damageSeed = 13

// damageEvents is the log each damage case starts from: three chunks, the
// last holding 100 events.
const damageEvents = 2*ChunkEvents + 100

// A damage case damages a log of damageEvents events (chunks names, head
// at the last event), and says what must hold afterwards.
type damageCase struct {
	name   string
	damage func(t *testing.T, sys storeSys, names []string)
	// intact is the last event before the damage that the log keeps: the
	// events appended after Open chain to it (through any break events).
	intact uint64
	// seq is the event Verify must name (Report.Seq) once the damage was
	// recorded, and after any further appends.
	seq uint64
	// headKept: the head record disagrees with the log, so its bytes
	// must survive the next head save (elsewhere in the store).
	headKept bool
	// breaks are the records Open finds damaged at the end of the log,
	// in the order the break events name them ("last" for the last chunk).
	breaks []string
	// sealed: the damage stays in place in the last chunk, which must
	// never be written again.
	sealed bool
}

// flipLine flips three bytes in the middle of line j of a chunk (0-based).
func flipLine(t *testing.T, sys storeSys, name string, j int) {
	t.Helper()
	d := load(t, sys, name)
	start := 0
	for range j {
		start += bytes.IndexByte(d[start:], '\n') + 1
	}
	end := start + bytes.IndexByte(d[start:], '\n')
	mid := (start + end) / 2
	for k := mid; k < mid+3; k++ {
		d[k] ^= 0xff
	}
	saveRec(t, sys, name, d)
}

func load(t *testing.T, sys Sys, name string) []byte {
	t.Helper()
	d, err := sys.LoadSys(t.Context(), name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return d
}

func saveRec(t *testing.T, sys Sys, name string, data []byte) {
	t.Helper()
	if err := sys.SaveSys(t.Context(), name, data); err != nil {
		t.Fatalf("save %s: %v", name, err)
	}
}

// setHeadAt makes the head vouch for event seq, as a crash between saving
// a chunk and the head leaves it.
func setHeadAt(t *testing.T, sys storeSys, names []string, seq uint64) {
	t.Helper()
	name := names[(seq-1)/ChunkEvents]
	saveRec(t, sys, headName, fmt.Appendf(nil, `{"seq":%d,"hash":%q}`, seq, lineHash(lineOf(t, load(t, sys, name), seq))))
}

var damageCases = []damageCase{
	{
		name: "flipped bytes in the middle of the last chunk",
		damage: func(t *testing.T, sys storeSys, names []string) {
			flipLine(t, sys, names[2], 50)
		},
		intact: damageEvents, seq: 2*ChunkEvents + 51, sealed: true,
	},
	{
		name: "flipped bytes in the last chunk, after the event the head vouches for",
		damage: func(t *testing.T, sys storeSys, names []string) {
			setHeadAt(t, sys, names, damageEvents-60)
			flipLine(t, sys, names[2], 70)
		},
		intact: damageEvents, seq: 2*ChunkEvents + 71, sealed: true,
	},
	{
		name: "flipped bytes in the last event",
		damage: func(t *testing.T, sys storeSys, names []string) {
			flipLine(t, sys, names[2], 99)
		},
		intact: damageEvents - 1, seq: damageEvents, headKept: true,
		breaks: []string{"last", headName},
	},
	{
		name: "last event edited, still an event",
		damage: func(t *testing.T, sys storeSys, names []string) {
			d := load(t, sys, names[2])
			ln := lineOf(t, d, damageEvents)
			saveRec(t, sys, names[2], bytes.Replace(d, ln, bytes.Replace(ln, []byte(`"size":`), []byte(`"size":1`), 1), 1))
		},
		intact: damageEvents, seq: damageEvents, headKept: true,
		breaks: []string{headName},
	},
	{
		name: "flipped bytes in an earlier chunk",
		damage: func(t *testing.T, sys storeSys, names []string) {
			flipLine(t, sys, names[0], 500)
		},
		intact: damageEvents, seq: 501,
	},
	{
		name: "last chunk replaced by random bytes",
		damage: func(t *testing.T, sys storeSys, names []string) {
			r := rand.New(rand.NewPCG(damageSeed, damageSeed))
			d := load(t, sys, names[2])
			for i := range d {
				d[i] = byte(r.Uint32())
			}
			saveRec(t, sys, names[2], d)
		},
		intact: 2 * ChunkEvents, seq: 2*ChunkEvents + 1, headKept: true,
		breaks: []string{"last", headName},
	},
	{
		name: "last chunk truncated mid-line",
		damage: func(t *testing.T, sys storeSys, names []string) {
			d := load(t, sys, names[2])
			saveRec(t, sys, names[2], d[:len(d)-40])
		},
		intact: damageEvents - 1, seq: damageEvents, headKept: true,
		breaks: []string{"last", headName},
	},
	{
		name: "head record damaged",
		damage: func(t *testing.T, sys storeSys, names []string) {
			d := load(t, sys, headName)
			d[len(d)/2] ^= 0xff
			d[1] = '!'
			saveRec(t, sys, headName, d)
		},
		intact: damageEvents, seq: damageEvents + 1, headKept: true,
		breaks: []string{headName},
	},
	{
		name: "chunk missing in the middle",
		damage: func(t *testing.T, sys storeSys, names []string) {
			if err := sys.DeleteSys(t.Context(), names[1]); err != nil {
				t.Fatal(err)
			}
		},
		intact: damageEvents, seq: ChunkEvents + 1,
	},
}

// records returns every system record of sys and its bytes.
func records(t *testing.T, sys Sys) map[string][]byte {
	t.Helper()
	es, err := sys.ListSys(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range es {
		out[e.Key] = load(t, sys, e.Key)
	}
	return out
}

// checkKept fails unless every record of before (but the head, unless
// head) is still in after, as a whole record or inside one: Open and
// Append may move damaged bytes aside and extend chunks, never drop them.
func checkKept(t *testing.T, before, after map[string][]byte, head bool) {
	t.Helper()
	for name, data := range before {
		if name == headName && !head {
			continue
		}
		if bytes.Equal(after[name], data) {
			continue
		}
		found := ""
		for n, d := range after {
			if len(data) > 0 && bytes.Contains(d, data) {
				found = n
				break
			}
		}
		if found == "" {
			t.Errorf("the %d bytes of %s are nowhere in the store any more (records now: %s)", len(data), name, recordNames(after))
		}
	}
}

func recordNames(recs map[string][]byte) string {
	var names []string
	for n, d := range recs {
		names = append(names, fmt.Sprintf("%s (%d)", n, len(d)))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// checkChainsFrom fails unless the stored chunks end with a run of whole
// lines that starts at the last line holding event from and chains to the
// end (seq by seq, each Prev the hash of the line before), and returns the
// number of lines after it.
func checkChainsFrom(t *testing.T, sys Sys, from uint64) int {
	t.Helper()
	ctx := t.Context()
	es, err := sys.ListSys(ctx, chunkPrefix)
	if err != nil {
		t.Fatal(err)
	}
	chunks, _ := index(es)
	var lines [][]byte
	for _, c := range chunks {
		ls, torn := splitLines(load(t, sys, c.name))
		if torn > 0 {
			t.Fatalf("chunk %s ends in a torn line", c.name)
		}
		lines = append(lines, ls...)
	}
	start := -1
	for j := len(lines) - 1; j >= 0; j-- {
		if ev, err := decodeLine(lines[j]); err == nil && ev.Seq == from {
			start = j
			break
		}
	}
	if start < 0 {
		t.Fatalf("no stored line holds event %d", from)
	}
	for j := start + 1; j < len(lines); j++ {
		prev, _ := decodeLine(lines[j-1])
		ev, err := decodeLine(lines[j])
		if err != nil {
			t.Fatalf("line after event %d does not parse: %v", prev.Seq, err)
		}
		if ev.Seq != prev.Seq+1 || ev.Prev != lineHash(lines[j-1]) {
			t.Fatalf("event %d (prev %.8s) does not chain to event %d (hash %.8s)", ev.Seq, ev.Prev, prev.Seq, lineHash(lines[j-1]))
		}
	}
	return len(lines) - 1 - start
}

// runDamage runs one damage case on the store open returns; reopen closes
// the store and opens it again (for a real store), or returns it as is.
func runDamage(t *testing.T, tt damageCase, sys storeSys, reopen func() storeSys) {
	t.Logf("seed %d", damageSeed)
	l := openLog(t, sys)
	mustAppend(t, l, evsAt(0, damageEvents, nil))
	es, err := sys.ListSys(t.Context(), chunkPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Key)
	}
	if len(names) != 3 {
		t.Fatalf("got chunks %v, want 3", names)
	}
	tt.damage(t, sys, names)
	damaged := records(t, sys)

	l = openLog(t, sys)
	if got := records(t, sys); !equalRecords(got, damaged) {
		t.Errorf("Open changed the store: records before %s, after %s", recordNames(damaged), recordNames(got))
	}
	want := damageFound(t, tt, l, names)
	last := damageRecorded(t, tt, sys, l, names, damaged, want)
	damageReopened(t, tt, reopen, l, last)
}

// damageRecordedK is how many events runDamage appends at a time.
const damageRecordedK = 10

// damageFound checks that Open, on l, found the damage tt.breaks names
// ("last": the last of names), and returns those records.
func damageFound(t *testing.T, tt damageCase, l *Log, names []string) []string {
	t.Helper()
	var want []string
	for _, b := range tt.breaks {
		if b == "last" {
			b = names[2]
		}
		want = append(want, b)
	}
	var found []string
	for _, b := range l.Damage() {
		found = append(found, b.Record)
	}
	if !slices.Equal(found, want) {
		t.Errorf("Damage: got %q, want %q", found, want)
	}
	return want
}

// damageRecorded appends to l and checks that the damage found (want) is
// recorded first: the records as found kept, one break event each after
// the last intact event, naming its copy. It returns the last seq.
func damageRecorded(t *testing.T, tt damageCase, sys storeSys, l *Log, names []string, damaged map[string][]byte, want []string) uint64 {
	t.Helper()
	const k = damageRecordedK
	out := mustAppend(t, l, evsAt(damageEvents, k, nil))
	after := records(t, sys)
	checkKept(t, damaged, after, tt.headKept)
	if tt.sealed && !bytes.Equal(after[names[2]], damaged[names[2]]) {
		t.Errorf("the damaged last chunk was written again")
	}
	if n := checkChainsFrom(t, sys, tt.intact); n != len(want)+k {
		t.Errorf("got %d events after event %d, want %d breaks and the %d appended", n, tt.intact, len(want), k)
	}
	if first := tt.intact + uint64(len(want)) + 1; out[0].Seq != first {
		t.Errorf("first appended event: got seq %d, want %d", out[0].Seq, first)
	}
	// The break events, right after the last intact event, name each
	// damaged record and its copy: the record as found.
	p, err := l.Query(t.Context(), Query{After: tt.intact, Limit: len(want)})
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range p.Events[:len(want)] {
		b := ev.Break
		if ev.Op != OpBreak || b == nil || ev.Key != want[i] || b.Record != want[i] || !b.Moved {
			t.Errorf("event %d: got %+v, want a break of %s", ev.Seq, ev, want[i])
			continue
		}
		if got, ok := after[b.SavedTo]; !ok || !bytes.Equal(got, damaged[want[i]]) || ev.SHA256 != recordSum(got) || ev.Size != int64(len(got)) {
			t.Errorf("event %d: the copy %s (%d bytes) is not %s as found (%d bytes)", ev.Seq, b.SavedTo, len(got), want[i], len(damaged[want[i]]))
		}
	}
	verifyDamage(t, sys, tt.seq)
	if r, _ := Verify(t.Context(), sys); len(r.Damage) != 2*len(want) {
		t.Errorf("Verify: got damage %q, want %d breaks and their copies", r.Damage, len(want))
	}
	return out[k-1].Seq
}

// damageReopened opens the store again after the damage was recorded
// (l's log, ending at event last): the damage is not recorded twice.
func damageReopened(t *testing.T, tt damageCase, reopen func() storeSys, l *Log, last uint64) {
	t.Helper()
	sys := reopen()
	l2 := openLog(t, sys)
	if l2.Size() != l.Size() || len(l2.Damage()) != 0 {
		t.Errorf("reopen: Size %d (want %d), damage %+v (want none: recorded)", l2.Size(), l.Size(), l2.Damage())
	}
	p, err := l2.Query(t.Context(), Query{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != 1 || p.Events[0].Seq != last {
		t.Errorf("last event after reopen: got %s, want %d", seqRange(p.Events), last)
	}
	before := records(t, sys)
	more := mustAppend(t, l2, evsAt(damageEvents+damageRecordedK, damageRecordedK, nil))
	if more[0].Seq != last+1 {
		t.Errorf("first seq after reopen: got %d, want %d (no second record of the same damage)", more[0].Seq, last+1)
	}
	checkKept(t, before, records(t, sys), false)
	checkChainsFrom(t, sys, tt.intact)
	verifyDamage(t, sys, tt.seq)
	sys = reopen()
	openLog(t, sys)
	verifyDamage(t, sys, tt.seq)
}

func equalRecords(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for n, d := range a {
		if e, ok := b[n]; !ok || !bytes.Equal(d, e) {
			return false
		}
	}
	return true
}

// verifyDamage checks that Verify reports the damage at seq.
func verifyDamage(t *testing.T, sys Sys, seq uint64) {
	t.Helper()
	r, err := Verify(t.Context(), sys)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if r.OK || r.Seq != seq {
		t.Errorf("Verify: got OK %v, problem at %d: %q; want the damage at %d", r.OK, r.Seq, r.Problem, seq)
	}
}

// Damage is never repaired by deleting what cannot be read: on the
// in-memory store, each case keeps every byte, appends chain after the
// damage, and Verify reports it for good.
func TestDamage(t *testing.T) {
	t.Parallel()
	for _, tt := range damageCases {
		t.Run(tt.name, func(t *testing.T) {
			sys := newMemSys()
			runDamage(t, tt, sys, func() storeSys { return sys })
		})
	}
}

// The Append that records damage fails at each of its saves in turn: the
// Log stays as it was and the retry records each break once; a crash
// (a new Open) after the chunks landed loses nothing either.
func TestDamageRecordFails(t *testing.T) {
	var random damageCase
	for _, tt := range damageCases {
		if tt.name == "last chunk replaced by random bytes" {
			random = tt
		}
	}
	sys := newMemSys()
	mustAppend(t, openLog(t, sys), evsAt(0, damageEvents, nil))
	random.damage(t, sys, sys.chunkNames(t))
	damaged := records(t, sys)

	l := openLog(t, sys)
	size := l.Size()
	failing := []struct {
		what string
		fail func(name string) bool
	}{
		{"the copy", func(name string) bool { return strings.HasPrefix(name, damagedPrefix) }},
		{"the chunk", func(name string) bool { return strings.HasPrefix(name, chunkPrefix) }},
		{"the head", func(name string) bool { return name == headName }},
	}
	for _, f := range failing {
		sys.setFail(func(op, name string) error {
			if op == "save" && f.fail(name) {
				return errInjected
			}
			return nil
		})
		if _, err := l.Append(t.Context(), evsAt(damageEvents, 10, nil)); !errors.Is(err, errInjected) {
			t.Fatalf("saving %s fails: Append got %v, want the injected error", f.what, err)
		}
		sys.setFail(nil)
		if l.Size() != size || len(l.Damage()) != 2 {
			t.Fatalf("saving %s failed: Size %d (want %d), damage %d (want 2)", f.what, l.Size(), size, len(l.Damage()))
		}
		checkKept(t, damaged, records(t, sys), true)
	}
	crashed := sys.clone(t)

	// The retry records the two breaks, once.
	mustAppend(t, l, evsAt(damageEvents, 10, nil))
	if n := checkChainsFrom(t, sys, random.intact); n != 12 {
		t.Errorf("retry: got %d events after event %d, want 2 breaks and 10 events", n, random.intact)
	}
	checkKept(t, damaged, records(t, sys), true)
	verifyDamage(t, sys, random.seq)

	// A crash instead: the new chunk landed, the head did not. The next
	// Open finds the old head past the end again and records it again.
	l = openLog(t, crashed)
	mustAppend(t, l, evsAt(damageEvents, 10, nil))
	if n := checkChainsFrom(t, crashed, random.intact); n < 12 {
		t.Errorf("after a crash: got %d events after event %d, want at least 12", n, random.intact)
	}
	checkKept(t, damaged, records(t, crashed), true)
	verifyDamage(t, crashed, random.seq)
}

// Damage the head vouches past (as in a mount's filtered view, whose
// hidden lines are placeholders) is left in place without a word: Open
// logs nothing, and the next Append starts a new chunk after it.
func TestOpenQuietOnVouchedDamage(t *testing.T) {
	sys := newMemSys()
	mustAppend(t, openLog(t, sys), evsAt(0, 20, nil))
	name := sys.chunkNames(t)[0]
	d := sys.get(t, name)
	ln := lineOf(t, d, 7)
	p := fmt.Appendf(nil, `{"seq":7,"hidden":true}`)
	sys.put(t, name, bytes.Replace(d, ln, append(p, bytes.Repeat([]byte(" "), len(ln)-len(p))...), 1))
	placeheld := sys.get(t, name)

	var logged bytes.Buffer
	l, err := Open(t.Context(), sys, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if logged.Len() > 0 || len(l.Damage()) > 0 {
		t.Errorf("Open logged %q, found %+v; want nothing", logged.String(), l.Damage())
	}
	mustAppend(t, l, evsAt(20, 3, nil))
	if got := sys.chunkNames(t); len(got) != 2 || !bytes.Equal(sys.get(t, name), placeheld) {
		t.Errorf("got chunks %q (the first changed: %v), want the damaged one as it was and a new one", got, !bytes.Equal(sys.get(t, name), placeheld))
	}
	r, err := Verify(t.Context(), sys)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || r.Seq != 7 || len(r.Damage) != 0 {
		t.Errorf("Verify: got OK %v at %d: %q, damage %q; want event 7 and no recorded damage", r.OK, r.Seq, r.Problem, r.Damage)
	}
}
