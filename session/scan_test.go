package session_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/session"
)

// Entry is Entries for one key: the same Info and value, found without a
// scan; false for a key the session has no file at.
func TestEntry(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	for _, k := range c.Keys() {
		e, ok := c.Entry(k)
		es := c.Entries(k)
		if !ok || len(es) == 0 || es[0].Key != k {
			t.Fatalf("Entry(%s) = %v; Entries gives %d entries", k, ok, len(es))
		}
		if e.Key != k || e.Info.Size != es[0].Info.Size || !e.Info.MTime.Equal(es[0].Info.MTime) || !bytes.Equal(e.Value, es[0].Value) ||
			(e.Value == nil) != (es[0].Value == nil) {
			t.Errorf("Entry(%s) = %+v, want Entries' %+v", k, e, es[0])
		}
	}
	for _, k := range []string{"memory", "nope", "memory/global.md/x"} {
		if e, ok := c.Entry(k); ok {
			t.Errorf("Entry(%s) = %+v, want none (no file there)", k, e)
		}
	}
}

// The read-only scans (Entries, Entry, Unflushed, DirtyEntries, and a
// rename's journal record) run under the read lock, beside each other and
// beside writers that change values in place, grow them, replace them and
// rename them. Under -race this finds a scan that writes what it only
// holds the read lock for, and a writer that changes bytes a reader was
// handed; each reader also checks that what it was handed never changes.
func TestScansUnderReadLock(t *testing.T) {
	j, _, err := journal.Open(t.TempDir() + "/journal")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	c, _, _, _ := newSession(t, session.Options{Journal: j})
	const writers, readers, rounds = 8, 8, 300
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			key := fmt.Sprintf("memory/w%d-f", w)
			h, err := c.Create(key, session.CreateOptions{Mode: 0o644})
			if err != nil {
				t.Error(err)
				return
			}
			defer h.Close()
			for i := range rounds {
				switch i % 4 {
				case 0, 1: // in place, then growing
					if _, err := h.WriteAt(fmt.Appendf(nil, "%08d", i), int64(i%3)*8); err != nil {
						t.Error(err)
						return
					}
				case 2:
					if err := c.Set(fmt.Sprintf("memory/w%d-s%d", w, i%5), fmt.Appendf(nil, "v%d", i)); err != nil {
						t.Error(err)
						return
					}
				case 3:
					from, to := fmt.Sprintf("memory/w%d-s%d", w, i%5), fmt.Sprintf("memory/w%d-r%d", w, i%5)
					if err := c.Rename(t.Context(), from, to, 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
						t.Error(err)
						return
					}
				}
				if i%100 == 99 {
					if err := c.Flush(t.Context()); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	held := make(chan []backend.Entry, readers*rounds)
	for r := range readers {
		wg.Go(func() {
			for i := range rounds {
				var es []backend.Entry
				switch (r + i) % 4 {
				case 0:
					es = c.Entries("memory/")
				case 1:
					if e, ok := c.Entry(fmt.Sprintf("memory/w%d-f", i%writers)); ok {
						es = []backend.Entry{e}
					}
				case 2:
					es, _ = c.Pending().Unflushed()
				case 3:
					es = c.Pending().Sealed()
				}
				if i%10 == 0 {
					held <- es
				}
			}
		})
	}
	// Snapshots of what readers were handed, compared once the writers
	// are done: a value must not have changed under its reader.
	type snapshot struct {
		e    backend.Entry
		copy []byte
	}
	var snaps []snapshot
	done := make(chan struct{})
	go func() {
		defer close(done)
		for es := range held {
			for _, e := range es {
				snaps = append(snaps, snapshot{e, bytes.Clone(e.Value)})
			}
		}
	}()
	wg.Wait()
	close(held)
	<-done
	for _, s := range snaps {
		if !bytes.Equal(s.e.Value, s.copy) {
			t.Fatalf("the value of %s handed to a reader changed under it: %q, was %q", s.e.Key, s.e.Value, s.copy)
		}
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}
