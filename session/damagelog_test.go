package session_test

import (
	"context"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/session"
)

// blockingSink is a log sink that blocks every line that holds its word
// until release is closed (a full stderr pipe), saying when one arrives.
type blockingSink struct {
	word    string
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockingSink) Write(p []byte) (int, error) {
	if strings.Contains(string(p), b.word) {
		b.once.Do(func() { close(b.arrived) })
		<-b.release
	}
	return len(p), nil
}

// TestDamageLogDoesNotHoldTheSession: the line that names a damaged value
// is logged after the session lets go of its lock, so a log sink that
// blocks stalls the load that found the damage, never the rest of the
// session (it held the write lock across the log call).
func TestDamageLogDoesNotHoldTheSession(t *testing.T) {
	base := memstore.New()
	seed(t, base, map[string]string{"memory/ok.md": "fine\n", "memory/bad.md": "damaged\n"})
	st := errorstore.Wrap(base, func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpLoad && slices.Contains(keys, "memory/bad.md") {
			return &fs.PathError{Op: "load", Path: "memory/bad.md", Err: syscall.EIO}
		}
		return nil
	})
	sink := &blockingSink{word: "cannot be loaded", arrived: make(chan struct{}), release: make(chan struct{})}
	c := session.NewContext(st, session.Options{Logger: slog.New(slog.NewTextHandler(sink, nil))})
	defer close(sink.release)
	if err := c.Bootstrap(t.Context()); err != nil { // index only
		t.Fatal(err)
	}
	go func() { _ = c.Resolve(context.Background(), "memory/bad.md") }() // its EIO is not this test's
	select {
	case <-sink.arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the damaged value was never logged")
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Stat("memory/ok.md")
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Stat of another key while the damage is being logged: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Stat of another key waited on the log line of a damaged one")
	}
}
