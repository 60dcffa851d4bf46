package eventlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// privVisible shows every key but those under priv/.
func privVisible(keys ...string) []bool {
	out := make([]bool, len(keys))
	for i, k := range keys {
		out[i] = !strings.HasPrefix(k, "priv/")
	}
	return out
}

// hide is line (with its newline) as a reader who may not see it reads
// it: the placeholder of event seq, padded with spaces.
func hide(line []byte, seq uint64) []byte {
	p := fmt.Appendf(nil, `{"seq":%d,"hidden":true}`, seq)
	return append(append(p, bytes.Repeat([]byte(" "), len(line)-1-len(p))...), '\n')
}

// privLog is a log on sys of n events, some about priv/ (the last one
// when lastHidden), a rename out of priv/ among them.
func privLog(t *testing.T, sys Sys, n int, lastHidden bool) *Log {
	t.Helper()
	l := openLog(t, sys)
	var evs []Event
	for i := range n {
		key := fmt.Sprintf("pub/%d.md", i)
		if i%3 == 1 || i%3 == 2 && i%2 == 0 || lastHidden && i == n-1 {
			key = fmt.Sprintf("priv/%d.md", i)
		}
		evs = append(evs, Event{Op: OpWrite, Key: key, Size: int64(i)})
		if i == 3 {
			evs[i].Op, evs[i].OldKey = OpRename, "priv/old.md"
		}
	}
	mustAppend(t, l, evs)
	return l
}

// maskByHand is data with every line about priv/ replaced by its
// placeholder; hidden counts them.
func maskByHand(t *testing.T, data []byte) (out []byte, hidden int) {
	t.Helper()
	for line := range bytes.SplitAfterSeq(data, []byte("\n")) {
		if len(line) == 0 {
			continue // after the last newline
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if strings.HasPrefix(ev.Key, "priv/") || strings.HasPrefix(ev.OldKey, "priv/") {
			hidden++
			line = hide(line, ev.Seq)
		}
		out = append(out, line...)
	}
	return out, hidden
}

// filteredLogDir writes, under dir, an event log of n events as a mount
// shows it to a reader who may not see the events about priv/: the chunks
// with those lines replaced by same-length placeholders, and the true
// head. The last event is a hidden one when lastHidden.
func filteredLogDir(t *testing.T, dir string, n int, lastHidden bool) (hidden int) {
	t.Helper()
	sys := newMemSys()
	privLog(t, sys, n, lastHidden)
	for name, b := range sys.records(t) {
		if strings.HasPrefix(name, chunkPrefix) {
			var h int
			b, h = maskByHand(t, b)
			hidden += h
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return hidden
}

// The stream and the chunks read masked are the raw ones with exactly
// the lines about priv/ (as key or old key) replaced by placeholders of
// the same length, whatever the size of the reads that cut the lines.
func TestReadMasked(t *testing.T) {
	sys := newMemSys()
	l := privLog(t, sys, ChunkEvents+300, false)
	want, hidden := maskByHand(t, readAll(t, l, 1<<20))
	if hidden == 0 {
		t.Fatal("no event hidden: the test needs both kinds")
	}
	for _, size := range []int{61, 333, 5000, 1 << 20} {
		var got []byte
		p := make([]byte, size)
		for off := int64(0); ; {
			n, err := l.ReadMaskedAt(t.Context(), p, off, privVisible)
			got, off = append(got, p[:n]...), off+int64(n)
			if errors.Is(err, io.EOF) || n == 0 {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, want) {
			t.Errorf("ReadMaskedAt %d bytes at a time: %d bytes, differs from the raw stream masked by hand (%d bytes)", size, len(got), len(want))
		}
	}
	var joined []byte
	for _, name := range l.RecordNames(chunkPrefix) {
		b, err := l.ReadRecordMasked(t.Context(), name, privVisible)
		if err != nil {
			t.Fatal(err)
		}
		joined = append(joined, b...)
	}
	if !bytes.Equal(joined, want) {
		t.Errorf("the chunks read masked do not join into the masked stream")
	}
	if raw := readAll(t, l, 1<<20); bytes.Equal(raw, want) {
		t.Errorf("a masked read changed the log's own bytes")
	}
	if head, err := l.ReadRecordMasked(t.Context(), headName, privVisible); err != nil || !bytes.Equal(head, sys.get(t, headName)) {
		t.Errorf("the head read masked: %q, %v; want it as stored", head, err)
	}
}

// lineKeys decodes a line's seq, key and old key with Event's own tags.
func TestLineKeysAreEventFields(t *testing.T) {
	lk, ev := reflect.TypeFor[lineKeys](), reflect.TypeFor[Event]()
	for i := range lk.NumField() {
		f := lk.Field(i)
		ef, ok := ev.FieldByName(f.Name)
		if !ok || strings.Split(string(ef.Tag.Get("json")), ",")[0] != f.Tag.Get("json") {
			t.Errorf("lineKeys.%s has tag %q; Event's field: %v %q", f.Name, f.Tag.Get("json"), ok, ef.Tag.Get("json"))
		}
	}
}

func TestPlaceholder(t *testing.T) {
	tests := []struct {
		line string
		seq  uint64
		ok   bool
	}{
		{`{"seq":42,"hidden":true}`, 42, true},
		{`{"seq":42,"hidden":true}      ` + "\n", 42, true},
		{`{"hidden":true}   `, 0, true},
		{`{"seq":42,"hidden":false}`, 0, false},
		{`{"seq":42,"op":"write","key":"a"}`, 0, false},
		{`   `, 0, false},
		{`{"seq":42,"hidden":tr`, 0, false},
	}
	for _, tt := range tests {
		seq, ok := Placeholder([]byte(tt.line))
		if seq != tt.seq || ok != tt.ok {
			t.Errorf("Placeholder(%q) = %d, %v; want %d, %v", tt.line, seq, ok, tt.seq, tt.ok)
		}
	}
	l := hide([]byte(`{"seq":7,"time":"2025-06-01T12:00:00Z","op":"write","key":"priv/a"}`+"\n"), 7)
	if seq, ok := Placeholder(l); seq != 7 || !ok {
		t.Errorf("Placeholder of a masked line = %d, %v; want 7, true", seq, ok)
	}
}

// A filtered view reads as it is: QueryVisible skips the placeholders
// (also when the last event is one), pages on to fill the limit, and
// counts what it skipped; Open on it logs no damage.
func TestLogReadsAFilteredView(t *testing.T) {
	for _, lastHidden := range []bool{false, true} {
		t.Run(fmt.Sprintf("last event hidden %v", lastHidden), func(t *testing.T) {
			dir := t.TempDir()
			filteredLogDir(t, dir, ChunkEvents+200, lastHidden)
			var logs bytes.Buffer
			l, err := Open(t.Context(), NewDirSys(dir), slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatalf("open the log of a filtered view: %v", err)
			}
			page, hidden, err := l.QueryVisible(t.Context(), Query{Limit: 30})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Events) != 30 || !page.More {
				t.Errorf("a page of 30 holds %d events, more %v; want 30, more", len(page.Events), page.More)
			}
			for _, ev := range page.Events {
				if !strings.HasPrefix(ev.Key, "pub/") {
					t.Errorf("event %d about %q: want an event about pub/", ev.Seq, ev.Key)
				}
			}
			if hidden == 0 || strings.Contains(logs.String(), "WARN") || len(l.Damage()) > 0 {
				t.Errorf("%d events skipped, log %q, damage %v; want a count of skipped events and no warning", hidden, logs.String(), l.Damage())
			}
		})
	}
}

// VerifyMasked of a filtered view checks the links between visible
// neighbours, the seqs and the head, and finds an edited visible event.
func TestVerifyAFilteredView(t *testing.T) {
	tests := []struct {
		name        string
		lastHidden  bool
		edit        func(line string) string // applied to the first visible line followed by a visible one
		dropLast    int                      // lines removed at the end of the last chunk
		wantProblem string
		moreHidden  int // placeholders the edit adds
	}{
		{name: "intact"},
		{name: "intact, the last event hidden", lastHidden: true},
		{name: "an edited event", edit: func(l string) string { return strings.Replace(l, `"size":`, `"size":9`, 1) }, wantProblem: "prev hash does not match"},
		{name: "a visible event made a placeholder of another seq", edit: func(l string) string {
			p := `{"seq":1,"hidden":true}`
			return p + strings.Repeat(" ", len(l)-1-len(p)) + "\n"
		}, wantProblem: "holds event 1", moreHidden: 1},
		{name: "events removed at the end, a hidden one last", lastHidden: true, dropLast: 1, wantProblem: "events removed at the end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			const n = 60
			hidden := filteredLogDir(t, dir, n, tt.lastHidden) + tt.moreHidden
			chunks, _ := filepath.Glob(filepath.Join(dir, "events", "*"))
			b, err := os.ReadFile(chunks[0])
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(b), "\n")
			for i := 1; tt.edit != nil && i+1 < len(lines); i++ {
				if !strings.Contains(lines[i]+lines[i+1], "hidden") {
					lines[i] = tt.edit(lines[i])
					break
				}
			}
			lines = lines[:len(lines)-1-tt.dropLast] // the last element is ""
			if err := os.WriteFile(chunks[0], []byte(strings.Join(lines, "")), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := VerifyMasked(t.Context(), NewDirSys(dir))
			if err != nil {
				t.Fatal(err)
			}
			if r.Events != len(lines) || r.Hidden == 0 {
				t.Errorf("VerifyMasked read %d events, %d hidden; want %d, some", r.Events, r.Hidden, len(lines))
			}
			if tt.dropLast == 0 && r.Hidden != hidden {
				t.Errorf("VerifyMasked found %d hidden, want %d", r.Hidden, hidden)
			}
			if (tt.wantProblem == "") != (r.Problem == "") || !strings.Contains(r.Problem, tt.wantProblem) {
				t.Errorf("VerifyMasked problem = %q, want %q", r.Problem, tt.wantProblem)
			}
			if tt.wantProblem == "" && r.Links == 0 {
				t.Errorf("VerifyMasked checked no link, want the links between visible neighbours")
			}
		})
	}
}

// TestShow prints a page of a filtered view as memfs log does: the
// visible events on w; on hints, how many were hidden from the caller,
// then how to ask for the page before.
func TestShow(t *testing.T) {
	dir := t.TempDir()
	filteredLogDir(t, dir, ChunkEvents+200, false)
	l, err := Open(t.Context(), NewDirSys(dir), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	q := Query{Limit: 30}
	page, hidden, err := l.QueryVisible(t.Context(), q)
	if err != nil || hidden == 0 {
		t.Fatalf("QueryVisible: %d hidden, %v; want some hidden", hidden, err)
	}
	var table bytes.Buffer
	if err := WriteTable(&table, page.Events); err != nil {
		t.Fatal(err)
	}
	var w, hints bytes.Buffer
	if err := Show(t.Context(), NewDirSys(dir), slog.New(slog.DiscardHandler), q, 1234, &w, &hints, false); err != nil {
		t.Fatal(err)
	}
	wantHints := fmt.Sprintf("(%d events skipped: they concern files uid 1234 may not read)\n%s\n", hidden, page.NextHint(q))
	if w.String() != table.String() || hints.String() != wantHints {
		t.Errorf("got\n%s\nhints %q; want\n%s\nhints %q", w.String(), hints.String(), table.String(), wantHints)
	}
	w.Reset()
	if err := Show(t.Context(), NewDirSys(dir), slog.New(slog.DiscardHandler), q, 1234, &w, io.Discard, true); err != nil || !strings.HasPrefix(w.String(), `{"seq":`) {
		t.Errorf("Show as JSON wrote %q, %v; want JSON lines", w.String(), err)
	}
}
