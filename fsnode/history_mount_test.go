package fsnode_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/internal/syncbuf"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/session"
)

// testHistory is what the engine gives a mount (fsnode.History) over a
// store whose history the test writes with the history package's own API,
// one version per seq: the flush does not write versions here.
type testHistory struct {
	*history.Store
	t testing.TB

	mu      sync.Mutex       // guards c, head and keys (c is read by the mount's goroutines)
	c       *session.Context // set once mounted: TakeSnapshot flushes it
	head    uint64
	keys    map[string]bool
	changes atomic.Uint64 // moves after each version record() writes
}

func newTestHistory(t testing.TB, sys backend.SysStore) *testHistory {
	return &testHistory{Store: history.New(sys), t: t, keys: map[string]bool{}}
}

func (h *testHistory) Head(context.Context) (uint64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.head, nil
}

func (h *testHistory) Changes() uint64 { return h.changes.Load() }

func (h *testHistory) TakeSnapshot(ctx context.Context, name, by string) error {
	h.mu.Lock()
	c := h.c
	h.mu.Unlock()
	if err := c.Flush(ctx); err != nil {
		return err
	}
	head, _ := h.Head(ctx)
	return h.Snapshot(ctx, name, head, by)
}

func (h *testHistory) Names(_ context.Context, dir string) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for k := range h.keys {
		for ; k != ""; k, _ = backend.Split(k) {
			if d, name := backend.Split(k); d == dir {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// record writes the version of op on e at the next seq and returns it.
func (h *testHistory) record(op string, e backend.Entry) uint64 {
	h.t.Helper()
	ctx := h.t.Context()
	var a history.Addr
	if op != history.OpDelete && e.Value != nil {
		var err error
		if a, _, err = h.Put(ctx, e.Value); err != nil {
			h.t.Fatal(err)
		}
	}
	h.mu.Lock()
	h.head++
	seq := h.head
	h.keys[e.Key] = true
	h.mu.Unlock()
	v := history.NewVersion(seq, op, &e, a)
	recs, err := h.PlanVersions([]history.Version{v})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.Write(ctx, recs); err != nil {
		h.t.Fatal(err)
	}
	h.changes.Add(1)
	return seq
}

var t0 = time.Unix(1700000000, 0)

func file(key, value string, mode fs.FileMode, uid uint32, at int) backend.Entry {
	return backend.Entry{Key: key, Value: []byte(value), Info: backend.Info{Mode: mode, UID: uid, GID: uid,
		MTime: t0.Add(time.Duration(at) * time.Minute)}}
}

func dirEntry(key string, mode fs.FileMode, uid uint32) backend.Entry {
	return backend.Entry{Key: key, Info: backend.Info{Mode: fs.ModeDir | mode, UID: uid, GID: uid, MTime: t0}}
}

// histScene is a store with a history: every node type, a delete, a
// chmod, hard links, xattrs; seqs names what happened when.
type histScene struct {
	m    *mounted
	st   backend.SysStore
	h    *testHistory
	seqs map[string]uint64
	// the bytes of each version of memory/a.md, by seq
	a map[uint64]string
}

// mountHistory writes the scene's history and present into a dir store
// and mounts it with the view.
func mountHistory(t *testing.T, fopts fsnode.Options, mopts fsnode.MountOptions) *histScene {
	t.Helper()
	st := newDirStore(t, t.TempDir())
	h := newTestHistory(t, st)
	s := &histScene{st: st, h: h, seqs: map[string]uint64{}, a: map[uint64]string{}}
	uid := uint32(os.Getuid())
	tags := func(e backend.Entry, v string) backend.Entry {
		e.Info.XAttrs = map[string][]byte{meta.Prefix + "tags": []byte(v)}
		return e
	}
	s.seqs["dir"] = h.record(history.OpWrite, dirEntry("memory", 0o755, uid))
	for i, v := range []string{"first\n", "second, longer\n", "third\n"} {
		seq := h.record(history.OpWrite, file("memory/a.md", v, 0o644, uid, i))
		s.a[seq] = v
		s.seqs["a"+string(rune('1'+i))] = seq
	}
	s.seqs["chmod"] = h.record(history.OpAttr, tags(file("memory/a.md", "third\n", 0o640, uid, 3), "t1"))
	s.seqs["link"] = h.record(history.OpWrite, backend.Entry{Key: "memory/ln", Value: []byte("a.md"),
		Info: backend.Info{Mode: fs.ModeSymlink | 0o777, UID: uid, GID: uid, MTime: t0}})
	hard := file("memory/h1", "one node, two names\n", 0o644, uid, 4)
	hard.Info.Link = "g1"
	h.record(history.OpWrite, hard)
	hard.Key = "memory/h2"
	h.record(history.OpWrite, hard)
	s.seqs["fifo"] = h.record(history.OpWrite, backend.Entry{Key: "special/fifo", Info: backend.Info{Mode: fs.ModeNamedPipe | 0o644, UID: uid, GID: uid, MTime: t0}})
	s.seqs["gone"] = h.record(history.OpWrite, file("memory/gone.md", "deleted later\n", 0o644, uid, 5))
	s.seqs["snap"] = h.head
	s.seqs["del"] = h.record(history.OpDelete, backend.Entry{Key: "memory/gone.md"})

	// The present: as the last versions left it.
	present := []backend.Entry{dirEntry("memory", 0o755, uid), tags(file("memory/a.md", "third\n", 0o640, uid, 3), "t1"),
		{Key: "memory/ln", Value: []byte("a.md"), Info: backend.Info{Mode: fs.ModeSymlink | 0o777, UID: uid, GID: uid, MTime: t0}}}
	if err := st.Save(t.Context(), present...); err != nil {
		t.Fatal(err)
	}
	fopts.History = h
	s.m = mount(t, st, mountConfig{fopts: fopts, mopts: mopts})
	h.mu.Lock()
	h.c = s.m.c
	h.mu.Unlock()
	return s
}

func (s *histScene) path(p string) string { return filepath.Join(s.m.dir, ".memfs", p) }

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func ver(seq uint64) string { return padSeq(seq) }

func padSeq(seq uint64) string {
	s := []byte("00000000")
	for i := len(s) - 1; seq > 0; i-- {
		s[i] = byte('0' + seq%10)
		seq /= 10
	}
	return string(s)
}

// .memfs/history/KEY/: a version per file per change, named in seq order,
// each with its bytes, size, mode and mtime; log; a deleted key's
// versions; a bare seq finds its version.
func TestMountHistoryVersions(t *testing.T) {
	s := mountHistory(t, fsnode.Options{}, fsnode.MountOptions{})
	dir := s.path("history/memory/a.md")
	want := []string{ver(s.seqs["a1"]), ver(s.seqs["a2"]), ver(s.seqs["a3"]), ver(s.seqs["chmod"]), "log"}
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Fatalf("ls %s = %v, want %v", dir, got, want)
	}
	for seq, v := range s.a {
		p := filepath.Join(dir, ver(seq))
		if got := readFile(t, p); got != v {
			t.Errorf("cat %s = %q, want %q", p, got, v)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() != int64(len(v)) || fi.Mode() != 0o644 || !fi.ModTime().Equal(t0.Add(time.Duration(seq-s.seqs["a1"])*time.Minute)) {
			t.Errorf("stat %s: size %d mode %v mtime %v", p, fi.Size(), fi.Mode(), fi.ModTime())
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, ver(s.seqs["chmod"]))); err != nil || fi.Mode() != 0o640 {
		t.Errorf("the chmod's version: %v, %v; want mode 0640", fi, err)
	}
	if got := readFile(t, filepath.Join(dir, "3")); got != s.a[3] {
		t.Errorf("cat of a bare seq: %q, want %q", got, s.a[3])
	}
	buf := make([]byte, 64)
	n, err := unix.Getxattr(filepath.Join(dir, ver(s.seqs["chmod"])), meta.Prefix+"tags", buf)
	if err != nil || string(buf[:n]) != "t1" {
		t.Errorf("getxattr of the chmod's version: %q, %v", buf[:n], err)
	}
	log := readFile(t, filepath.Join(dir, "log"))
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], ver(s.seqs["a1"])+" 2023-11-14T22:13:20Z write 6 ") ||
		!strings.Contains(lines[3], " attr 6 ") {
		t.Errorf("log:\n%s", log)
	}
	// A deleted key: listed under its directory, its versions kept.
	if got := names(t, s.path("history/memory")); !slices.Contains(got, "gone.md") || !slices.Contains(got, "a.md") {
		t.Errorf("ls .memfs/history/memory = %v, want gone.md and a.md among them", got)
	}
	if got := readFile(t, s.path("history/memory/gone.md/"+ver(s.seqs["gone"]))); got != "deleted later\n" {
		t.Errorf("a deleted key's version: %q", got)
	}
	if got, err := os.Readlink(s.path("history/memory/ln/" + ver(s.seqs["link"]))); err != nil || got != "a.md" {
		t.Errorf("readlink of a symlink's version: %q, %v", got, err)
	}
	if st := readFile(t, filepath.Join(s.m.dir, ".memfs/status")); !strings.Contains(st, "history/KEY/") {
		t.Errorf(".memfs/status does not name the unlisted history/:\n%s", st)
	}
	// Read-only.
	if err := os.WriteFile(filepath.Join(dir, ver(s.seqs["a1"])), []byte("x"), 0o644); err == nil {
		t.Errorf("a version was written")
	}
	if _, err := os.Stat(filepath.Join(dir, "99")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat of a seq that is no version: %v", err)
	}
}

// .memfs/at/SEQ/ and .memfs/snapshots/: the whole namespace as it was,
// every node type, through ls, cat, grep -r, diff -r and cp -a; mkdir
// takes a snapshot, rmdir removes it, RUN/latest follows the newest step.
func TestMountHistoryNamespace(t *testing.T) {
	s := mountHistory(t, fsnode.Options{}, fsnode.MountOptions{})
	at := s.path("at/" + itoa(s.seqs["snap"]))
	if got, want := names(t, filepath.Join(at, "memory")), []string{"a.md", "gone.md", "h1", "h2", "ln"}; !slices.Equal(got, want) {
		t.Fatalf("ls %s/memory = %v, want %v", at, got, want)
	}
	if got := names(t, filepath.Join(s.path("at/"+itoa(s.seqs["del"])), "memory")); slices.Contains(got, "gone.md") {
		t.Errorf("at the delete, gone.md is still listed: %v", got)
	}
	if got := readFile(t, filepath.Join(at, "memory/a.md")); got != "third\n" {
		t.Errorf("cat a.md at %d = %q", s.seqs["snap"], got)
	}
	if got := readFile(t, filepath.Join(s.path("at/"+itoa(s.seqs["a1"])), "memory/a.md")); got != "first\n" {
		t.Errorf("cat a.md at %d = %q", s.seqs["a1"], got)
	}
	if _, err := os.Stat(s.path("at/" + itoa(s.seqs["del"]+1))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat of a seq after the head: %v, want ENOENT", err)
	}
	var h1, h2 syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(at, "memory/h1"), &h1); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Lstat(filepath.Join(at, "memory/h2"), &h2); err != nil {
		t.Fatal(err)
	}
	if h1.Ino != h2.Ino || h1.Nlink != 2 {
		t.Errorf("hard links: inodes %d and %d, nlink %d; want one inode, nlink 2", h1.Ino, h2.Ino, h1.Nlink)
	}
	if fi, err := os.Lstat(filepath.Join(at, "special/fifo")); err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("the fifo: %v, %v", fi, err)
	}
	// Snapshots through the mount.
	if err := os.Mkdir(s.path("snapshots/before"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(s.path("snapshots/before"), 0o755); !errors.Is(err, fs.ErrExist) {
		t.Errorf("mkdir of a snapshot that exists: %v, want EEXIST", err)
	}
	snap := s.path("snapshots/before")
	if n, err := s.h.ResolveSnapshot(t.Context(), "before"); err != nil || n.Seq != s.seqs["del"] || n.By != "fsnode.test/"+strconv.Itoa(os.Getpid()) {
		t.Errorf("snapshot before: %+v, %v; want seq %d, by fsnode.test/%d", n, err, s.seqs["del"], os.Getpid())
	}
	run(t, "grep", "-rq", "third", snap)
	// diff -r between the snapshot and at/ the same seq, and cp -a out.
	run(t, "diff", "-r", "--no-dereference", filepath.Join(snap, "memory"), filepath.Join(s.path("at/"+itoa(s.seqs["del"])), "memory"))
	checkCopy(t, filepath.Join(snap, "memory"))
	checkRuns(t, s)
	if err := os.Remove(snap); err != nil {
		t.Fatal(err)
	}
	if _, err := s.h.ResolveSnapshot(t.Context(), "before"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after rmdir the snapshot is still there: %v", err)
	}
}

// checkCopy checks cp -a of a past memory/: modes, symlinks, hard links.
func checkCopy(t *testing.T, from string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "copy")
	run(t, "cp", "-a", from, out)
	if fi, err := os.Stat(filepath.Join(out, "a.md")); err != nil || fi.Mode() != 0o640 {
		t.Errorf("cp -a: a.md %v, %v; want mode 0640", fi, err)
	}
	if l, err := os.Readlink(filepath.Join(out, "ln")); err != nil || l != "a.md" {
		t.Errorf("cp -a: ln -> %q, %v", l, err)
	}
	var c1, c2 syscall.Stat_t
	syscall.Stat(filepath.Join(out, "h1"), &c1)
	syscall.Stat(filepath.Join(out, "h2"), &c2)
	if c1.Ino != c2.Ino {
		t.Errorf("cp -a did not keep the hard link")
	}
}

// checkRuns checks checkpoints: RUN/STEP and RUN/latest.
func checkRuns(t *testing.T, s *histScene) {
	t.Helper()
	// Checkpoints: RUN/STEP and RUN/latest.
	for i, step := range []string{"s1", "s2"} {
		if err := s.h.Snapshot(t.Context(), "run/"+step, s.seqs["a1"]+uint64(i), "test/1"); err != nil {
			t.Fatal(err)
		}
	}
	if got := names(t, s.path("snapshots")); !slices.Equal(got, []string{"before", "run"}) {
		t.Errorf("ls snapshots = %v", got)
	}
	if got := names(t, s.path("snapshots/run")); !slices.Equal(got, []string{"latest", "s1", "s2"}) {
		t.Errorf("ls snapshots/run = %v", got)
	}
	if l, err := os.Readlink(s.path("snapshots/run/latest")); err != nil || l != "s2" {
		t.Errorf("run/latest -> %q, %v; want s2", l, err)
	}
	if got := readFile(t, s.path("snapshots/run/latest/memory/a.md")); got != "second, longer\n" {
		t.Errorf("run/latest/memory/a.md = %q", got)
	}
	if err := os.Mkdir(s.path("snapshots/run/s3"), 0o755); err != nil {
		t.Fatal(err)
	}
	if l, err := os.Readlink(s.path("snapshots/run/latest")); err != nil || l != "s3" {
		t.Errorf("after mkdir run/s3, run/latest -> %q, %v", l, err)
	}
}

func itoa(n uint64) string { return strings.TrimLeft(padSeq(n), "0") }

func run(t *testing.T, argv ...string) {
	t.Helper()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

// A version whose object is damaged reads as EIO, never as empty or
// wrong bytes, in history/ and in a past namespace.
func TestMountHistoryDamage(t *testing.T) {
	s := mountHistory(t, fsnode.Options{}, fsnode.MountOptions{})
	obj := "history/o/" + history.AddrOf([]byte("second, longer\n")).String()
	if err := s.st.SaveSys(t.Context(), obj, []byte("second, longer!")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{s.path("history/memory/a.md/" + ver(s.seqs["a2"])), s.path("at/" + itoa(s.seqs["a2"]) + "/memory/a.md")} {
		b, err := os.ReadFile(p)
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("cat %s of a damaged version = %q, %v; want EIO", p, b, err)
		}
	}
}

// requests counts the FUSE requests of each opcode in go-fuse's request
// log (the mount's Debug, at the logger's debug level).
type requests struct{ buf *syncbuf.Buffer }

func (r requests) count(ops ...string) int {
	n := 0
	for line := range strings.SplitSeq(r.buf.String(), "\n") {
		for _, op := range ops {
			if strings.Contains(line, `req="rx `) && strings.Contains(line, ": "+op+" ") {
				n++
			}
		}
	}
	return n
}

// Immutable: a warm stat or cat of a version, and a warm stat of a node
// of a past namespace, send no LOOKUP, GETATTR or READ to memfs (the
// kernel's open and release of a file are the only requests).
func TestMountHistoryCached(t *testing.T) {
	buf := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := mountHistory(t, fsnode.Options{Logger: log}, fsnode.MountOptions{Debug: true})
	req := requests{buf}
	files := []string{s.path("history/memory/a.md/" + ver(s.seqs["a2"])), s.path("at/" + itoa(s.seqs["snap"]) + "/memory/a.md")}
	for _, p := range files {
		readFile(t, p)
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
	before := req.count("LOOKUP", "GETATTR", "READ")
	for range 3 {
		for i, p := range files {
			if _, err := os.Stat(p); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, p); got != []string{"second, longer\n", "third\n"}[i] {
				t.Fatalf("cat %s = %q", p, got)
			}
		}
	}
	if n := req.count("LOOKUP", "GETATTR", "READ") - before; n != 0 {
		t.Errorf("warm stat and cat of past versions sent %d LOOKUP, GETATTR or READ requests, want 0", n)
	}
	if req.count("OPEN") == 0 {
		t.Fatalf("the request log counted no OPEN: it does not see the requests")
	}
}

// .memfs/checkpoints/: every run name is a run directory (empty until its
// first step), so mkdir checkpoints/RUN/STEP checkpoints a new run; it
// lists the runs only, and RUN/STEP is the namespace snapshots/ shows.
func TestMountCheckpoints(t *testing.T) {
	s := mountHistory(t, fsnode.Options{}, fsnode.MountOptions{})
	if err := os.Mkdir(s.path("snapshots/plain"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := names(t, s.path("checkpoints/fresh")); len(got) != 0 {
		t.Errorf("ls checkpoints/fresh before its first step = %v, want empty", got)
	}
	if err := os.Mkdir(s.path("checkpoints/fresh/s1"), 0o755); err != nil {
		t.Fatalf("mkdir checkpoints/fresh/s1: %v", err)
	}
	if n, err := s.h.ResolveSnapshot(t.Context(), "fresh/latest"); err != nil || n.Name != "fresh/s1" {
		t.Errorf("fresh/latest: %+v, %v; want fresh/s1", n, err)
	}
	if l, err := os.Readlink(s.path("checkpoints/fresh/latest")); err != nil || l != "s1" {
		t.Errorf("checkpoints/fresh/latest -> %q, %v; want s1", l, err)
	}
	if got := readFile(t, s.path("checkpoints/fresh/s1/memory/a.md")); got != "third\n" {
		t.Errorf("checkpoints/fresh/s1/memory/a.md = %q", got)
	}
	if got := names(t, s.path("checkpoints")); !slices.Equal(got, []string{"fresh"}) {
		t.Errorf("ls checkpoints = %v, want the runs only", got)
	}
	if got := names(t, s.path("snapshots")); !slices.Equal(got, []string{"fresh", "plain"}) {
		t.Errorf("ls snapshots = %v", got)
	}
	if err := os.Mkdir(s.path("checkpoints/other"), 0o755); !errors.Is(err, fs.ErrExist) {
		t.Errorf("mkdir checkpoints/other: %v, want EEXIST (every run is there)", err)
	}
	if err := os.Remove(s.path("checkpoints/plain")); err == nil {
		t.Errorf("rmdir checkpoints/plain succeeded")
	}
	if _, err := s.h.ResolveSnapshot(t.Context(), "plain"); err != nil {
		t.Errorf("rmdir checkpoints/plain removed the snapshot plain: %v", err)
	}
	if err := os.Remove(s.path("checkpoints/fresh/s1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.h.ResolveSnapshot(t.Context(), "fresh/s1"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after rmdir checkpoints/fresh/s1: %v, want gone", err)
	}
}
