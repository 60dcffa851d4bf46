package session_test

import (
	"testing"

	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/session"
)

// The event log refuses a flush's events (a full disk): the flush saved
// the values but is not a success, and the journal keeps their records,
// so that a process that ends before a later flush appends the events
// still has them appended at the next open.
func TestFlushWhoseEventsAreRefusedKeepsTheJournal(t *testing.T) {
	dir := t.TempDir()
	jpath := dir + "-journal"
	st := openStore(t, dir)
	j, _, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	s := &eventSink{}
	c := session.NewContext(st, session.Options{Journal: j, Events: s.send})
	if err := c.Mkdir("memory", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	appendLine(t, c, "memory/a.md", "whole\n")
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.fail = true
	s.mu.Unlock()
	appendLine(t, c, "memory/a.md", "appended\n")
	if err := c.Flush(t.Context()); err == nil {
		t.Error("a flush whose events the event log refused reported success")
	}
	if v, _ := storedValue(t, st, "memory/a.md"); v != "whole\nappended\n" {
		t.Fatalf("store holds %q", v)
	}
	j.Close() // the process ends here, its outbox with it
	var s2 eventSink
	replayInto(t, st, jpath, &s2)
	if n := s2.writes("memory/a.md"); n == 0 {
		t.Error("the value the store holds got no event at the next open")
	}
}
