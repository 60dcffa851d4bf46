package fsnode_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/posixtest"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/session"
)

// posixExcluded names every go-fuse posixtest that is not run against
// memfs, with the reason. Everything else in posixtest.All runs.
var posixExcluded = map[string]string{
	"FcntlFlockLocksFile": "memfs leaves POSIX locks to the kernel, which (correctly, per POSIX) never makes two locks of one process conflict; the test expects a filesystem that keeps lock owners apart",
}

// posixStore is a store the posix tests run on, with the flush interval
// of its mounts (0: only fsync flushes).
type posixStore struct {
	name  string
	flush time.Duration
	open  func(t *testing.T) backend.Store
}

// posixStores: a directory, and etcd (a real server, a namespace per
// test) with the periodic flush of `memfs mount --flush-interval 1s`, so
// that flushes land in the middle of the tests (issue 26).
func posixStores(outer *testing.T) []posixStore {
	var (
		once sync.Once
		srv  *etcdtest.Server
		n    int
	)
	return []posixStore{
		{"dir", 0, func(t *testing.T) backend.Store { return newDirStore(t, t.TempDir()) }},
		{"etcd-flush-1s", time.Second, func(t *testing.T) backend.Store {
			once.Do(func() { srv = etcdtest.Start(outer) }) // one server, stopped after the last test
			n++
			cfg, err := etcdstore.ParseURL(srv.URL(fmt.Sprintf("posix%d", n)))
			if err != nil {
				t.Fatal(err)
			}
			st, err := etcdstore.Open(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
	}
}

// posixMount mounts a fresh store of ps whose session logs to the returned
// buffer, and flushes it every ps.flush (as memfs.Mount.Serve does) until
// the test ends; a failed periodic flush fails the test.
func posixMount(t *testing.T, ps posixStore, st backend.Store) (*mounted, *syncLog) {
	t.Helper()
	log := &syncLog{}
	m := mount(t, st, mountConfig{sopts: session.Options{Logger: slog.New(slog.NewTextHandler(log, nil))}})
	if ps.flush > 0 {
		stop, stopped := make(chan struct{}), make(chan struct{})
		ctx := t.Context() // done when the test's body returns, before its cleanups
		go func() {
			defer close(stopped)
			tick := time.NewTicker(ps.flush)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					// A flush the end of the test cancels is no failure:
					// the unmount flushes what it left.
					if err := m.c.Flush(ctx); err != nil && ctx.Err() == nil {
						t.Errorf("periodic flush: %v", err)
					}
				}
			}
		}()
		t.Cleanup(func() { close(stop); <-stopped }) // before the unmount (cleanups run last first)
	}
	return m, log
}

// syncLog is a buffer the session's logger and the test share.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// checkNoOtherWriter fails t for each line in which a mount with no other
// writer logged one, or a conflict.
func checkNoOtherWriter(t *testing.T, log *syncLog) {
	t.Helper()
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "another writer") || strings.Contains(line, "another program") ||
			strings.Contains(line, "conflict") || strings.Contains(line, "refused") {
			t.Errorf("a mount with no other writer logged: %s", line)
		}
	}
}

func TestPosix(t *testing.T) {
	names := make([]string, 0, len(posixtest.All))
	for name := range posixtest.All {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, ps := range posixStores(t) {
		t.Run(ps.name, func(t *testing.T) {
			for _, name := range names {
				fn := posixtest.All[name]
				t.Run(name, func(t *testing.T) {
					if why, ok := posixExcluded[name]; ok {
						t.Skip("excluded: " + why)
					}
					m, log := posixMount(t, ps, ps.open(t))
					// A subdirectory, because the root also lists .memfs.
					dir := filepath.Join(m.dir, "posix")
					if err := os.Mkdir(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					fn(t, dir)
					checkNoOtherWriter(t, log)
				})
			}
		})
	}
}

// The name reuse of pjdfstest's rename/00.t and chown/00.t, run through
// the kernel while the periodic flush fires at every point of it (issue
// 26): a node of each type is made at n0, renamed to n1 and back, linked,
// chowned and removed, and the next of another type is made at the same
// names, again and again for a few seconds. Every step must do what it
// does on a plain filesystem; the mount must log no other writer and no
// conflict; and after a last flush, the store holds exactly the last
// state (no ghost of a removed node, no conflict copy), as a new session
// over it shows.
func TestPosixNameReuse(t *testing.T) {
	for _, ps := range posixStores(t) {
		t.Run(ps.name, func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			st := ps.open(t)
			m, log := posixMount(t, ps, st)
			r := &reuser{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, seed)), dir: filepath.Join(m.dir, "posix"), log: log}
			if err := os.Mkdir(r.dir, 0o755); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(4 * time.Second)
			for ; time.Now().Before(deadline) || r.rounds < 10; r.rounds++ {
				r.round()
			}
			t.Logf("%d rounds", r.rounds)
			// The last state: n0 a file, n1 a directory of uid 65534, n2 a symlink.
			r.mk("regular", "n0")
			r.mk("dir", "n1")
			r.step = "chown n1"
			r.must(os.Chown(r.p("n1"), 65534, 65534))
			r.mk("symlink", "n2")
			r.fsync()
			r.must(m.c.Flush(t.Context()))
			checkNoOtherWriter(t, log)

			es, err := st.List(t.Context())
			r.must(err)
			r.checkLast("the store", es)
			// A new session over the store: what the next mount shows.
			c := session.NewContext(st, session.Options{})
			r.must(c.Bootstrap(t.Context(), "memory/"))
			ents, err := c.ReadDir("posix")
			r.must(err)
			es = []backend.Entry{{Key: "posix", Info: backend.Info{Mode: os.ModeDir}}}
			for _, d := range ents {
				s, err := c.Stat("posix/" + d.Name)
				r.must(err)
				es = append(es, backend.Entry{Key: s.Key, Info: backend.Info{Mode: s.Mode, UID: s.UID}})
			}
			r.checkLast("a new session", es)
		})
	}
}

// reuser makes, renames, links, chowns and removes nodes at the same few
// names of dir, for TestPosixNameReuse.
type reuser struct {
	t      *testing.T
	seed   uint64
	rng    *rand.Rand
	dir    string
	log    *syncLog
	step   string // the step running, for the failure
	rounds int
}

var reuseTypes = []string{"regular", "dir", "fifo", "symlink", "hardlink"}

func (r *reuser) p(n string) string { return filepath.Join(r.dir, n) }

func (r *reuser) must(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatalf("seed %d, %s: %v\nlog:\n%s", r.seed, r.step, err, r.log)
	}
}

func (r *reuser) mk(typ, n string) {
	r.t.Helper()
	r.step = "make " + typ + " " + n
	switch typ {
	case "regular", "hardlink":
		r.must(os.WriteFile(r.p(n), []byte(typ+" "+n+"\n"), 0o644))
	case "dir":
		r.must(os.Mkdir(r.p(n), 0o755))
	case "fifo":
		r.must(unix.Mkfifo(r.p(n), 0o644))
	case "symlink":
		r.must(os.Symlink("target-"+n, r.p(n)))
	}
}

func (r *reuser) rm(typ, n string) {
	r.t.Helper()
	r.step = "remove " + typ + " " + n
	if typ == "dir" {
		r.must(unix.Rmdir(r.p(n)))
	} else {
		r.must(unix.Unlink(r.p(n)))
	}
}

// ino returns n's inode number, type bits and owner.
func (r *reuser) ino(n string) (uint64, uint32, uint32) {
	r.t.Helper()
	var s unix.Stat_t
	r.must(unix.Lstat(r.p(n), &s))
	return s.Ino, s.Mode & unix.S_IFMT, s.Uid
}

func (r *reuser) gone(n string) {
	r.t.Helper()
	r.step = "lstat of the old name " + n
	var s unix.Stat_t
	if err := unix.Lstat(r.p(n), &s); err != unix.ENOENT {
		r.t.Fatalf("seed %d: %s: %v, want ENOENT\nlog:\n%s", r.seed, r.step, err, r.log)
	}
}

func (r *reuser) fsync() {
	r.t.Helper()
	r.step = "fsync of the directory"
	f, err := os.Open(r.dir)
	r.must(err)
	r.must(f.Sync())
	r.must(f.Close())
}

// round makes a node of a random type and reuses its names: rename/00.t
// (it keeps its inode and type under the new name; the old name is
// gone), a hard link renamed over, chown/00.t (the owner changes, and
// the name is reused), and a rename over an existing name.
func (r *reuser) round() {
	r.t.Helper()
	typ := reuseTypes[r.rng.IntN(len(reuseTypes))]
	r.mk(typ, "n0")
	i0, t0, _ := r.ino("n0")
	r.step = "rename n0 n1 (" + typ + ")"
	r.must(os.Rename(r.p("n0"), r.p("n1")))
	r.gone("n0")
	if i1, t1, _ := r.ino("n1"); i1 != i0 || t1 != t0 {
		r.t.Fatalf("seed %d, round %d: n1 after rename of a %s: inode %d type %o, want %d %o", r.seed, r.rounds, typ, i1, t1, i0, t0)
	}
	if typ == "hardlink" {
		r.linkAndRename(i0)
	}
	if r.rng.IntN(4) == 0 {
		r.fsync()
	}
	r.step = "lchown n1 (" + typ + ")"
	r.must(os.Lchown(r.p("n1"), 65534, 65534))
	if _, _, uid := r.ino("n1"); uid != 65534 {
		r.t.Fatalf("seed %d, round %d: uid of n1 (%s) after lchown: %d", r.seed, r.rounds, typ, uid)
	}
	r.step = "rename n1 n0 (" + typ + ")"
	r.must(os.Rename(r.p("n1"), r.p("n0")))
	r.gone("n1")
	r.rm(typ, "n0")
	if typ != "dir" {
		r.renameOver(typ, t0)
	}
}

// linkAndRename links n1 (a file of inode i0) as n2, renames n2 to n0,
// checks the link count, and removes n0.
func (r *reuser) linkAndRename(i0 uint64) {
	r.t.Helper()
	r.step = "link n1 n2"
	r.must(os.Link(r.p("n1"), r.p("n2")))
	r.step = "rename n2 n0"
	r.must(os.Rename(r.p("n2"), r.p("n0")))
	var s unix.Stat_t
	r.must(unix.Lstat(r.p("n0"), &s))
	if s.Nlink != 2 || s.Ino != i0 {
		r.t.Fatalf("seed %d, round %d: n0 after link and rename: nlink %d inode %d, want 2, %d", r.seed, r.rounds, s.Nlink, s.Ino, i0)
	}
	r.rm("hardlink", "n0")
}

// renameOver renames a new n0 of typ (type bits t0) over a regular file
// n1: n1 is replaced by n0.
func (r *reuser) renameOver(typ string, t0 uint32) {
	r.t.Helper()
	r.mk("regular", "n1")
	r.mk(typ, "n0")
	r.step = "rename n0 over n1 (" + typ + ")"
	r.must(os.Rename(r.p("n0"), r.p("n1")))
	r.gone("n0")
	if _, t1, _ := r.ino("n1"); t1 != t0 {
		r.t.Fatalf("seed %d, round %d: n1 after rename over it: type %o, want %o", r.seed, r.rounds, t1, t0)
	}
	r.rm(typ, "n1")
}

// checkLast checks that es (what holds the state, named by what) holds
// the last state of TestPosixNameReuse under posix/: n0 a file, n1 a
// directory of uid 65534, n2 a symlink.
func (r *reuser) checkLast(what string, es []backend.Entry) {
	r.t.Helper()
	want := map[string]string{"posix": "dir", "posix/n0": "regular", "posix/n1": "dir", "posix/n2": "symlink"}
	got := map[string]string{}
	for _, e := range es {
		if e.Key != "posix" && !strings.HasPrefix(e.Key, "posix/") {
			continue
		}
		got[e.Key] = nodeType(e.Info.Mode)
		if e.Key == "posix/n1" && e.Info.UID != 65534 {
			r.t.Errorf("seed %d: %s: posix/n1 owned by %d, want 65534", r.seed, what, e.Info.UID)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		r.t.Errorf("seed %d, %d rounds: %s holds %v, want %v\nlog:\n%s", r.seed, r.rounds, what, got, want, r.log)
	}
}

// nodeType names the type of a node of mode m as reuseTypes does (a hard
// link is a regular file).
func nodeType(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&os.ModeSymlink != 0:
		return "symlink"
	case m&os.ModeNamedPipe != 0:
		return "fifo"
	}
	return "regular"
}
