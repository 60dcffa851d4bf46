package eventlog

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// writeRaw stores evs as a log the way Append lays it out, but takes Seq
// and Time as given: it forges a log with a valid chain.
func writeRaw(t *testing.T, sys *memSys, evs []Event) {
	t.Helper()
	prev := ""
	var chunk []byte
	var name string
	flush := func() {
		if name != "" {
			sys.put(t, name, chunk)
		}
	}
	for i := range evs {
		evs[i].Prev = prev
		line, h, err := encodeLine(&evs[i])
		if err != nil {
			t.Fatal(err)
		}
		if i%ChunkEvents == 0 {
			flush()
			name, chunk = chunkName(evs[i].Seq, evs[i].Time), nil
		}
		chunk = append(append(chunk, line...), '\n')
		prev = h
	}
	flush()
	sys.put(t, headName, fmt.Appendf(nil, `{"seq":%d,"hash":%q}`, evs[len(evs)-1].Seq, prev))
}

func TestVerify(t *testing.T) {
	t.Parallel()
	const n = 3*ChunkEvents + 100 // four chunks, the last with 100 events
	edit := func(seq uint64, from, to string) func(*testing.T, *memSys, []string) {
		return func(t *testing.T, sys *memSys, names []string) {
			name := names[(seq-1)/ChunkEvents]
			d := sys.get(t, name)
			ln := lineOf(t, d, seq)
			edited := bytes.Replace(ln, []byte(from), []byte(to), 1)
			if bytes.Equal(edited, ln) {
				t.Fatalf("event %d has no %q", seq, from)
			}
			sys.put(t, name, bytes.Replace(d, ln, edited, 1))
		}
	}
	dropLine := func(seq uint64) func(*testing.T, *memSys, []string) {
		return func(t *testing.T, sys *memSys, names []string) {
			name := names[(seq-1)/ChunkEvents]
			d := sys.get(t, name)
			sys.put(t, name, bytes.Replace(d, append(lineOf(t, d, seq), '\n'), nil, 1))
		}
	}
	setHead := func(seq uint64, hash func(t *testing.T, sys *memSys, names []string) string) func(*testing.T, *memSys, []string) {
		return func(t *testing.T, sys *memSys, names []string) {
			sys.put(t, headName, fmt.Appendf(nil, `{"seq":%d,"hash":%q}`, seq, hash(t, sys, names)))
		}
	}
	hashOf := func(seq uint64) func(t *testing.T, sys *memSys, names []string) string {
		return func(t *testing.T, sys *memSys, names []string) string {
			return lineHash(lineOf(t, sys.get(t, names[(seq-1)/ChunkEvents]), seq))
		}
	}
	tests := []struct {
		name    string
		damage  func(t *testing.T, sys *memSys, names []string)
		seq     uint64 // 0: OK
		problem string // a word the problem must contain
		warning string // a word a warning must contain, "" for no warning
	}{
		{"intact", nil, 0, "", ""},
		{"edited key in a middle chunk", edit(1500, `"agents/k1499"`, `"agents/k1498"`), 1500, "edited", ""},
		{"edited size in the first chunk", edit(3, `"size":2`, `"size":3`), 3, "edited", ""},
		{"edited last event of a chunk", edit(2*ChunkEvents, `"op":"delete"`, `"op":"write"`), 2 * ChunkEvents, "edited", ""},
		{"edited prev", edit(700, `"prev":"`, `"prev":"0`), 700, "edited", ""},
		{"edited prev of a chunk's first event", edit(ChunkEvents+1, `"prev":"`, `"prev":"0`), ChunkEvents + 1, "edited", ""},
		{"edited event before the last", edit(n-1, `"session":"s1"`, `"session":"s2"`), n - 1, "edited", ""},
		{"edited prev of the last event", edit(n, `"prev":"`, `"prev":"0`), n, "edited", ""},
		{"removed event", dropLine(1500), 1500, "missing", ""},
		{"removed first event", dropLine(1), 1, "missing", ""},
		{"removed middle chunk", func(t *testing.T, sys *memSys, names []string) { sys.remove(t, names[1]) }, ChunkEvents + 1, "missing", ""},
		{"removed last chunk", func(t *testing.T, sys *memSys, names []string) { sys.remove(t, names[3]) }, 3*ChunkEvents + 1, "removed at the end", ""},
		{"removed last event", dropLine(n), n, "removed at the end", ""},
		{"edited last event", edit(n, `"session":"s1"`, `"session":"s2"`), n, "last event edited", ""},
		{"head edited back", setHead(n-5, func(*testing.T, *memSys, []string) string { return strings.Repeat("0", 64) }), n - 5, "head", ""},
		{"head behind", setHead(n-5, hashOf(n-5)), 0, "", "stopped between saving a chunk and the head"},
		{"no head", func(t *testing.T, sys *memSys, names []string) { sys.remove(t, headName) }, 0, "", "no head record"},
		{"garbage line", edit(2000, `{"seq":2000,`, `{"seq":2000`), 2000, "does not parse", ""},
		{"torn end", func(t *testing.T, sys *memSys, names []string) {
			sys.put(t, names[3], append(sys.get(t, names[3]), `{"seq":`...))
		}, n + 1, "torn", ""},
		{"renamed chunk", func(t *testing.T, sys *memSys, names []string) {
			d := sys.get(t, names[1])
			sys.remove(t, names[1])
			sys.put(t, chunkName(ChunkEvents+1, epoch.Add(-time.Hour)), d)
		}, ChunkEvents + 1, "name does not match", ""},
		{"duplicated line", func(t *testing.T, sys *memSys, names []string) {
			d := sys.get(t, names[0])
			ln := append(lineOf(t, d, 10), '\n')
			sys.put(t, names[0], bytes.Replace(d, ln, append(ln, ln...), 1))
		}, 10, "appears again", ""},
		{"stray record", func(t *testing.T, sys *memSys, names []string) { sys.put(t, "events/notes", []byte("x")) }, 0, "", "not a chunk name"},
	}
	orig := newMemSys()
	mustAppend(t, openLog(t, orig), evsAt(0, n, nil))
	names := orig.chunkNames(t)
	if len(names) != 4 {
		t.Fatalf("got %d chunks, want 4", len(names))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := orig.clone(t)
			if tt.damage != nil {
				tt.damage(t, sys, names)
			}
			r, err := Verify(t.Context(), sys)
			if err != nil {
				t.Fatal(err)
			}
			if tt.seq == 0 {
				if !r.OK || r.Problem != "" {
					t.Errorf("got a problem at %d: %s", r.Seq, r.Problem)
				}
				if r.Chunks != 4 || r.Events != n {
					t.Errorf("got %d chunks and %d events, want 4 and %d", r.Chunks, r.Events, n)
				}
			} else {
				if r.OK || r.Seq != tt.seq || !strings.Contains(r.Problem, tt.problem) {
					t.Errorf("got OK %v, problem at %d: %q; want a problem at %d with %q", r.OK, r.Seq, r.Problem, tt.seq, tt.problem)
				}
			}
			switch {
			case tt.warning == "" && len(r.Warnings) > 0:
				t.Errorf("got warnings %q, want none", r.Warnings)
			case tt.warning != "" && (len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], tt.warning)):
				t.Errorf("got warnings %q, want one with %q", r.Warnings, tt.warning)
			}
		})
	}
}

func TestVerifyEmpty(t *testing.T) {
	r := mustVerifyOK(t, newMemSys())
	if r.Events != 0 || r.Chunks != 0 || len(r.Warnings) != 0 {
		t.Errorf("got %+v, want an empty OK report", r)
	}
}

func TestVerifyTimeBackwards(t *testing.T) {
	sys := newMemSys()
	evs := evsAt(0, 50, func(k int) time.Time { return epoch.Add(time.Duration(k) * time.Second) })
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
	}
	evs[30].Time = epoch
	writeRaw(t, sys, evs)
	r, err := Verify(t.Context(), sys)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || r.Seq != 31 || !strings.Contains(r.Problem, "before event 30") {
		t.Errorf("got OK %v at %d: %q; want time going backwards at 31", r.OK, r.Seq, r.Problem)
	}
}

// What Verify cannot see: the chain rewritten from some event on, head
// included, is a valid log. Only an anchor kept elsewhere (a copy of an old
// head) would tell.
func TestVerifyCannotSeeARewrite(t *testing.T) {
	sys := newMemSys()
	l := openLog(t, sys)
	_, evs := func() ([]byte, []Event) { mustAppend(t, l, evsAt(0, 2000, nil)); return stored(t, sys) }()
	evs[1499].Key = "forged"
	for _, name := range sys.chunkNames(t) {
		sys.remove(t, name)
	}
	writeRaw(t, sys, evs)
	mustVerifyOK(t, sys)
}
