package eventlog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/meta"
)

// memSys is a memory store (backend/memstore) with fault injection and a
// count of LoadSys calls.
type memSys struct {
	st    *memstore.Store // the records; immutable
	loads atomic.Int64

	// mu serializes the operations, so that fail is never called
	// concurrently, and guards fail.
	mu sync.Mutex
	// fail, when set, is asked before each operation; an error it returns
	// is returned. If it returns errLanded, the save is done and an error
	// returned anyway (a save whose outcome the caller cannot know).
	fail func(op, name string) error
}

var errInjected = fmt.Errorf("injected failure")

// errLanded makes a SaveSys store the record and fail anyway.
var errLanded = fmt.Errorf("injected failure after the save landed")

func newMemSys() *memSys { return &memSys{st: memstore.New()} }

func (m *memSys) checkLocked(op, name string) error {
	if m.fail == nil {
		return nil
	}
	return m.fail(op, name)
}

func (m *memSys) SaveSys(ctx context.Context, name string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	err := m.checkLocked("save", name)
	if err != nil && err != errLanded {
		return err
	}
	if serr := m.st.SaveSys(ctx, name, data); serr != nil {
		return serr
	}
	return err
}

func (m *memSys) LoadSys(ctx context.Context, name string) ([]byte, error) {
	m.loads.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.checkLocked("load", name); err != nil {
		return nil, err
	}
	return m.st.LoadSys(ctx, name)
}

func (m *memSys) ListSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.checkLocked("list", prefix); err != nil {
		return nil, err
	}
	return m.st.ListSys(ctx, prefix)
}

func (m *memSys) DeleteSys(ctx context.Context, names ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range names {
		if err := m.checkLocked("delete", n); err != nil {
			return err
		}
	}
	return m.st.DeleteSys(ctx, names...)
}

// records returns every record by name, bypassing faults and the count.
func (m *memSys) records(t *testing.T) map[string][]byte {
	t.Helper()
	m.mu.Lock() // no operation through m runs meanwhile
	defer m.mu.Unlock()
	es, err := m.st.ListSys(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	recs := make(map[string][]byte, len(es))
	for _, e := range es {
		recs[e.Key] = m.get(t, e.Key)
	}
	return recs
}

// clone returns a copy of m's records, without m's faults.
func (m *memSys) clone(t *testing.T) *memSys {
	t.Helper()
	c := newMemSys()
	for name, d := range m.records(t) {
		c.put(t, name, d)
	}
	return c
}

// setFail installs f (nil to stop failing).
func (m *memSys) setFail(f func(op, name string) error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = f
}

// get returns the record name, bypassing faults and the count.
func (m *memSys) get(t *testing.T, name string) []byte {
	t.Helper()
	d, err := m.st.LoadSys(t.Context(), name)
	if err != nil {
		t.Fatalf("record %s: %v", name, err)
	}
	return d
}

// put stores a record, bypassing faults.
func (m *memSys) put(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := m.st.SaveSys(t.Context(), name, data); err != nil {
		t.Fatal(err)
	}
}

// remove deletes a record, bypassing faults.
func (m *memSys) remove(t *testing.T, name string) {
	t.Helper()
	if err := m.st.DeleteSys(t.Context(), name); err != nil {
		t.Fatal(err)
	}
}

// chunkNames lists the chunk records, in order.
func (m *memSys) chunkNames(t *testing.T) []string {
	t.Helper()
	es, err := m.ListSys(t.Context(), chunkPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Key)
	}
	return names
}

// noDelete hides memSys's DeleteSys.
type noDelete struct{ Sys }

// clock is a test clock: each call is 1 ms after the previous one.
type clock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

var epoch = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func newClock() *clock { return &clock{t: epoch} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// openLog opens a log on sys with a test clock.
func openLog(t testing.TB, sys Sys) *Log {
	t.Helper()
	return openLogAt(t, sys, newClock().now)
}

// openLogAt opens a log on sys with the clock now.
func openLogAt(t testing.TB, sys Sys, now func() time.Time) *Log {
	t.Helper()
	l, err := OpenOptions(context.Background(), sys, Options{Now: now})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

// ev is a small event; i picks the key, the op and the writer.
func ev(i int) Event {
	ops := []string{OpWrite, OpWrite, OpDelete, OpAttr, OpRename}
	e := Event{
		Op:      ops[i%len(ops)],
		Key:     fmt.Sprintf("%s/k%d", []string{"memory", "skills", "agents"}[i%3], i),
		Size:    int64(i % 1000),
		Writer:  meta.WriterInfo{UID: 1000, PID: uint32(i), Agent: "a"},
		Session: "s1",
	}
	if e.Op != OpDelete {
		e.SHA256 = strings.Repeat("ab", 32)
	}
	if e.Op == OpRename {
		e.OldKey = fmt.Sprintf("old/k%d", i)
	}
	return e
}

// evsAt returns n events numbered from first, the k-th at time at(k).
func evsAt(first, n int, at func(k int) time.Time) []Event {
	evs := make([]Event, n)
	for k := range evs {
		evs[k] = ev(first + k)
		if at != nil {
			evs[k].Time = at(first + k)
		}
	}
	return evs
}

func mustAppend(t testing.TB, l *Log, evs []Event) []Event {
	t.Helper()
	out, err := l.Append(context.Background(), evs)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return out
}

// stored reads the whole log straight from the store's chunks: the
// concatenated bytes and the parsed events.
func stored(t *testing.T, sys Sys) ([]byte, []Event) {
	t.Helper()
	ctx := t.Context()
	es, err := sys.ListSys(ctx, chunkPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, e := range es {
		if e.Info.Size == 0 {
			continue
		}
		d, err := sys.LoadSys(ctx, e.Key)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, d...)
	}
	var evs []Event
	for ln := range bytes.Lines(all) {
		var e Event
		if err := json.Unmarshal(ln, &e); err != nil {
			t.Fatalf("stored line %q: %v", ln, err)
		}
		evs = append(evs, e)
	}
	return all, evs
}

// checkChain checks the stored log independently of the package's code:
// seqs 1..n, each Prev the SHA-256 of the previous line, times
// non-decreasing, every chunk's name its first event's.
func checkChain(t *testing.T, sys Sys, n int) {
	t.Helper()
	all, evs := stored(t, sys)
	if len(evs) != n {
		t.Fatalf("got %d stored events, want %d", len(evs), n)
	}
	prev := ""
	var prevTime time.Time
	i := 0
	for ln := range bytes.Lines(all) {
		e := evs[i]
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d: got seq %d", i+1, e.Seq)
		}
		if e.Prev != prev {
			t.Fatalf("event %d: got prev %q, want %q", e.Seq, e.Prev, prev)
		}
		if e.Time.Before(prevTime) {
			t.Fatalf("event %d: time %v before %v", e.Seq, e.Time, prevTime)
		}
		sum := sha256.Sum256(bytes.TrimSuffix(ln, []byte("\n")))
		prev, prevTime = hex.EncodeToString(sum[:]), e.Time
		i++
	}
	es, err := sys.ListSys(t.Context(), chunkPrefix)
	if err != nil {
		t.Fatal(err)
	}
	seq := 1
	for _, e := range es {
		if e.Info.Size == 0 {
			continue
		}
		first := evs[seq-1]
		want := fmt.Sprintf("events/%012d-%s", first.Seq, first.Time.Format("20060102T150405.000000000Z"))
		if e.Key != want {
			t.Fatalf("chunk name %s, want %s", e.Key, want)
		}
		d, _ := sys.LoadSys(t.Context(), e.Key)
		lines := bytes.Count(d, []byte("\n"))
		if lines > ChunkEvents {
			t.Fatalf("chunk %s has %d lines", e.Key, lines)
		}
		seq += lines
	}
}

func mustVerifyOK(t *testing.T, sys Sys) Report {
	t.Helper()
	r, err := Verify(t.Context(), sys)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !r.OK {
		t.Fatalf("Verify: %s (seq %d)", r.Problem, r.Seq)
	}
	return r
}

// swapSys is memSys as a shared store (a backend.SysSwapper): a Log on it
// appends by SwapSys. Two Logs opened on one swapSys are two processes on
// one store. SwapSys asks fail with op "swap" and the guard's name: an
// errLanded swaps and fails anyway; errLater writes nothing and fails, and
// keeps the swap for applyLate (a request the store commits after the
// caller gave up on it).
type swapSys struct {
	backend.Store // List, Load, Save, Delete, Close of the memory store
	*memSys

	swaps atomic.Int64 // SwapSys calls
	lost  atomic.Int64 // of which the guard did not hold

	hookMu sync.Mutex // guards hook and late
	// hook, when set, runs at the start of each SwapSys, before the
	// swap takes the store's lock: a place to let another writer in.
	hook func()
	late []func() (bool, error)
}

var _ backend.SysSwapper = (*swapSys)(nil)

// errLater makes a SwapSys fail without writing, and keep the swap for
// applyLate.
var errLater = fmt.Errorf("injected failure; the swap may still be committed")

func newSwapSys() *swapSys {
	m := newMemSys()
	return &swapSys{Store: m.st, memSys: m}
}

func (s *swapSys) setHook(f func()) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	s.hook = f
}

func (s *swapSys) SwapSys(ctx context.Context, guard string, old []byte, puts map[string][]byte, dels []string) (bool, error) {
	s.swaps.Add(1)
	s.hookMu.Lock()
	hook := s.hook
	s.hookMu.Unlock()
	if hook != nil {
		hook()
	}
	s.mu.Lock()
	err := s.checkLocked("swap", guard)
	s.mu.Unlock()
	switch err {
	case nil, errLanded:
	case errLater:
		puts, dels, old = maps.Clone(puts), slices.Clone(dels), slices.Clone(old)
		s.hookMu.Lock()
		s.late = append(s.late, func() (bool, error) { return s.swap(ctx, guard, old, puts, dels) })
		s.hookMu.Unlock()
		return false, err
	default:
		return false, err
	}
	ok, serr := s.swap(ctx, guard, old, puts, dels)
	if serr != nil {
		return false, serr
	}
	return ok, err
}

// swap is SwapSys without faults.
func (s *swapSys) swap(ctx context.Context, guard string, old []byte, puts map[string][]byte, dels []string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := s.st.LoadSys(ctx, guard)
	switch {
	case errors.Is(err, backend.ErrKeyNotFound):
		cur = nil
	case err != nil:
		return false, err
	case cur == nil:
		cur = []byte{} // present, empty
	}
	if (cur == nil) != (old == nil) || !bytes.Equal(cur, old) {
		s.lost.Add(1)
		return false, nil
	}
	for name, data := range puts {
		if err := s.st.SaveSys(ctx, name, data); err != nil {
			return false, err
		}
	}
	if err := s.st.DeleteSys(ctx, dels...); err != nil {
		return false, err
	}
	return true, nil
}

// applyLate commits the swaps errLater kept, in order, and reports which
// held.
func (s *swapSys) applyLate(t *testing.T) []bool {
	t.Helper()
	s.hookMu.Lock()
	late := s.late
	s.late = nil
	s.hookMu.Unlock()
	var oks []bool
	for _, f := range late {
		ok, err := f()
		if err != nil {
			t.Fatal(err)
		}
		oks = append(oks, ok)
	}
	return oks
}
