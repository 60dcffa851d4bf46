package session_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/session"
)

// eventSink records the events a session hands it; fail makes it refuse
// them (a full disk under the event log).
type eventSink struct {
	mu   sync.Mutex
	fail bool
	evs  []session.Event
}

func (s *eventSink) send(_ context.Context, evs []session.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errors.New("event log: no space left on device")
	}
	s.evs = append(s.evs, evs...)
	return nil
}

func (s *eventSink) writes(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.evs {
		if e.Key == key && e.Op == session.EventWrite {
			n++
		}
	}
	return n
}

// replayInto replays the journal at jpath into a new session over st with
// the event sink s, and flushes it.
func replayInto(t *testing.T, st backend.Store, jpath string, s *eventSink) {
	t.Helper()
	j, recs, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	c := session.NewContext(st, session.Options{Journal: j, Events: s.send})
	if err := c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Pending().Replay(recs); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// A kill -9 after a flush saved an appended value but before its event
// was appended (and before the journal was truncated): the replay finds
// the store holding the append, and the value still gets its event (the
// history's version hangs on it). A store value another writer made newer
// is not announced as the session's, nor one it left with the append's
// mtime (the time alone does not say the value holds the append).
func TestReplayedAppendTheStoreHoldsGetsItsEvent(t *testing.T) {
	for _, otherCase := range []string{"", "later", "same mtime"} {
		other := otherCase != ""
		dir := t.TempDir()
		jpath := dir + "-journal"
		st := openStore(t, dir)
		j, _, err := journal.Open(jpath)
		if err != nil {
			t.Fatal(err)
		}
		c := session.NewContext(st, session.Options{Journal: j})
		if err := c.Mkdir("memory", 0o755, 0, 0); err != nil {
			t.Fatal(err)
		}
		const key = "memory/log.md"
		appendLine(t, c, key, "first\n")
		if err := c.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		appendLine(t, c, key, "second\n")
		// The journal as the kill leaves it: the append's record, not
		// yet truncated by the flush that saves it.
		saved, err := os.ReadFile(jpath)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		j.Close()
		if err := os.WriteFile(jpath, saved, 0o600); err != nil {
			t.Fatal(err)
		}
		if other {
			// Another writer changed the value since, later.
			es, err := st.Load(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			e := es[0]
			e.Value = []byte("another writer's\n")
			if otherCase == "later" {
				e.Info.MTime = e.Info.MTime.Add(time.Second)
			}
			if err := st.Save(t.Context(), e); err != nil {
				t.Fatal(err)
			}
		}
		var s eventSink
		replayInto(t, st, jpath, &s)
		want := "first\nsecond\n"
		if other {
			want = "another writer's\n"
		}
		if v, _ := storedValue(t, st, key); v != want {
			t.Fatalf("%q: after the replay the store holds %q, want %q", otherCase, v, want)
		}
		switch n := s.writes(key); {
		case !other && n != 1:
			t.Errorf("the replayed append the store held before: %d write events, want 1 (its event was never appended)", n)
		case other && n != 0:
			t.Errorf("%s: another writer's value: %d write events announced as the session's, want 0", otherCase, n)
		}
	}
}
