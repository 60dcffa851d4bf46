package memfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"testing"

	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/session"
)

// TestReconcileFromTheStart: a crash left the versions of more events
// than one page of the log (1,000) unwritten, with no group written yet;
// reconcile records them all, the oldest first.
func TestReconcileFromTheStart(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	l, err := eventlog.Open(ctx, st, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	r := newRecorder(st, slog.New(slog.DiscardHandler))
	if err := r.reconcile(ctx, l, st); err != nil { // records history's start: the empty log's head
		t.Fatal(err)
	}
	var evs []eventlog.Event
	for i := range 1500 {
		e := writeEvent(fmt.Sprintf("memory/%d.md", i), []byte(fmt.Sprint(i)))
		evs = append(evs, eventlog.Event{Op: e.Op, Key: e.Key, Size: e.Size, SHA256: e.SHA256})
	}
	stored, err := l.Append(ctx, evs)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.reconcile(ctx, l, st); err != nil {
		t.Fatal(err)
	}
	for _, e := range []eventlog.Event{stored[0], stored[len(stored)-1]} {
		if ok, err := r.h.Recorded(ctx, e.Key, e.Seq); err != nil || !ok {
			t.Errorf("the version of %s at %d: recorded %v, %v", e.Key, e.Seq, ok, err)
		}
	}
}

// TestRecordShortAppend: an append that stores fewer events than it was
// given, without an error, fails the sink, which offers them again.
func TestRecordShortAppend(t *testing.T) {
	ctx := context.Background()
	r := newRecorder(memstore.New(), slog.New(slog.DiscardHandler))
	evs := []session.Event{writeEvent("memory/a.md", []byte("a")), writeEvent("memory/b.md", []byte("b"))}
	_, err := r.record(ctx, evs, func() ([]eventlog.Event, error) {
		return []eventlog.Event{{Seq: 1, Op: evs[0].Op, Key: evs[0].Key, Size: evs[0].Size, SHA256: evs[0].SHA256}}, nil
	})
	if err == nil {
		t.Fatal("an append of 1 of 2 events recorded without an error")
	}
}

// TestConflictVersionNamesNoUnwrittenValue: a conflict event's sha256 is
// the other writer's value, which history never holds: its version names
// no address (one that did would read as damaged).
func TestConflictVersionNamesNoUnwrittenValue(t *testing.T) {
	sum := sha256.Sum256([]byte("theirs\n"))
	for _, op := range []string{eventlog.OpConflict, eventlog.OpWrite} {
		v, ok := versionOf(&eventlog.Event{Seq: 7, Op: op, Key: "memory/a.md", Size: 7, SHA256: hex.EncodeToString(sum[:])}, nil)
		if !ok {
			t.Fatalf("%s: no version", op)
		}
		if got, want := v.Addr != (history.Addr{}), op == eventlog.OpWrite; got != want {
			t.Errorf("%s: version has an address: %v, want %v", op, got, want)
		}
	}
}
