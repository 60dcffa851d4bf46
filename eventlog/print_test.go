package eventlog

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/meta"
)

func TestParseOps(t *testing.T) {
	got, err := ParseOps([]string{OpWrite, OpBreak})
	if err != nil || len(got) != 2 {
		t.Errorf("ParseOps(write, break) = %v, %v", got, err)
	}
	if got, err := ParseOps([]string{"write", "conflict"}); err != nil || len(got) != 2 {
		t.Errorf("ParseOps(write, conflict) = %v, %v; want both (memfs log --op conflict)", got, err)
	}
	if _, err := ParseOps([]string{"write", "bogus"}); err == nil || !strings.Contains(err.Error(), `"bogus"`) {
		t.Errorf("ParseOps(bogus) = %v, want an error naming it", err)
	}
}

func TestWriteTable(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	events := []Event{
		{Seq: 1, Time: at, Op: OpWrite, Key: "a\nb", Size: 3, Writer: meta.WriterInfo{Comm: "vim", PID: 10, UID: 1000, Agent: "bob"}},
		{Seq: 2, Time: at, Op: OpRename, OldKey: "a", Key: "b", Writer: meta.WriterInfo{Comm: "mv", PID: 11}},
		{Seq: 3, Time: at, Op: OpBreak, Break: &Break{Record: "events/1", Reason: "bad line"}},
		{Seq: 4, Time: at, Op: OpConflict, Key: "p.md", Size: 2, Writer: meta.WriterInfo{Comm: "memfs", PID: 12, Agent: "coder"},
			Conflict: &Conflict{Policy: "keep-both", Outcome: "kept-both", Copy: "p.conflict-coder-x.md"}},
	}
	var b bytes.Buffer
	if err := WriteTable(&b, events); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`1  2026-01-02 03:04:05.000  write   "a\nb"  3  vim[10] uid 1000 agent bob`,
		`2  2026-01-02 03:04:05.000  rename  a -> b  0  mv[11] uid 0`,
		`3  2026-01-02 03:04:05.000  break   events/1: bad line  0  memfs (damage found at open)`,
		`4  2026-01-02 03:04:05.000  conflict  p.md (kept-both, copy p.conflict-coder-x.md)  2  memfs[12] uid 0 agent coder`,
	} {
		if !strings.Contains(strings.Join(strings.Fields(b.String()), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("table:\n%s\nwant a line %q", b.String(), want)
		}
	}
}

// Print writes a table and then the next page's hint, or JSON lines and
// no hint.
func TestPagePrint(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	page := Page{Events: []Event{{Seq: 7, Time: at, Op: OpWrite, Key: "k"}, {Seq: 8, Time: at, Op: OpDelete, Key: "k"}}, More: true}
	tests := []struct {
		name      string
		q         Query
		asJSON    bool
		wantHint  string
		wantLines int
	}{
		{"back", Query{Limit: 2}, false, "(earlier events: --before 7)\n", 2},
		{"forward", Query{Limit: 2, Forward: true}, false, "(more: --after 8)\n", 2},
		{"json", Query{Limit: 2}, true, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, hints bytes.Buffer
			if err := page.Print(&out, &hints, tt.q, tt.asJSON); err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(out.String(), "\n"); got != tt.wantLines || hints.String() != tt.wantHint {
				t.Errorf("Print wrote %d lines and hint %q, want %d and %q", got, hints.String(), tt.wantLines, tt.wantHint)
			}
			if tt.asJSON != strings.HasPrefix(out.String(), `{"seq":7`) {
				t.Errorf("Print (JSON %v) wrote %q", tt.asJSON, out.String())
			}
		})
	}
	var out, hints bytes.Buffer
	if err := (Page{Events: page.Events}).Print(&out, &hints, Query{}, false); err != nil || hints.Len() != 0 {
		t.Errorf("Print of the last page: hint %q, %v; want none", hints.String(), err)
	}
}

func TestReportSummary(t *testing.T) {
	if s := (Report{OK: true, Events: 5, Chunks: 1}).Summary(); s != "event log ok: 5 events in 1 chunks, hash chain intact" {
		t.Errorf("ok summary = %q", s)
	}
	if s := (Report{Events: 5, Chunks: 1, Seq: 3, Problem: "gap"}).Summary(); !strings.Contains(s, "broken at event 3: gap") {
		t.Errorf("broken summary = %q", s)
	}
}

// log --verify's report of a filtered view says what it checked, and
// fails: the whole chain was not checked.
func TestReportOfAFilteredView(t *testing.T) {
	tests := []struct {
		name string
		r    MaskedReport
		want string // in the error
	}{
		{"intact", MaskedReport{Events: 60, Hidden: 30, Links: 12}, "not fully verified"},
		{"broken", MaskedReport{Events: 60, Hidden: 30, Problem: "event 5: prev hash does not match event 4", Seq: 4}, "broken at event 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, err := tt.r.Summary(1000)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("report of a filtered view: got %v, want an error saying %q", err, tt.want)
			}
			if tt.r.Problem == "" && !strings.Contains(text, "filtered view") {
				t.Errorf("report = %q, want it to say the view is filtered", text)
			}
		})
	}
}
