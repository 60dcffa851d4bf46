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
			rng := rand.New(rand.NewPCG(seed, seed))
			st := ps.open(t)
			m, log := posixMount(t, ps, st)
			dir := filepath.Join(m.dir, "posix")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			p := func(n string) string { return filepath.Join(dir, n) }
			var step string // the step running, for the failure
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("seed %d, %s: %v\nlog:\n%s", seed, step, err, log)
				}
			}
			types := []string{"regular", "dir", "fifo", "symlink", "hardlink"}
			mk := func(typ, n string) {
				step = "make " + typ + " " + n
				switch typ {
				case "regular", "hardlink":
					must(os.WriteFile(p(n), []byte(typ+" "+n+"\n"), 0o644))
				case "dir":
					must(os.Mkdir(p(n), 0o755))
				case "fifo":
					must(unix.Mkfifo(p(n), 0o644))
				case "symlink":
					must(os.Symlink("target-"+n, p(n)))
				}
			}
			rm := func(typ, n string) {
				step = "remove " + typ + " " + n
				if typ == "dir" {
					must(unix.Rmdir(p(n)))
				} else {
					must(unix.Unlink(p(n)))
				}
			}
			ino := func(n string) (uint64, uint32, uint32) {
				var s unix.Stat_t
				must(unix.Lstat(p(n), &s))
				return s.Ino, s.Mode & unix.S_IFMT, s.Uid
			}
			gone := func(n string) {
				step = "lstat of the old name " + n
				var s unix.Stat_t
				if err := unix.Lstat(p(n), &s); err != unix.ENOENT {
					t.Fatalf("seed %d: %s: %v, want ENOENT\nlog:\n%s", seed, step, err, log)
				}
			}
			fsync := func() {
				step = "fsync of the directory"
				f, err := os.Open(dir)
				must(err)
				must(f.Sync())
				must(f.Close())
			}
			deadline := time.Now().Add(4 * time.Second)
			rounds := 0
			for ; time.Now().Before(deadline) || rounds < 10; rounds++ {
				typ := types[rng.IntN(len(types))]
				// rename/00.t: the node keeps its inode and type under
				// the new name; the old name is gone.
				mk(typ, "n0")
				i0, t0, _ := ino("n0")
				step = "rename n0 n1 (" + typ + ")"
				must(os.Rename(p("n0"), p("n1")))
				gone("n0")
				if i1, t1, _ := ino("n1"); i1 != i0 || t1 != t0 {
					t.Fatalf("seed %d, round %d: n1 after rename of a %s: inode %d type %o, want %d %o", seed, rounds, typ, i1, t1, i0, t0)
				}
				if typ == "hardlink" {
					step = "link n1 n2"
					must(os.Link(p("n1"), p("n2")))
					step = "rename n2 n0"
					must(os.Rename(p("n2"), p("n0")))
					var s unix.Stat_t
					must(unix.Lstat(p("n0"), &s))
					if s.Nlink != 2 || s.Ino != i0 {
						t.Fatalf("seed %d, round %d: n0 after link and rename: nlink %d inode %d, want 2, %d", seed, rounds, s.Nlink, s.Ino, i0)
					}
					rm(typ, "n0")
				}
				if rng.IntN(4) == 0 {
					fsync()
				}
				// chown/00.t: the owner changes, and the name is reused.
				step = "lchown n1 (" + typ + ")"
				must(os.Lchown(p("n1"), 65534, 65534))
				if _, _, uid := ino("n1"); uid != 65534 {
					t.Fatalf("seed %d, round %d: uid of n1 (%s) after lchown: %d", seed, rounds, typ, uid)
				}
				step = "rename n1 n0 (" + typ + ")"
				must(os.Rename(p("n1"), p("n0")))
				gone("n1")
				rm(typ, "n0")
				// Over an existing name: n1 is replaced by n0.
				if typ != "dir" {
					mk("regular", "n1")
					mk(typ, "n0")
					step = "rename n0 over n1 (" + typ + ")"
					must(os.Rename(p("n0"), p("n1")))
					gone("n0")
					if _, t1, _ := ino("n1"); t1 != t0 {
						t.Fatalf("seed %d, round %d: n1 after rename over it: type %o, want %o", seed, rounds, t1, t0)
					}
					rm(typ, "n1")
				}
			}
			t.Logf("%d rounds", rounds)
			// The last state: n0 a file, n1 a directory of uid 65534, n2 a symlink.
			mk("regular", "n0")
			mk("dir", "n1")
			step = "chown n1"
			must(os.Chown(p("n1"), 65534, 65534))
			mk("symlink", "n2")
			fsync()
			must(m.c.Flush(t.Context()))
			checkNoOtherWriter(t, log)

			want := map[string]string{"posix": "dir", "posix/n0": "regular", "posix/n1": "dir", "posix/n2": "symlink"}
			check := func(what string, es []backend.Entry) {
				t.Helper()
				got := map[string]string{}
				for _, e := range es {
					if e.Key != "posix" && !strings.HasPrefix(e.Key, "posix/") {
						continue
					}
					typ := "regular"
					switch {
					case e.Info.Mode.IsDir():
						typ = "dir"
					case e.Info.Mode&os.ModeSymlink != 0:
						typ = "symlink"
					case e.Info.Mode&os.ModeNamedPipe != 0:
						typ = "fifo"
					}
					got[e.Key] = typ
					if e.Key == "posix/n1" && e.Info.UID != 65534 {
						t.Errorf("seed %d: %s: posix/n1 owned by %d, want 65534", seed, what, e.Info.UID)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("seed %d, %d rounds: %s holds %v, want %v\nlog:\n%s", seed, rounds, what, got, want, log)
				}
			}
			es, err := st.List(t.Context())
			must(err)
			check("the store", es)
			// A new session over the store: what the next mount shows.
			c := session.NewContext(st, session.Options{})
			must(c.Bootstrap(t.Context(), "memory/"))
			ents, err := c.ReadDir("posix")
			must(err)
			es = []backend.Entry{{Key: "posix", Info: backend.Info{Mode: os.ModeDir}}}
			for _, d := range ents {
				s, err := c.Stat("posix/" + d.Name)
				must(err)
				es = append(es, backend.Entry{Key: s.Key, Info: backend.Info{Mode: s.Mode, UID: s.UID}})
			}
			check("a new session", es)
		})
	}
}
