package session_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/session"
)

// The shared-value rule (doc.go, Concurrency): a value handed out by a
// scan, a flush or a journal record never changes under its holder. These
// tests hand a value out, change the file by every path that writes into
// its buffer, and check the holder's bytes.

// memSession is a bootstrapped session over an empty memory store.
func memSession(t *testing.T, st backend.Store, opts session.Options) *session.Context {
	t.Helper()
	if st == nil {
		st = memstore.New()
	}
	c := session.NewContext(st, opts)
	if err := c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// helloBang writes "hello" then appends "!" to key through a new handle,
// which it returns: the buffer then has spare capacity past its 6 bytes.
func helloBang(t *testing.T, c *session.Context, key string) *session.File {
	t.Helper()
	h, err := c.Create(key, session.CreateOptions{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Append([]byte("!")); err != nil {
		t.Fatal(err)
	}
	return h
}

func readAll(t *testing.T, h *session.File) string {
	t.Helper()
	buf := make([]byte, h.Stat().Size)
	if n, err := h.ReadAt(buf, 0); n != len(buf) {
		t.Fatalf("ReadAt = %d, %v; want %d bytes", n, err, len(buf))
	}
	return string(buf)
}

// handOuts are the ways a caller is handed the value of key.
var handOuts = []struct {
	name string
	get  func(c *session.Context, key string) []byte
}{
	{"Entries", func(c *session.Context, key string) []byte { return c.Entries(key)[0].Value }},
	{"Entry", func(c *session.Context, key string) []byte { e, _ := c.Entry(key); return e.Value }},
	{"Get", func(c *session.Context, key string) []byte { v, _ := c.Get(key); return v }},
	{"Unflushed", func(c *session.Context, key string) []byte { es, _ := c.Pending().Unflushed(); return es[0].Value }},
	{"DirtyEntries", func(c *session.Context, key string) []byte { return c.Pending().Sealed()[0].Value }},
}

// A write that starts inside the value and ends past it (a WriteAt across
// the end; fallocate's ZERO_RANGE across the end is the same WriteAt of
// zeros) grew a shared buffer within its capacity and then wrote over
// bytes the holder sees: "hello!" became "helXXX" under it.
func TestSharedValueWriteAcrossEnd(t *testing.T) {
	for _, ho := range handOuts {
		for _, p := range []string{"XXXXXX", "\x00\x00\x00\x00\x00\x00"} {
			t.Run(fmt.Sprintf("%s/%q", ho.name, p), func(t *testing.T) {
				c := memSession(t, nil, session.Options{})
				h := helloBang(t, c, "notes.md")
				v := ho.get(c, "notes.md")
				if _, err := h.WriteAt([]byte(p), 3); err != nil {
					t.Fatal(err)
				}
				if string(v) != "hello!" {
					t.Errorf("the value handed out by %s changed under its holder: %q, was \"hello!\"", ho.name, v)
				}
				if got, want := readAll(t, h), "hel"+p; got != want {
					t.Errorf("file = %q, want %q", got, want)
				}
			})
		}
	}
}

// Writes that only add bytes past the end (an append, a write past a
// hole, a truncate that extends) may use the spare capacity of a shared
// buffer in place: its holders see only their own length. They must see
// it unchanged, and the file must read right.
func TestSharedValueGrowthPastTheEnd(t *testing.T) {
	steps := []struct {
		name string
		do   func(h *session.File) error
		want string
	}{
		{"append", func(h *session.File) error { _, err := h.Append([]byte("ab")); return err }, "hello!ab"},
		{"hole", func(h *session.File) error { _, err := h.WriteAt([]byte("z"), 8); return err }, "hello!\x00\x00z"},
		{"extend", func(h *session.File) error { return h.Truncate(9) }, "hello!\x00\x00\x00"},
	}
	for _, ho := range handOuts {
		for _, s := range steps {
			t.Run(ho.name+"/"+s.name, func(t *testing.T) {
				c := memSession(t, nil, session.Options{})
				h := helloBang(t, c, "notes.md")
				v := ho.get(c, "notes.md")
				if err := s.do(h); err != nil {
					t.Fatal(err)
				}
				// A second holder, then a write over everything.
				v2 := ho.get(c, "notes.md")
				if _, err := h.WriteAt(bytes.Repeat([]byte("#"), 12), 0); err != nil {
					t.Fatal(err)
				}
				if string(v) != "hello!" || string(v2) != s.want {
					t.Errorf("values handed out by %s changed: %q, %q; want \"hello!\", %q", ho.name, v, v2, s.want)
				}
			})
		}
	}
}

// Truncating then extending: the bytes cut off must come back as zeros,
// and a holder of the longer or the shorter value must not see the
// change, whether the buffer was shared at the truncate or only after.
func TestSharedValueTruncateThenExtend(t *testing.T) {
	for _, ho := range handOuts {
		t.Run(ho.name, func(t *testing.T) {
			c := memSession(t, nil, session.Options{})
			h := helloBang(t, c, "notes.md")
			long := ho.get(c, "notes.md")
			if err := h.Truncate(2); err != nil { // shared: copies
				t.Fatal(err)
			}
			if err := h.Truncate(1); err != nil { // no longer shared: in place
				t.Fatal(err)
			}
			short := ho.get(c, "notes.md")
			if err := h.Truncate(6); err != nil {
				t.Fatal(err)
			}
			if _, err := h.WriteAt([]byte("XY"), 0); err != nil {
				t.Fatal(err)
			}
			if string(long) != "hello!" || string(short) != "h" {
				t.Errorf("values handed out by %s changed: %q, %q; want \"hello!\", \"h\"", ho.name, long, short)
			}
			if got, want := readAll(t, h), "XY\x00\x00\x00\x00"; got != want {
				t.Errorf("file = %q, want %q", got, want)
			}
		})
	}
}

// A write during a flush's save changed the bytes the store was being
// given: it got a torn value and, when redaction found nothing in what
// Flush sealed (the store gets the same slice), a secret written over it
// during the save, unredacted.
func TestSharedValueFlushInFlight(t *testing.T) {
	var h *session.File
	var once sync.Once
	st := errorstore.Wrap(memstore.New(), func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpApply || op == errorstore.OpSave {
			once.Do(func() {
				if _, err := h.WriteAt([]byte("SECRET"), 3); err != nil {
					t.Error(err)
				}
			})
		}
		return nil
	})
	c := memSession(t, st, session.Options{Redactor: wordRedactor(t, "SECRET")})
	h = helloBang(t, c, "notes.md")
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, _ := storedValue(t, st, "notes.md"); v != "hello!" {
		t.Errorf("store = %q, want \"hello!\", the value the flush sealed", v)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, _ := storedValue(t, st, "notes.md"); v != "hel[REDACTED:word]" {
		t.Errorf("store = %q after the next flush, want \"hel[REDACTED:word]\"", v)
	}
}

// hookJournal is a Journal that runs hook (once) when a record arrives,
// then keeps the record, values as given.
type hookJournal struct {
	mu   sync.Mutex
	hook func()
	recs []journal.Record
}

func (j *hookJournal) Append(r journal.Record) error {
	j.mu.Lock()
	hook := j.hook
	j.hook = nil
	j.mu.Unlock()
	if hook != nil {
		hook()
	}
	j.mu.Lock()
	j.recs = append(j.recs, r)
	j.mu.Unlock()
	return nil
}

func (j *hookJournal) Truncate(uint64) error { return nil }

// Commit records the value in the journal outside the lock: a write
// while the record is written must not change it.
func TestSharedValueCommitRecord(t *testing.T) {
	j := &hookJournal{}
	c := memSession(t, nil, session.Options{Journal: j})
	h := helloBang(t, c, "notes.md")
	j.hook = func() {
		if _, err := h.WriteAt([]byte("XXXXXX"), 3); err != nil {
			t.Error(err)
		}
	}
	if err := h.Commit(); err != nil {
		t.Fatal(err)
	}
	if len(j.recs) != 1 || len(j.recs[0].Entries) != 1 {
		t.Fatalf("journal got %+v, want one record of one entry", j.recs)
	}
	if v := j.recs[0].Entries[0].Value; string(v) != "hello!" {
		t.Errorf("the journal record = %q, want \"hello!\"", v)
	}
}

// A holder may append to a value it was handed (Get and Entries say so:
// an append copies). DirtyEntries and the entries given to Options.Saved
// handed out the session's buffer with its spare capacity: the holder's
// append wrote into it, and the session's next append wrote over the
// holder's bytes.
func TestSharedValueHolderAppends(t *testing.T) {
	t.Run("DirtyEntries", func(t *testing.T) {
		c := memSession(t, nil, session.Options{})
		h := helloBang(t, c, "notes.md")
		mine := append(c.Pending().Sealed()[0].Value, "ZZZ"...)
		if _, err := h.Append([]byte("abc")); err != nil {
			t.Fatal(err)
		}
		if string(mine) != "hello!ZZZ" {
			t.Errorf("the holder's append = %q, want \"hello!ZZZ\"", mine)
		}
		if got := readAll(t, h); got != "hello!abc" {
			t.Errorf("file = %q, want \"hello!abc\"", got)
		}
	})
	t.Run("Saved", func(t *testing.T) {
		var mine []byte
		c := memSession(t, nil, session.Options{Saved: func(_ context.Context, saved []backend.Entry, _ []string) {
			for _, e := range saved {
				if e.Key == "notes.md" {
					mine = append(e.Value, "ZZZ"...)
				}
			}
		}})
		h := helloBang(t, c, "notes.md")
		if err := c.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Append([]byte("abc")); err != nil {
			t.Fatal(err)
		}
		if string(mine) != "hello!ZZZ" {
			t.Errorf("the holder's append = %q, want \"hello!ZZZ\"", mine)
		}
		if got := readAll(t, h); got != "hello!abc" {
			t.Errorf("file = %q, want \"hello!abc\"", got)
		}
	})
}

// maxHeld bounds the memory of a stress test's holdings.
const maxHeld = 50000

// heldValue is a value as it was when it was handed out.
type heldValue struct {
	how, key string
	v, was   []byte
}

// holdings collects handed-out values, snapshotting each as it arrives.
type holdings struct {
	mu   sync.Mutex
	held []heldValue
}

func (s *holdings) add(how string, es []backend.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range es {
		was := bytes.Clone(e.Value) // read even when not kept: -race sees the read
		if e.Value != nil && len(s.held) < maxHeld {
			s.held = append(s.held, heldValue{how, e.Key, e.Value, was})
		}
	}
}

func (s *holdings) check(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	bad := 0
	for _, h := range s.held {
		if !bytes.Equal(h.v, h.was) {
			if bad++; bad <= 5 {
				t.Errorf("the value of %s handed out by %s changed: %q, was %q", h.key, h.how, h.v, h.was)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d values handed out changed under their holders", bad, len(s.held))
	}
}

// Writers doing overlapping writes, writes across the end, appends and
// truncates, beside scans (Entries, Unflushed, DirtyEntries, Get),
// flushes and journal records: under -race a writer that changes bytes a
// holder was handed is a race, and every value handed out is compared at
// the end with a copy taken when it was handed out.
func TestSharedValueStress(t *testing.T) {
	held := &holdings{}
	j := &recordingJournal{held: held}
	c := memSession(t, nil, session.Options{
		Journal: j,
		Saved:   func(_ context.Context, saved []backend.Entry, _ []string) { held.add("Saved", saved) },
	})
	const writers, files, ops = 4, 3, 400
	var stop atomic.Bool
	var wg, readers sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			key := fmt.Sprintf("f%d.md", w%files)
			h, err := c.Create(key, session.CreateOptions{Mode: 0o644})
			if err != nil {
				t.Error(err)
				return
			}
			defer h.Close()
			for i := range ops {
				size := h.Stat().Size
				p := []byte(strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(24)))
				op := rng.IntN(6)
				if size > 512 {
					op = 4 // keep values small: the holdings copy each one
				}
				switch op {
				case 0, 1: // overlapping, often across the end
					off := max(0, size-int64(rng.IntN(16)))
					_, err = h.WriteAt(p, off)
				case 2:
					_, err = h.Append(p)
				case 3: // inside
					_, err = h.WriteAt(p, rng.Int64N(size+1))
				case 4: // shrink or extend
					n := size + int64(rng.IntN(32)-20)
					if size > 512 {
						n = int64(rng.IntN(64))
					}
					err = h.Truncate(max(0, n))
				case 5:
					err = h.Commit()
				}
				if err != nil {
					t.Error(err)
					return
				}
				if i%50 == 49 {
					if err := c.Flush(t.Context()); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	for r := range 3 {
		readers.Go(func() {
			for i := 0; !stop.Load(); i++ {
				switch (r + i) % 4 {
				case 0:
					held.add("Entries", c.Entries(""))
				case 1:
					es, _ := c.Pending().Unflushed()
					held.add("Unflushed", es)
				case 2:
					held.add("DirtyEntries", c.Pending().Sealed())
				case 3:
					key := fmt.Sprintf("f%d.md", i%files)
					if v, ok := c.Get(key); ok {
						held.add("Get", []backend.Entry{{Key: key, Value: v}})
					}
				}
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	readers.Wait()
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	held.check(t)
}

// recordingJournal keeps nothing but hands every record's values to held.
type recordingJournal struct{ held *holdings }

func (j *recordingJournal) Append(r journal.Record) error {
	j.held.add("journal", r.Entries)
	return nil
}

func (j *recordingJournal) Truncate(uint64) error { return nil }
