package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/mountclient"
	"github.com/memfs/memfs/session"
)

// The history model test (issue 29): random writes, appends, truncates,
// renames, deletes, chmods, setxattrs, snapshots and reverts through real
// mounts, with kill -9 of the serving process at random points (between
// operations, and while a flush runs), checked against a model:
//
//   - the live namespace after a kill is the model's: every operation
//     returned before the kill (each closes its file: the journal holds
//     it), so nothing may be missing;
//   - every version once listed under .memfs/history/KEY/ stays listed and
//     reads back the same bytes, mode and tags, whatever kill came after;
//   - after each flush (fsync, snapshot, revert, a remount's replay) the
//     newest version of every present key is the model's value;
//   - every snapshot (.memfs/snapshots/NAME/) is the model's namespace
//     when it was taken, on every mount, after every kill;
//   - a revert adds a version newer than every one before it, holding the
//     old bytes, and changes none of the earlier ones.
//
// MEMFS_HISTORY_MODEL_SEED replays a run (the seed is printed),
// MEMFS_HISTORY_MODEL_OPS lengthens it (default histModelOps).

const histModelOps = 30 // about 25-45 s a local store under -race here, kills and remounts included

// hmFile is what the model holds of a file: its bytes, permission bits
// and user.memfs.tags.
type hmFile struct {
	data []byte
	mode fs.FileMode
	tags string
}

type hmNS map[string]hmFile

func (ns hmNS) clone() hmNS {
	out := hmNS{}
	for k, v := range ns {
		out[k] = hmFile{data: slices.Clone(v.data), mode: v.mode, tags: v.tags}
	}
	return out
}

// hmVersion is a version as first read from .memfs/history; known says
// whether the model knows its mode (it was the key's newest at a flush),
// which a revert to it must bring back.
type hmVersion struct {
	f     hmFile
	known bool
	mode  fs.FileMode // when known
}

// hmMount is a mount the model drives; restart, when set, kills its
// process with SIGKILL (while fsync of sync, when not "", runs) and
// starts it again.
type hmMount struct {
	dir     string
	restart func(t *testing.T, sync string)
	noSpec  bool // its store has no --store spec: revert through mountclient, as the command does
}

type histModelRun struct {
	t      *testing.T
	r      *rand.Rand
	mounts []*hmMount
	shared bool // two mounts of one store: flush after each change, wait for the other
	now    hmNS
	seen   map[string]map[uint64]hmVersion // key -> seq -> the version as first read
	snaps  map[string]hmNS
	kills  int
}

var hmWords = strings.Fields("alpha beta gamma delta note memory agent skill plan step run tool")

func hmText(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for range n {
		b.WriteString(hmWords[r.IntN(len(hmWords))])
		if r.IntN(8) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.Bytes()
}

func hmKey(i int) string { return fmt.Sprintf("memory/n%d.md", i) }

// histModelSeed returns the run's seed and its number of operations.
func histModelSeed(t *testing.T) (uint64, int) {
	t.Helper()
	seed, ops := uint64(time.Now().UnixNano()), histModelOps
	if v := os.Getenv("MEMFS_HISTORY_MODEL_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("MEMFS_HISTORY_MODEL_SEED=%q: %v", v, err)
		}
	}
	if v := os.Getenv("MEMFS_HISTORY_MODEL_OPS"); v != "" {
		var err error
		if ops, err = strconv.Atoi(v); err != nil {
			t.Fatalf("MEMFS_HISTORY_MODEL_OPS=%q: %v", v, err)
		}
	}
	t.Logf("seed %d, %d operations (MEMFS_HISTORY_MODEL_SEED=%d MEMFS_HISTORY_MODEL_OPS=%d replays it)", seed, ops, seed, ops)
	return seed, ops
}

func TestHistoryModelMount(t *testing.T) {
	t.Parallel()
	stores := backends(t)
	for _, name := range []string{"badger", "dir", "memstore"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			seed, ops := histModelSeed(t)
			m := &hmMount{dir: t.TempDir(), noSpec: name == "memstore"}
			if m.noSpec {
				serveMemstore(t, m.dir) // no process of its own to kill
			} else {
				store := stores[name]()
				p := startMount(t, store, m.dir, nil)
				m.restart = func(t *testing.T, syncPath string) {
					t.Helper()
					var wg sync.WaitGroup
					if syncPath != "" {
						started := make(chan struct{})
						wg.Go(func() {
							f, err := os.Open(syncPath)
							close(started)
							if err == nil {
								f.Sync() // ENOTCONN when the kill lands first
								f.Close()
							}
						})
						<-started
						// A random point of the flush (or just before it).
						time.Sleep(time.Duration(rand.IntN(20_000)) * time.Microsecond)
					}
					p.kill9(t)
					wg.Wait()
					p = startMount(t, store, m.dir, nil)
				}
			}
			run := newHistModelRun(t, seed, m)
			run.steps(ops)
			run.final()
		})
	}
}

// TestHistoryModelShared runs the model through two mounts of one etcd
// namespace: each change is made on one of them, flushed, and awaited on
// the other; both list the same versions with the same seqs and bytes,
// and a snapshot taken on one is the same on the other.
func TestHistoryModelShared(t *testing.T) {
	seed, ops := histModelSeed(t)
	a, b := twoMounts(t, sharedEtcdStore(t), sharedEnv(t))
	run := newHistModelRun(t, seed, &hmMount{dir: a.mnt}, &hmMount{dir: b.mnt})
	run.shared = true
	run.steps(ops)
	run.final()
}

// serveMemstore mounts a memstore at mnt in this process, served until
// the test ends. The test's own file calls go through the kernel; none
// execs or maps a file of the mount.
func serveMemstore(t *testing.T, mnt string) {
	t.Helper()
	f, err := memfs.Open(context.Background(), memstore.New(), memfs.Options{
		JournalPath: filepath.Join(t.TempDir(), "journal"),
		Namespace:   true,
		Name:        "memstore",
		RecoveryDir: filepath.Join(t.TempDir(), "recovery"),
		Session:     session.Options{MaxFileSize: 1 << 20, DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())},
	})
	if err != nil {
		t.Fatal(err)
	}
	mo, err := f.Mount(mnt, memfs.MountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mo.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			unix.Unmount(mnt, unix.MNT_DETACH)
			t.Errorf("Serve did not return 20 s after its context ended")
		}
		f.Close(context.Background())
	})
}

func newHistModelRun(t *testing.T, seed uint64, mounts ...*hmMount) *histModelRun {
	return &histModelRun{t: t, r: rand.New(rand.NewPCG(seed, 29)), mounts: mounts, now: hmNS{},
		seen: map[string]map[uint64]hmVersion{}, snaps: map[string]hmNS{}}
}

func (h *histModelRun) path(m *hmMount, rel string) string { return filepath.Join(m.dir, rel) }

// steps makes n random operations, each checked as it goes.
func (h *histModelRun) steps(n int) {
	t := h.t
	for i := range n {
		m := h.mounts[h.r.IntN(len(h.mounts))]
		what := h.step(m)
		if t.Failed() {
			t.Fatalf("after operation %d (%s)", i, what)
		}
		if h.shared {
			h.flush(m)
			h.converge()
		}
		if m.restart != nil && h.r.IntN(10) == 0 {
			syncPath := ""
			if h.r.IntN(2) == 0 {
				syncPath = h.path(m, "memory")
			}
			t.Logf("operation %d (%s): kill -9 (during fsync: %v)", i, what, syncPath != "")
			m.restart(t, syncPath)
			h.kills++
			h.checkLive(m)
			h.observe()
			h.verifySeen()
			h.checkSnapshots()
		}
	}
}

// final flushes, then checks everything once more on every mount.
func (h *histModelRun) final() {
	for _, m := range h.mounts {
		h.flush(m)
	}
	if h.shared {
		h.converge()
	}
	h.observe()
	h.verifySeen()
	h.checkSnapshots()
	for _, m := range h.mounts {
		h.checkLive(m)
	}
	n := 0
	for _, vs := range h.seen {
		n += len(vs)
	}
	h.t.Logf("%d versions, %d snapshots, %d kills checked", n, len(h.snaps), h.kills)
}

// step makes one random change on m and in the model, and says what.
func (h *histModelRun) step(m *hmMount) string {
	t, r := h.t, h.r
	t.Helper()
	key := hmKey(r.IntN(6))
	p := h.path(m, key)
	cur, ok := h.now[key]
	op := r.IntN(10)
	if !ok && op >= 1 && op <= 6 {
		op = 0
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Errorf("op %d on %s: %v", op, key, err)
		}
	}
	switch op {
	case 0: // write, fsynced one time in four
		data := hmText(r, 1+r.IntN(40))
		sync := r.IntN(4) == 0
		must(writeFile(p, data, sync))
		if !ok {
			must(os.Chmod(p, 0o644)) // whatever the umask
			cur.mode = 0o644
		}
		cur.data = data
		h.now[key] = cur
		if sync {
			h.observe()
			return "write+fsync " + key
		}
		return "write " + key
	case 1: // append
		add := hmText(r, 1+r.IntN(10))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = f.Write(add)
			err = errors.Join(err, f.Close())
		}
		must(err)
		cur.data = append(slices.Clone(cur.data), add...)
	case 2: // truncate, shorter or longer
		n := r.IntN(len(cur.data) + 4)
		must(os.Truncate(p, int64(n)))
		cur.data = append(slices.Clone(cur.data[:min(n, len(cur.data))]), make([]byte, max(0, n-len(cur.data)))...)
	case 3: // rename, over another key or not
		to := hmKey(r.IntN(6))
		if to == key {
			return "rename to itself (none)"
		}
		must(os.Rename(p, h.path(m, to)))
		delete(h.now, key)
		h.now[to] = cur
		return "rename " + key + " " + to
	case 4: // delete
		must(os.Remove(p))
		delete(h.now, key)
		return "delete " + key
	case 5: // chmod
		cur.mode = []fs.FileMode{0o600, 0o640, 0o644}[r.IntN(3)]
		must(os.Chmod(p, cur.mode))
	case 6: // setxattr
		cur.tags = hmWords[r.IntN(len(hmWords))]
		must(unix.Setxattr(p, meta.Tags, []byte(cur.tags), 0))
	case 7: // snapshot
		name := fmt.Sprintf("s%d", len(h.snaps))
		must(os.Mkdir(h.path(m, ".memfs/snapshots/"+name), 0o755))
		h.snaps[name] = h.now.clone()
		h.observe()
		h.checkSnapshot(name)
		return "snapshot " + name
	case 8: // revert
		return h.revert(m)
	default: // a flush
		h.flush(m)
		h.observe()
		return "fsync"
	}
	h.now[key] = cur
	return fmt.Sprintf("op %d on %s", op, key)
}

func writeFile(p string, data []byte, sync bool) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// flush fsyncs m's memory/ directory: the session's flush, history's
// versions included, is done when it returns.
func (h *histModelRun) flush(m *hmMount) {
	h.t.Helper()
	fsyncPath(h.t, h.path(m, "memory"))
}

// revert runs memfs revert --to SEQ through m for a version whose mode
// the model knows, and checks that it made a new version and changed
// none of the old.
func (h *histModelRun) revert(m *hmMount) string {
	t := h.t
	t.Helper()
	type cand struct {
		key string
		seq uint64
	}
	var cands []cand
	for _, k := range slices.Sorted(maps.Keys(h.seen)) {
		for _, s := range slices.Sorted(maps.Keys(h.seen[k])) {
			if h.seen[k][s].known {
				cands = append(cands, cand{k, s})
			}
		}
	}
	if len(cands) == 0 {
		return "revert (no version yet)"
	}
	c := cands[h.r.IntN(len(cands))]
	before := slices.Max(slices.Collect(maps.Keys(h.seen[c.key])))
	var out, errOut string
	var err error
	if m.noSpec {
		var cl *mountclient.Client
		if cl, err = mountclient.Open(m.dir, mountclient.Own); err == nil {
			_, err = cl.Revert(c.key, c.seq)
		}
	} else {
		out, errOut, err = run(t, "", "revert", "--mount", m.dir, "--to", strconv.FormatUint(c.seq, 10), c.key)
	}
	if err != nil {
		t.Errorf("revert %s to %d: %v\n%s%s", c.key, c.seq, err, out, errOut)
		return "revert"
	}
	v := h.seen[c.key][c.seq]
	// A revert brings back the version's bytes, mode and tags, through
	// the mount as without one (docs/history.md).
	h.now[c.key] = hmFile{data: slices.Clone(v.f.data), mode: v.mode, tags: v.f.tags}
	h.observe()
	newest := slices.Max(slices.Collect(maps.Keys(h.seen[c.key])))
	if newest <= before {
		t.Errorf("revert %s to %d: its newest version is %d, not newer than %d", c.key, c.seq, newest, before)
	}
	h.verifySeen()
	return fmt.Sprintf("revert %s to %d", c.key, c.seq)
}

// listVersions returns the seqs .memfs/history/KEY/ lists on m.
func (h *histModelRun) listVersions(m *hmMount, key string) []uint64 {
	h.t.Helper()
	ents, err := os.ReadDir(h.path(m, ".memfs/history/"+key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		h.t.Errorf("ls .memfs/history/%s: %v", key, err)
		return nil
	}
	var seqs []uint64
	for _, e := range ents {
		if s, err := strconv.ParseUint(e.Name(), 10, 64); err == nil {
			seqs = append(seqs, s)
		}
	}
	return seqs
}

// readVersion reads KEY's version seq on m: bytes, mode and tags.
func (h *histModelRun) readVersion(m *hmMount, key string, seq uint64) (hmFile, error) {
	p := h.path(m, fmt.Sprintf(".memfs/history/%s/%08d", key, seq))
	return readHM(p)
}

func readHM(p string) (hmFile, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return hmFile{}, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return hmFile{}, err
	}
	buf := make([]byte, 256)
	n, err := unix.Getxattr(p, meta.Tags, buf)
	if errors.Is(err, unix.ENODATA) {
		n, err = 0, nil
	}
	if err != nil {
		return hmFile{}, fmt.Errorf("getxattr %s: %w", p, err)
	}
	return hmFile{data: data, mode: fi.Mode().Perm(), tags: string(buf[:n])}, nil
}

// observe reads the versions every mount lists (they must list the same),
// records the new ones, and checks that each present key's newest is the
// model's value.
func (h *histModelRun) observe() {
	t := h.t
	t.Helper()
	for i := range 6 {
		key := hmKey(i)
		seqs := h.listVersions(h.mounts[0], key)
		for _, m := range h.mounts[1:] {
			if other := h.listVersions(m, key); !slices.Equal(other, seqs) {
				t.Errorf(".memfs/history/%s: %v on %s, %v on %s", key, seqs, h.mounts[0].dir, other, m.dir)
			}
		}
		if h.seen[key] == nil {
			h.seen[key] = map[uint64]hmVersion{}
		}
		for _, s := range seqs {
			if _, ok := h.seen[key][s]; ok {
				continue
			}
			for _, m := range h.mounts {
				f, err := h.readVersion(m, key, s)
				if err != nil {
					log, _ := os.ReadFile(h.path(m, ".memfs/history/"+key+"/log"))
					t.Errorf("%s@%d on %s: %v; its log:\n%s", key, s, m.dir, err, log)
					continue
				}
				if prev, ok := h.seen[key][s]; ok && !sameHM(prev.f, f) {
					t.Errorf("%s@%d: %s on %s, %s on the first mount", key, s, f, m.dir, prev.f)
				}
				h.seen[key][s] = hmVersion{f: f}
			}
		}
		want, ok := h.now[key]
		if !ok {
			continue
		}
		if len(seqs) == 0 {
			t.Errorf("%s: no version after a flush", key)
			continue
		}
		newest := slices.Max(seqs)
		got := h.seen[key][newest]
		if !sameHM(got.f, want) {
			t.Errorf("%s: the newest version (%d) is %s, want %s", key, newest, got.f, want)
			continue
		}
		got.known, got.mode = true, want.mode
		h.seen[key][newest] = got
	}
}

func (f hmFile) String() string { return fmt.Sprintf("%q mode %v tags %q", f.data, f.mode, f.tags) }

// sameHM reports whether got holds want: bytes, mode and tags.
func sameHM(got, want hmFile) bool {
	return bytes.Equal(got.data, want.data) && got.mode == want.mode && got.tags == want.tags
}

// verifySeen checks that every version seen is still listed and reads
// back as first read, on every mount.
func (h *histModelRun) verifySeen() {
	t := h.t
	t.Helper()
	for _, key := range slices.Sorted(maps.Keys(h.seen)) {
		for _, m := range h.mounts {
			listed := h.listVersions(m, key)
			for s, v := range h.seen[key] {
				if !slices.Contains(listed, s) {
					t.Errorf("%s@%d on %s: no longer listed (%v)", key, s, m.dir, listed)
				}
				f, err := h.readVersion(m, key, s)
				if err != nil {
					t.Errorf("%s@%d on %s: %v", key, s, m.dir, err)
					continue
				}
				if !sameHM(f, v.f) {
					t.Errorf("%s@%d on %s changed: %s, first read %s", key, s, m.dir, f, v.f)
				}
			}
		}
	}
}

// readTree reads the files under dir/memory: key -> what it holds.
func readTree(dir string) (hmNS, error) {
	out := hmNS{}
	err := filepath.WalkDir(filepath.Join(dir, "memory"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := readHM(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = f
		return nil
	})
	return out, err
}

// diffNS says how got differs from want ("" for none).
func diffNS(got, want hmNS) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[k]
		switch {
		case !ok:
			fmt.Fprintf(&b, "  %s missing, want %s\n", k, want[k])
		case !sameHM(g, want[k]):
			fmt.Fprintf(&b, "  %s is %s, want %s\n", k, g, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "  %s is there (%s), the model has none\n", k, got[k])
		}
	}
	return b.String()
}

// checkLive checks that m's memory/ is the model's.
func (h *histModelRun) checkLive(m *hmMount) {
	h.t.Helper()
	got, err := readTree(m.dir)
	if err != nil {
		h.t.Errorf("reading %s: %v", m.dir, err)
		return
	}
	if d := diffNS(got, h.now); d != "" {
		h.t.Errorf("%s differs from the model:\n%s", m.dir, d)
	}
}

// converge waits until every mount shows the model's namespace.
func (h *histModelRun) converge() {
	h.t.Helper()
	for _, m := range h.mounts {
		var d string
		if !await.Cond(20*time.Second, 10*time.Millisecond, func() bool {
			got, err := readTree(m.dir)
			d = diffNS(got, h.now)
			if err != nil {
				d += err.Error()
			}
			return d == ""
		}) {
			h.t.Fatalf("%s did not come to the model's namespace in 20 s:\n%s", m.dir, d)
		}
	}
}

func (h *histModelRun) checkSnapshots() {
	h.t.Helper()
	for _, name := range slices.Sorted(maps.Keys(h.snaps)) {
		h.checkSnapshot(name)
	}
}

// checkSnapshot checks that .memfs/snapshots/NAME/memory is the model's
// namespace when it was taken, on every mount.
func (h *histModelRun) checkSnapshot(name string) {
	h.t.Helper()
	for _, m := range h.mounts {
		got, err := readTree(h.path(m, ".memfs/snapshots/"+name))
		if err != nil && !(errors.Is(err, fs.ErrNotExist) && len(h.snaps[name]) == 0) {
			h.t.Errorf("snapshot %s on %s: %v", name, m.dir, err)
			continue
		}
		if d := diffNS(got, h.snaps[name]); d != "" {
			h.t.Errorf("snapshot %s on %s differs from the model then:\n%s", name, m.dir, d)
		}
	}
}

// A key's history appears under .memfs/history once a flush recorded
// it, and .memfs/at/SEQ once the head reached SEQ, though a lookup found
// nothing there before (the kernel kept the absence for the mount's
// negative timeout: the history model test's first fsync of a key found
// no version).
func TestHistoryNewNamesAfterLookup(t *testing.T) {
	t.Parallel()
	mnt := t.TempDir()
	serveMemstore(t, mnt)
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	if err := writeFile(p("memory/a.md"), []byte("a\n"), true); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(p(".memfs/history/memory/a.md"))
	if err != nil || len(ents) != 2 {
		t.Fatalf("ls .memfs/history/memory/a.md: %v, %v; want a version and log", ents, err)
	}
	head, err := strconv.ParseUint(ents[0].Name(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{".memfs/history/memory/x.md", fmt.Sprintf(".memfs/at/%d", head+1)}
	for _, n := range names {
		if _, err := os.Stat(p(n)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("stat %s before the write: %v, want ENOENT", n, err)
		}
	}
	if err := writeFile(p("memory/x.md"), []byte("x\n"), true); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, err := os.Stat(p(n)); err != nil {
			t.Errorf("stat %s after the write's fsync: %v", n, err)
		}
	}
}

// memfs revert through a mount brings the version's mode back as it was
// (the mount showed a version without its write bits, and the revert
// wrote a 0644 file back as 0444: found by the history model test).
func TestRevertThroughMountKeepsTheMode(t *testing.T) {
	t.Parallel()
	store, mnt := "badger:"+t.TempDir(), t.TempDir()
	startMount(t, store, mnt, nil)
	p := filepath.Join(mnt, "memory/a.md")
	for _, v := range []string{"one\n", "two\n"} {
		if err := writeFile(p, []byte(v), true); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "", "revert", "--mount", mnt, "memory/a.md")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two\n" || fi.Mode() != 0o644 {
		t.Fatalf("after revert: %q mode %v, want %q mode %v", b, fi.Mode(), "two\n", fs.FileMode(0o644))
	}
}

// The past is read-only to its owner too: rm of a version, of a file in
// a snapshot or at a seq fails with EROFS (go-fuse answers an unlink or
// rmdir a node does not implement with success: the name vanished from
// the kernel's cache as if removed).
func TestPastRefusesRemoval(t *testing.T) {
	t.Parallel()
	mnt := t.TempDir()
	serveMemstore(t, mnt)
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	if err := writeFile(p("memory/a.md"), []byte("a\n"), true); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p(".memfs/snapshots/s1"), 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(p(".memfs/history/memory/a.md"))
	if err != nil || len(ents) == 0 {
		t.Fatalf("ls .memfs/history/memory/a.md: %v, %v", ents, err)
	}
	version := ".memfs/history/memory/a.md/" + ents[0].Name()
	at := ".memfs/at/" + strings.TrimLeft(ents[0].Name(), "0")
	for _, rel := range []string{version, ".memfs/snapshots/s1/memory/a.md", at + "/memory/a.md", ".memfs/snapshots/s1/memory", at + "/memory", ".memfs/history/memory/a.md"} {
		if err := os.Remove(p(rel)); !errors.Is(err, unix.EROFS) {
			t.Errorf("rm %s: %v, want EROFS", rel, err)
		}
		if _, err := os.Lstat(p(rel)); err != nil {
			t.Errorf("%s after rm: %v", rel, err)
		}
	}
}

// On a shared store a version written through one mount is in the
// other's .memfs/history as soon as the writer's fsync returned (the
// other mount answered from its event log as last refreshed, up to
// refreshEvents old: found by TestHistoryModelShared).
func TestSharedHistoryAtOnce(t *testing.T) {
	a, b := twoMounts(t, sharedEtcdStore(t), sharedEnv(t))
	hist := ".memfs/history/memory/x.md"
	if _, err := os.Stat(filepath.Join(a.mnt, hist)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat %s on A before the write: %v, want ENOENT", hist, err)
	}
	if err := writeFile(filepath.Join(b.mnt, "memory/x.md"), []byte("x\n"), true); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{b.mnt, a.mnt} {
		if ents, err := os.ReadDir(filepath.Join(m, hist)); err != nil || len(ents) != 2 {
			t.Errorf("ls %s on %s: %v, %v; want a version and log", hist, m, ents, err)
		}
	}
}
