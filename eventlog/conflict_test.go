package eventlog

import "testing"

// TestConflictEventRoundTrip: a session's conflict event is taken, and
// comes back with how it was resolved.
func TestConflictEventRoundTrip(t *testing.T) {
	l := openLog(t, newMemSys())
	in := Event{Op: OpConflict, Key: "memory/a.md", Size: 3, SHA256: "ab",
		Conflict: &Conflict{Policy: "keep-both", Outcome: "kept-both", Copy: "memory/a.conflict-me-20261127T000000.000000000Z.md"}}
	mustAppend(t, l, []Event{in})
	p, err := l.Query(t.Context(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != 1 {
		t.Fatalf("got %d events, want 1", len(p.Events))
	}
	got := p.Events[0]
	if got.Op != OpConflict || got.Conflict == nil || *got.Conflict != *in.Conflict {
		t.Errorf("got %+v (conflict %+v), want %+v", got, got.Conflict, in.Conflict)
	}
}
