package session_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/session"
)

// The crash-and-replay model test: random operations through the session's
// file API (writes at offsets, appends that split a secret, truncates,
// renames, deletes, chmod, utimes, setxattr, mkdir, flushes), a crash at a
// random point (the Context dropped without a flush, sometimes right after
// a flush saved to the store but before it truncated the journal), then the
// journal replayed into a new Context over the same store. Every change
// that was complete before the crash (a closed file, a finished metadata
// call) must be there, redacted as a flush would have stored it, and no
// secret may be in the journal or the store. A map is the model.
//
// MEMFS_MODEL_ROUNDS sets the number of rounds (default 200), and
// MEMFS_MODEL_SEED the first seed (default: from the clock, printed).

// modelSecret is what the test's redactor redacts; appends split it.
const modelSecret = "hunter2-Zq9Xw3Lm7P"

type modelFile struct {
	data   []byte
	mode   fs.FileMode
	mtime  time.Time // zero: not set by the test
	xattrs map[string]string
}

func (m *modelFile) clone() *modelFile {
	c := *m
	c.data = slices.Clone(m.data)
	c.xattrs = make(map[string]string, len(m.xattrs))
	for k, v := range m.xattrs {
		c.xattrs[k] = v
	}
	return &c
}

// crashJournal is the session's journal with a crash point: once armed,
// a Truncate does nothing and reports success, as if the process died
// right after the flush saved to the store.
type crashJournal struct {
	*journal.Journal
	skipTruncate bool
}

func (j *crashJournal) Truncate(through uint64) error {
	if j.skipTruncate {
		return nil
	}
	return j.Journal.Truncate(through)
}

func TestCrashReplayModel(t *testing.T) {
	rounds := 200
	if v := os.Getenv("MEMFS_MODEL_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("MEMFS_MODEL_ROUNDS=%q: %v", v, err)
		}
		rounds = n
	}
	base := uint64(time.Now().UnixNano())
	if v := os.Getenv("MEMFS_MODEL_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("MEMFS_MODEL_SEED=%q: %v", v, err)
		}
		base = n
	}
	t.Logf("seeds %d..%d (rerun one with MEMFS_MODEL_SEED=N MEMFS_MODEL_ROUNDS=1)", base, base+uint64(rounds)-1)
	red := wordRedactor(t, modelSecret)
	for i := range rounds {
		seed := base + uint64(i)
		kind := "dir"
		if i%10 == 9 {
			kind = "badger"
		}
		if !t.Run(fmt.Sprintf("seed=%d/%s", seed, kind), func(t *testing.T) { modelRound(t, seed, kind, red) }) {
			t.Fatalf("seed %d failed: rerun with MEMFS_MODEL_SEED=%d MEMFS_MODEL_ROUNDS=1", seed, seed)
		}
	}
}

func openModelStore(t *testing.T, kind, dir string) backend.Store {
	t.Helper()
	var st backend.Store
	var err error
	if kind == "badger" {
		st, err = badgerstore.Open(dir, badgerstore.Options{})
	} else {
		st, err = dirstore.Open(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// modelNames are the keys the model test's operations pick from.
var modelNames = []string{"a.md", "b.md", "d/c.md", "d/e/f.md", "g.txt"}

// modelRun is one round of the model test: the session, the model and
// the steps taken.
type modelRun struct {
	t     *testing.T
	rng   *rand.Rand
	c     *session.Context
	cj    *crashJournal
	model map[string]*modelFile
	steps []string
}

func modelRound(t *testing.T, seed uint64, kind string, red *redact.Redactor) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	dir := t.TempDir()
	jpath := filepath.Join(t.TempDir(), "journal")
	st := openModelStore(t, kind, dir)
	j, _, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	cj := &crashJournal{Journal: j}
	c := session.NewContext(st, session.Options{Journal: cj, Redactor: red})
	if err := c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	r := &modelRun{t: t, rng: rng, c: c, cj: cj, model: map[string]*modelFile{}}
	defer func() {
		if t.Failed() {
			t.Logf("seed %d, %s store, steps:\n%s", seed, kind, joinLines(r.steps))
		}
	}()
	nops := 5 + rng.IntN(40)
	for range nops {
		if r.step() {
			break // crashed in a flush
		}
	}
	r.logf("crash")
	// The crash: no flush, no journal reset; the files stay as they are.
	cj.Close()
	st.Close()

	st2 := openModelStore(t, kind, dir)
	defer st2.Close()
	j2, recs, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if d := j2.Damaged(); len(d) > 0 {
		t.Fatalf("the journal is damaged after a clean crash: %+v", d)
	}
	c2 := session.NewContext(st2, session.Options{Journal: j2, Redactor: red})
	if err := c2.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c2.Pending().Replay(recs); err != nil {
		t.Fatalf("replay: %v", err)
	}
	get := func(key string) ([]byte, bool) {
		if err := c2.Resolve(ctx, key); err != nil {
			return nil, false
		}
		return c2.Get(key)
	}
	r.check(red, "after the replay", get, c2.Stat, func(k string) ([]byte, error) { return c2.XAttrs().Get(k, "user.note") })
	if err := c2.Flush(ctx); err != nil {
		t.Fatalf("flush after the replay: %v", err)
	}
	r.checkStore(red, st2)
	// No whole secret in the journal or the store, whatever was replayed.
	// (Pieces are no secret by themselves: an append may leave half of one
	// for good. That a piece written before its completion leaves no trace
	// is TestJournalAppendsNeverHoldAPartialSecret's and cmd/memfs's
	// split-append test's to check.)
	noModelSecretIn(t, dir, filepath.Dir(jpath))
}

func (r *modelRun) pick() string { return modelNames[r.rng.IntN(len(modelNames))] }

func (r *modelRun) existing() (string, bool) {
	var ks []string
	for k := range r.model {
		ks = append(ks, k)
	}
	if len(ks) == 0 {
		return "", false
	}
	slices.Sort(ks)
	return ks[r.rng.IntN(len(ks))], true
}

func (r *modelRun) text() []byte {
	var b []byte
	for range 1 + r.rng.IntN(4) {
		switch r.rng.IntN(4) {
		case 0:
			b = append(b, modelSecret...)
		case 1:
			b = append(b, '\n')
		default:
			b = fmt.Appendf(b, "w%d ", r.rng.IntN(1000))
		}
	}
	return b
}

func (r *modelRun) logf(format string, args ...any) {
	r.steps = append(r.steps, fmt.Sprintf(format, args...))
}

func (r *modelRun) mkParents(key string) {
	var dirs []string
	for d := filepath.Dir(key); d != "."; d = filepath.Dir(d) {
		dirs = append(dirs, d)
	}
	for _, d := range slices.Backward(dirs) {
		r.c.Mkdir(d, 0o755, 0, 0) // exists already: fine
	}
}

// write opens key (creating it), applies fn to the handle and the
// model's bytes, and closes it.
func (r *modelRun) write(key string, trunc bool, fn func(h *session.File, m *modelFile)) {
	t := r.t
	r.mkParents(key)
	h, err := r.c.Create(key, session.CreateOptions{Mode: 0o644, Truncate: trunc})
	if err != nil {
		t.Fatalf("create %s: %v", key, err)
	}
	m := r.model[key]
	if m == nil {
		m = &modelFile{mode: 0o644, xattrs: map[string]string{}}
	} else {
		m = m.clone()
	}
	if trunc {
		m.data = nil
	}
	fn(h, m)
	m.mtime = time.Time{} // a write sets it to now
	if err := h.Close(); err != nil {
		t.Fatalf("close %s: %v", key, err)
	}
	r.model[key] = m
}

// step takes one random operation, and reports whether it was a flush
// that crashed after the save, before the truncate.
func (r *modelRun) step() (crashed bool) {
	switch op := r.rng.IntN(13); op {
	case 0, 1: // write a whole new value
		r.writeWhole()
	case 2, 3, 4: // append, as echo >> does: often half a secret
		r.appendText()
	case 5: // pwrite inside an existing value
		r.pwrite()
	case 6: // truncate
		r.truncate()
	case 7: // rename, over an existing file or not
		r.rename()
	case 8: // delete
		r.delete()
	case 9: // chmod, and now and then utimes to the past
		r.setattr()
	case 10: // setxattr, sometimes with the secret in its value
		r.setxattr()
	case 11: // flush
		r.logf("flush")
		if err := r.c.Flush(r.t.Context()); err != nil {
			r.t.Fatalf("flush: %v", err)
		}
	case 12: // flush that crashes after the save, before the truncate
		r.logf("flush, crash before the journal truncate")
		r.cj.skipTruncate = true
		if err := r.c.Flush(r.t.Context()); err != nil {
			r.t.Fatalf("flush: %v", err)
		}
		return true
	}
	return false
}

func (r *modelRun) writeWhole() {
	key, v := r.pick(), r.text()
	r.logf("write %s %q", key, v)
	r.write(key, true, func(h *session.File, m *modelFile) {
		if _, err := h.WriteAt(v, 0); err != nil {
			r.t.Fatal(err)
		}
		m.data = v
	})
}

func (r *modelRun) appendText() {
	key := r.pick()
	v := r.text()
	if r.rng.IntN(2) == 0 {
		cut := 1 + r.rng.IntN(len(modelSecret)-1)
		if r.rng.IntN(2) == 0 {
			v = []byte(modelSecret[:cut])
		} else {
			v = []byte(modelSecret[cut:] + " tail\n")
		}
	}
	r.logf("append %s %q", key, v)
	r.write(key, false, func(h *session.File, m *modelFile) {
		if _, err := h.Append(v); err != nil {
			r.t.Fatal(err)
		}
		m.data = append(m.data, v...)
	})
}

func (r *modelRun) pwrite() {
	key, ok := r.existing()
	if !ok {
		return
	}
	off := r.rng.IntN(len(r.model[key].data) + 1)
	v := r.text()
	r.logf("pwrite %s @%d %q", key, off, v)
	r.write(key, false, func(h *session.File, m *modelFile) {
		if _, err := h.WriteAt(v, int64(off)); err != nil {
			r.t.Fatal(err)
		}
		if end := off + len(v); end > len(m.data) {
			m.data = append(m.data, make([]byte, end-len(m.data))...)
		}
		copy(m.data[off:], v)
	})
}

func (r *modelRun) truncate() {
	key, ok := r.existing()
	if !ok {
		return
	}
	n := r.rng.IntN(len(r.model[key].data) + 3)
	r.logf("truncate %s %d", key, n)
	r.write(key, false, func(h *session.File, m *modelFile) {
		if err := h.Truncate(int64(n)); err != nil {
			r.t.Fatal(err)
		}
		if n <= len(m.data) {
			m.data = m.data[:n]
		} else {
			m.data = append(m.data, make([]byte, n-len(m.data))...)
		}
	})
}

func (r *modelRun) rename() {
	from, ok := r.existing()
	if !ok {
		return
	}
	to := r.pick()
	if to == from {
		return
	}
	r.logf("rename %s %s", from, to)
	r.mkParents(to)
	if err := r.c.Rename(r.t.Context(), from, to, 0); err != nil {
		r.t.Fatalf("rename %s %s: %v", from, to, err)
	}
	r.model[to] = r.model[from]
	delete(r.model, from)
}

func (r *modelRun) delete() {
	key, ok := r.existing()
	if !ok {
		return
	}
	r.logf("delete %s", key)
	if err := r.c.Delete(key); err != nil {
		r.t.Fatalf("delete %s: %v", key, err)
	}
	delete(r.model, key)
}

func (r *modelRun) setattr() {
	key, ok := r.existing()
	if !ok {
		return
	}
	mode := []fs.FileMode{0o600, 0o640, 0o644, 0o755}[r.rng.IntN(4)]
	a := session.Attr{Mode: &mode}
	m := r.model[key].clone()
	m.mode = mode
	if r.rng.IntN(2) == 0 {
		mt := time.Date(2001, 1, 1, 0, 0, r.rng.IntN(60), 0, time.UTC)
		a.MTime = &mt
		m.mtime = mt
	}
	r.logf("setattr %s mode %o mtime %v", key, mode, m.mtime)
	if _, err := r.c.SetAttr(r.t.Context(), key, a); err != nil {
		r.t.Fatalf("setattr %s: %v", key, err)
	}
	r.model[key] = m
}

func (r *modelRun) setxattr() {
	key, ok := r.existing()
	if !ok {
		return
	}
	v := fmt.Sprintf("note %d", r.rng.IntN(100))
	if r.rng.IntN(3) == 0 {
		v = "x " + modelSecret
	}
	r.logf("setxattr %s user.note %q", key, v)
	if err := r.c.XAttrs().Set(r.t.Context(), key, "user.note", []byte(v), 0); err != nil {
		r.t.Fatalf("setxattr %s: %v", key, err)
	}
	m := r.model[key].clone()
	m.xattrs["user.note"] = v
	r.model[key] = m
}

// check compares what get, stat and xattr show with the model, redacted.
func (r *modelRun) check(red *redact.Redactor, when string, get func(key string) ([]byte, bool), stat func(key string) (session.Stat, error), xattr func(key string) ([]byte, error)) {
	t := r.t
	t.Helper()
	for key, m := range r.model {
		want, _ := red.Redact(key, m.data)
		if redact.IsBinary(m.data) {
			want, _ = red.Mask(key, m.data) // a NUL from a truncate that extends
		}
		got, ok := get(key)
		if !ok {
			t.Fatalf("%s: %s is gone, want %q", when, key, want)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: %s = %q, want %q", when, key, got, want)
		}
		s, err := stat(key)
		if err != nil {
			t.Fatalf("%s: stat %s: %v", when, key, err)
		}
		if s.Mode.Perm() != m.mode.Perm() {
			t.Fatalf("%s: %s mode %o, want %o", when, key, s.Mode.Perm(), m.mode.Perm())
		}
		if !m.mtime.IsZero() && !s.MTime.Equal(m.mtime) {
			t.Fatalf("%s: %s mtime %v, want %v", when, key, s.MTime, m.mtime)
		}
		if v, ok := m.xattrs["user.note"]; ok {
			wantX, _ := red.Redact(key, []byte(v))
			gotX, err := xattr(key)
			if err != nil || !bytes.Equal(gotX, wantX) {
				t.Fatalf("%s: %s user.note = %q (%v), want %q", when, key, gotX, err, wantX)
			}
		}
	}
	for _, key := range modelNames {
		if _, ok := r.model[key]; ok {
			continue
		}
		if v, ok := get(key); ok {
			t.Fatalf("%s: %s is back (%q), it was removed or never closed", when, key, v)
		}
	}
}

// checkStore checks the store after the replay's flush against the
// model, and that it holds no conflict copy.
func (r *modelRun) checkStore(red *redact.Redactor, st backend.Store) {
	t := r.t
	ctx := t.Context()
	load := func(key string) (backend.Entry, bool) {
		es, err := st.Load(ctx, key)
		if err != nil || len(es) == 0 {
			return backend.Entry{}, false
		}
		return es[0], true
	}
	r.check(red, "in the store after the replay's flush",
		func(k string) ([]byte, bool) { e, ok := load(k); return e.Value, ok },
		func(k string) (session.Stat, error) {
			e, ok := load(k)
			if !ok {
				return session.Stat{}, fs.ErrNotExist
			}
			return session.Stat{Mode: e.Info.Mode, MTime: e.Info.MTime}, nil
		},
		func(k string) ([]byte, error) {
			e, ok := load(k)
			if !ok {
				return nil, fs.ErrNotExist
			}
			return e.Info.XAttrs["user.note"], nil
		})
	// With no other writer, no save may have found a version it did not
	// expect (a conflict copy here is a session that lost track of its own
	// store's versions).
	listed, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range listed {
		if strings.Contains(e.Key, ".conflict-") {
			t.Fatalf("a conflict copy with no other writer: %s", e.Key)
		}
	}
}

// noModelSecretIn fails t if a file under dirs holds the whole secret.
func noModelSecretIn(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
			if err != nil || !de.Type().IsRegular() {
				return nil
			}
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(modelSecret)) {
				t.Errorf("%s holds the secret", p)
			}
			return nil
		})
	}
}

func joinLines(s []string) string {
	var b bytes.Buffer
	for _, l := range s {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// failingTruncate is a journal whose Truncate fails.
type failingTruncate struct{ *journal.Journal }

func (failingTruncate) Truncate(uint64) error { return fs.ErrPermission }

// A flush whose journal truncate fails is not a success: the journal still
// holds older records that a replay would put back over what the flush
// saved.
func TestFlushFailsWhenTheJournalCannotBeTruncated(t *testing.T) {
	st := openStore(t, t.TempDir())
	j, _, err := journal.Open(filepath.Join(t.TempDir(), "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	c := session.NewContext(st, session.Options{Journal: failingTruncate{j}})
	if err := c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("a.md", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err == nil {
		t.Fatal("Flush returned nil although the journal could not be truncated")
	}
}
