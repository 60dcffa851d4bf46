package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// The two-writer model's inotify half (issue 26, "Done when": "inotify
// saw each remote change"): random creates, writes, chmods, removals and
// renames by one writer, each seen by a real inotify watcher on the other
// side's mount within the visibility bound. On etcd the writers are two
// mounts of one namespace, each watched, each writing; on a directory
// store the other writer is a program writing the store's directory, and
// the mount is watched. MEMFS_TWO_WRITER_SEED sets the seed (default: the
// clock, printed), MEMFS_TWO_WRITER_INOTIFY_OPS the changes per store
// (default 16: bounded for CI). The model of content and metadata
// (views equal, nothing lost, no ghost after a remount) is
// extwatch.TestTwoWriterModel.
func TestTwoWriterInotify(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("MEMFS_TWO_WRITER_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = n
	}
	ops := 16
	if v := os.Getenv("MEMFS_TWO_WRITER_INOTIFY_OPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		ops = n
	}
	t.Logf("seed %d (rerun with MEMFS_TWO_WRITER_SEED=%d)", seed, seed)
	t.Run("etcd", func(t *testing.T) {
		t.Parallel()
		a, b := twoMounts(t, sharedEtcdStore(t), sharedEnv(t))
		sides := []string{filepath.Join(a.mnt, "memory"), filepath.Join(b.mnt, "memory")}
		for _, d := range sides {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			fsyncPath(t, d)
		}
		waitFor(t, "memory/ on B", 10*time.Second, func() bool { _, err := os.Stat(sides[1]); return err == nil })
		watched := []*inotifyLog{watchInotify(t, sides[0]), watchInotify(t, sides[1])}
		inotifyModel(t, seed, ops, sides, watched, []bool{true, true})
	})
	t.Run("dir", func(t *testing.T) {
		t.Parallel()
		store := t.TempDir()
		if err := os.MkdirAll(filepath.Join(store, "memory"), 0o755); err != nil {
			t.Fatal(err)
		}
		mnt := t.TempDir()
		startMount(t, "dir:"+store, mnt, nil)
		// Side 0, the program, is not watched: its changes are seen on
		// side 1, the mount.
		sides := []string{filepath.Join(store, "memory"), filepath.Join(mnt, "memory")}
		watched := []*inotifyLog{nil, watchInotify(t, sides[1])}
		// A change the moment the mount is up, perhaps before its
		// watcher of the store runs: its first look at the store takes
		// it in, and watchers on the mount hear of it.
		mark := watched[1].mark()
		if err := os.WriteFile(filepath.Join(sides[0], "ready.md"), []byte("ready\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if !watched[1].await(mark, inotifyWant{"ready.md", fsnotify.Create}, 5*time.Second) {
			t.Fatalf("a create by another program right after the mount came up was not heard; heard: %v", watched[1].since(mark))
		}
		inotifyModel(t, seed^0xd1, ops, sides, watched, []bool{false, true})
	})
}

// inotifyModel makes ops random changes to a few names in the directories
// sides (the same names seen by two writers), from the sides that may
// write (writes), and waits after each for the event on the other side's
// watcher (watched; nil: not watched, and that side does not write).
// mount[i] says side i is a mount: its changes are fsynced, as a process
// that wants them shared does.
func inotifyModel(t *testing.T, seed uint64, ops int, sides []string, watched []*inotifyLog, mount []bool) {
	rng := rand.New(rand.NewPCG(seed, seed^0x7f4a7c15))
	names := []string{"f0.md", "f1.md", "f2.md", "f3.md"}
	exists := map[string]bool{}
	const bound = 5 * time.Second // the visibility bound under -race on a loaded machine
	var slowest time.Duration
	for i := range ops {
		side := rng.IntN(2)
		if watched[1-side] == nil {
			side = 1 - side
		}
		dir, w := sides[side], watched[1-side]
		k := names[rng.IntN(len(names))]
		p := filepath.Join(dir, k)
		mark := w.mark()
		var want []inotifyWant
		var err error
		switch op := rng.IntN(4); {
		case !exists[k]:
			err = writeShared(p, fmt.Sprintf("create %d\n", i), mount[side])
			exists[k] = true
			want = []inotifyWant{{k, fsnotify.Create}}
		case op == 0:
			err = writeShared(p, fmt.Sprintf("write %d\n", i), mount[side])
			want = []inotifyWant{{k, fsnotify.Write}}
		case op == 1:
			// A mode it does not have: a chmod that changes nothing is
			// no change to hear of.
			mode := os.FileMode(0o600)
			if fi, serr := os.Stat(p); serr == nil && fi.Mode().Perm() == mode {
				mode = 0o644
			}
			err = os.Chmod(p, mode)
			if err == nil && mount[side] {
				err = syncPath(p)
			}
			want = []inotifyWant{{k, fsnotify.Chmod}}
		case op == 2:
			err = os.Remove(p)
			delete(exists, k)
			want = []inotifyWant{{k, fsnotify.Remove}}
		default:
			to := names[rng.IntN(len(names))]
			if to == k || exists[to] {
				continue
			}
			err = os.Rename(p, filepath.Join(dir, to))
			delete(exists, k)
			exists[to] = true
			// The other side hears the old name go (a remote rename
			// arrives as a removal and a creation) and the new come.
			want = []inotifyWant{{k, fsnotify.Remove | fsnotify.Rename}, {to, fsnotify.Create | fsnotify.Rename}}
		}
		if err != nil {
			t.Fatalf("seed %d: op %d on side %d, %s: %v", seed, i, side, k, err)
		}
		if mount[side] {
			syncPath(dir) // removals and renames: the directory's flush
		}
		start := time.Now()
		for _, wt := range want {
			if !w.await(mark, wt, bound) {
				t.Fatalf("seed %d: op %d: side %d's %v of %s not heard on the other side within %v; heard: %v",
					seed, i, side, wt.op, wt.name, bound, w.since(mark))
			}
		}
		slowest = max(slowest, time.Since(start))
	}
	t.Logf("%d changes, each heard on the other side; the slowest in %v", ops, slowest)
}

// writeShared writes path; fsynced on a mount (shared at once).
func writeShared(path, v string, mount bool) error {
	if mount {
		return writeSync(path, []byte(v))
	}
	return os.WriteFile(path, []byte(v), 0o644)
}

// syncPath fsyncs path (a file or a directory) through a read-only
// descriptor of its own.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// inotifyWant is an event awaited: one of the ops (any bit) on name.
type inotifyWant struct {
	name string
	op   fsnotify.Op
}

// inotifyLog is every event of a watched directory, in order.
type inotifyLog struct {
	mu   sync.Mutex
	evs  []inotifyWant
	more chan struct{} // closed and replaced at each event
}

func watchInotify(t *testing.T, dir string) *inotifyLog {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	l := &inotifyLog{more: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.Events {
			l.mu.Lock()
			l.evs = append(l.evs, inotifyWant{filepath.Base(ev.Name), ev.Op})
			close(l.more)
			l.more = make(chan struct{})
			l.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Close(); <-done })
	return l
}

// mark is the position of the next event.
func (l *inotifyLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.evs)
}

// since is every event from mark on.
func (l *inotifyLog) since(mark int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.evs[mark:] {
		out = append(out, e.name+" "+e.op.String())
	}
	return out
}

// await reports whether an event of want came from mark on, within d.
func (l *inotifyLog) await(mark int, want inotifyWant, d time.Duration) bool {
	timeout := time.After(d)
	for {
		l.mu.Lock()
		ok := slices.ContainsFunc(l.evs[mark:], func(e inotifyWant) bool { return e.name == want.name && e.op&want.op != 0 })
		more := l.more
		l.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-more:
		case <-timeout:
			return false
		}
	}
}
