package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memfs/memfs/status"
)

// A Target is one way of serving the tree: a native directory, memfs with a
// store, or a peer FUSE filesystem. The runner calls Setup once,
// then every round: Mount, the workloads under the returned root, Durable,
// Reset.
type Target interface {
	// Name is the column header ("native", "memfs dir", ...).
	Name() string
	// Setup loads the tree at src into the target's backing storage.
	Setup(src string) error
	// Mount makes the tree available and returns its root. A FUSE target
	// starts a fresh serving process each time (the runner times this).
	Mount() (root string, err error)
	// Durable makes everything written under root durable and, for a FUSE
	// target, releases the mount (for memfs: SIGTERM, final flush, exit).
	Durable() error
	// Reset, after Durable, checks what the target stored (the tree as it
	// was, every created file, nothing else), repairs what it can (a
	// passthrough's backing directory), and removes the created files.
	// Untimed. problems lists what was wrong, by workload; err is a failure
	// to check or repair.
	Reset(pl *plan) (problems []problem, err error)
	// Close stops whatever the target still runs. Idempotent.
	Close() error
}

// isFUSE reports whether t mounts something (it then gets a mount time).
func isFUSE(t Target) bool {
	_, ok := t.(*fuseTarget)
	return ok
}

// --- the native directory (the baseline) ---

type nativeTarget struct{ dir string }

func (t *nativeTarget) Name() string { return "native" }

func (t *nativeTarget) Setup(src string) error {
	if err := os.MkdirAll(filepath.Dir(t.dir), 0o755); err != nil {
		return err
	}
	return runQuiet("cp", "-a", src, t.dir)
}

func (t *nativeTarget) Mount() (string, error) { return t.dir, nil }

// Durable is one sync(2), as sync(1) does, after all the files are closed.
func (t *nativeTarget) Durable() error { syscall.Sync(); return nil }

func (t *nativeTarget) Reset(pl *plan) ([]problem, error) {
	return checkDir(t.dir, pl, false)
}

func (t *nativeTarget) Close() error { return nil }

// --- FUSE filesystems served by a subprocess ---

// fuseTarget is a FUSE filesystem served by a process of its own, started
// fresh for every round and stopped by Durable. memfs is one; a peer
// (go-fuse loopback, bindfs, rclone mount) is another set of these hooks:
// load copies the tree into its backing directory, argv runs it in the
// foreground on t.mnt, ready defaults to "t.mnt is a mountpoint", stop
// would unmount (syscall.Unmount) and wait, then sync(2) for the backing
// directory's durability, and reset removes the new directory from the
// backing directory.
type fuseTarget struct {
	name string
	dir  string // its own directory: mountpoint, store or backing dir, log
	mnt  string
	log  string

	load  func(t *fuseTarget, src string) error
	argv  func(t *fuseTarget) []string
	ready func(t *fuseTarget, p *proc) (bool, error) // nil: mnt is mounted
	stop  func(t *fuseTarget, p *proc) error         // nil: SIGTERM, wait, exit 0
	reset func(t *fuseTarget, pl *plan) ([]problem, error)

	memfs bool  // a memfs mount (.memfs/status, flush on fsync)
	p     *proc // the serving process of this round
}

func (t *fuseTarget) Name() string { return t.name }

func (t *fuseTarget) Setup(src string) error {
	t.mnt = filepath.Join(t.dir, "mnt")
	t.log = filepath.Join(t.dir, "serve.log")
	if err := os.MkdirAll(t.mnt, 0o755); err != nil {
		return err
	}
	return t.load(t, src)
}

func (t *fuseTarget) Mount() (string, error) {
	if t.p != nil {
		return "", fmt.Errorf("%s: already mounted", t.name)
	}
	registerMount(t.mnt)
	p, err := startProc(t.argv(t), t.log)
	if err != nil {
		return "", err
	}
	t.p = p
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var ok bool
		if t.ready != nil {
			ok, err = t.ready(t, p)
		} else {
			ok = isMounted(t.mnt)
		}
		if err != nil {
			return "", err
		}
		if ok {
			return t.mnt, nil
		}
		select {
		case <-p.done:
			return "", fmt.Errorf("%s: the serving process exited before the mount was ready (%v)\n%s", t.name, p.err, tail(t.log, 20))
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s: not mounted after 2 minutes\n%s", t.name, tail(t.log, 20))
		}
	}
}

func (t *fuseTarget) Durable() error {
	if t.p == nil {
		return fmt.Errorf("%s: not mounted", t.name)
	}
	p := t.p
	t.p = nil
	var err error
	if t.stop != nil {
		err = t.stop(t, p)
	} else {
		err = p.stop(syscall.SIGTERM, 10*time.Minute)
	}
	if err != nil {
		return fmt.Errorf("%s: stop: %v\n%s", t.name, err, tail(t.log, 20))
	}
	if isMounted(t.mnt) {
		return fmt.Errorf("%s: still mounted after its process exited", t.name)
	}
	return nil
}

func (t *fuseTarget) Reset(pl *plan) ([]problem, error) { return t.reset(t, pl) }

func (t *fuseTarget) Close() error {
	if t.p == nil {
		return nil
	}
	p := t.p
	t.p = nil
	return p.stop(syscall.SIGTERM, time.Minute)
}

// newMemfs is memfs serving a store of kind "dir" or "badger". store is
// the store's path; "" means dir/store, loaded by memfs import in Setup. A
// dir store given as store is served as it is (it is the tree Setup gets).
func newMemfs(bin, kind, dir, store string, mountArgs []string) *fuseTarget {
	path := store
	if path == "" {
		path = filepath.Join(dir, "store")
	}
	spec := kind + ":" + path
	if kind == "etcd" {
		spec = store // etcd://HOST:PORT/NS: nothing local but the journals
	}
	return &fuseTarget{
		name:  "memfs " + kind,
		dir:   dir,
		memfs: true,
		load: func(t *fuseTarget, src string) error {
			if kind == "dir" && path == src {
				return nil // the tree is the store: 1:1 paths
			}
			if kind != "etcd" {
				if err := os.MkdirAll(path, 0o755); err != nil {
					return err
				}
			}
			out, err := output(bin, "import", "--store", spec, src)
			if err != nil {
				return fmt.Errorf("memfs import: %v\n%s", err, out)
			}
			return nil
		},
		argv: func(t *fuseTarget) []string {
			a := []string{bin, "mount", "--store", spec, "--flush-interval", "0"}
			a = append(a, mountArgs...)
			return append(a, t.mnt)
		},
		// Ready when .memfs/status is readable and names this process.
		ready: func(t *fuseTarget, p *proc) (bool, error) {
			b, err := os.ReadFile(filepath.Join(t.mnt, ".memfs", "status"))
			if err != nil {
				return false, nil
			}
			return bytes.Contains(b, []byte("pid: "+strconv.Itoa(p.pid)+"\n")), nil
		},
		// Durable: SIGTERM, which flushes and unmounts; memfs exits 0 after
		// its final flush (nil stop does exactly that).
		// Reset: the store must hold exactly the tree's keys and the
		// created ones, with their sizes (memfs ls -l); then memfs rm -r.
		reset: func(t *fuseTarget, pl *plan) ([]problem, error) {
			out, err := output(bin, "ls", "-l", "--store", spec)
			if err != nil {
				return nil, fmt.Errorf("memfs ls: %v\n%s", err, out)
			}
			probs := checkKeys(out, pl)
			if out, err := output(bin, "rm", "-r", "--store", spec, newDir); err != nil {
				return probs, fmt.Errorf("memfs rm: %v\n%s", err, out)
			}
			return probs, nil
		},
	}
}

// isMemfs reports whether t is a memfs mount.
func isMemfs(t Target) bool {
	ft, ok := t.(*fuseTarget)
	return ok && ft.memfs
}

// memfsStatus reads .memfs/status under a memfs mount.
func memfsStatus(root string) (status.Status, error) {
	b, err := os.ReadFile(filepath.Join(root, ".memfs", "status"))
	if err != nil {
		return status.Status{}, err
	}
	return status.Parse(b)
}

// procMem returns VmRSS and VmHWM of process pid, in bytes.
func procMem(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		var kb int64
		if _, e := fmt.Sscanf(l, "VmRSS: %d kB", &kb); e == nil {
			rss = kb << 10
		} else if _, e := fmt.Sscanf(l, "VmHWM: %d kB", &kb); e == nil {
			hwm = kb << 10
		}
	}
	if rss == 0 || hwm == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status: no VmRSS/VmHWM", pid)
	}
	return rss, hwm, nil
}

// --- processes and mounts, and their cleanup ---

type proc struct {
	pid  int
	cmd  *exec.Cmd
	done chan struct{}
	err  error // valid after done
}

var reg = struct {
	sync.Mutex
	procs   map[int]*proc
	mounts  []string
	pidFile string // pids appended here, for scripts/bench.sh's safety net
}{procs: map[int]*proc{}}

func registerMount(mnt string) {
	reg.Lock()
	defer reg.Unlock()
	for _, m := range reg.mounts {
		if m == mnt {
			return
		}
	}
	reg.mounts = append(reg.mounts, mnt)
}

// startProc starts argv in its own process group, its output appended to
// logPath. It gets SIGTERM if the benchmark dies.
func startProc(argv []string, logPath string) (*proc, error) {
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(lf, "=== %s %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Dir = "/" // never hold a mountpoint busy
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	reg.Lock()
	if interrupted.Load() {
		reg.Unlock()
		lf.Close()
		return nil, errInterrupted
	}
	err = cmd.Start()
	if err != nil {
		reg.Unlock()
		lf.Close()
		return nil, err
	}
	p := &proc{pid: cmd.Process.Pid, cmd: cmd, done: make(chan struct{})}
	reg.procs[p.pid] = p
	if reg.pidFile != "" {
		if f, err := os.OpenFile(reg.pidFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			fmt.Fprintln(f, p.pid)
			f.Close()
		}
	}
	reg.Unlock()
	go func() {
		p.err = cmd.Wait()
		lf.Close()
		reg.Lock()
		delete(reg.procs, p.pid)
		reg.Unlock()
		close(p.done)
	}()
	return p, nil
}

// stop sends sig and waits up to timeout for the exit, then kills.
func (p *proc) stop(sig syscall.Signal, timeout time.Duration) error {
	select {
	case <-p.done:
		return fmt.Errorf("had already exited: %v", p.err)
	default:
	}
	if err := syscall.Kill(p.pid, sig); err != nil {
		return err
	}
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		syscall.Kill(p.pid, syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("did not exit within %v of %v; killed", timeout, sig)
	}
}

var cleanupMu sync.Mutex

// cleanup stops every process the benchmark started (by pid: SIGTERM, then
// SIGKILL) and detaches every mount of its own that is left. Safe to call
// from the signal handler while the runner is busy.
func cleanup() {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	reg.Lock()
	procs := make([]*proc, 0, len(reg.procs))
	for _, p := range reg.procs {
		procs = append(procs, p)
	}
	mounts := append([]string(nil), reg.mounts...)
	reg.Unlock()
	// The etcd server goes last: a memfs mount on it flushes on SIGTERM.
	sort.SliceStable(procs, func(i, j int) bool { return procs[j] == etcdProc && procs[i] != etcdProc })
	for _, p := range procs {
		err := p.stop(syscall.SIGTERM, 30*time.Second)
		if p == etcdProc && killedBy(err, syscall.SIGTERM) {
			err = nil // etcd 3.4 exits by the signal itself: that is its clean stop
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: cleanup: process %d: %v\n", p.pid, err)
		}
	}
	for _, m := range mounts {
		if isMounted(m) {
			fmt.Fprintf(os.Stderr, "bench: cleanup: detaching %s\n", m)
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
				fmt.Fprintf(os.Stderr, "bench: cleanup: umount -l %s: %v\n", m, err)
			}
		}
	}
}

// mountsUnder lists the mountpoints at or under dir.
func mountsUnder(dir string) []string {
	var out []string
	for _, m := range mountpoints() {
		if m == dir || strings.HasPrefix(m, dir+"/") {
			out = append(out, m)
		}
	}
	return out
}

func isMounted(mnt string) bool {
	for _, m := range mountpoints() {
		if m == mnt {
			return true
		}
	}
	return false
}

func mountpoints() []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 {
			out = append(out, unescapeOctal(f[4]))
		}
	}
	return out
}

// unescapeOctal undoes mountinfo's \040-style escapes.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// --- small helpers ---

func output(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = "/"
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String() + errb.String(), err
	}
	return out.String(), nil
}

func runQuiet(name string, args ...string) error {
	out, err := output(name, args...)
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  | " + strings.Join(lines, "\n  | ")
}

// newDir is where the create workload puts its files.
const newDir = "new"

// A problem is a checked output that was wrong, under the row (workload)
// that produced it.
type problem struct{ key, msg string }

func (p problem) String() string { return p.key + ": " + p.msg }

// checkDir compares a directory after a round (native, or a passthrough's
// backing directory) with what it must hold: the tree unchanged (edit: the
// undone sed -i; no temp file left), no large file, and every created file
// (durable). repair: rewrite and remove until it holds the tree again; in
// any case the created files are removed.
func checkDir(dir string, pl *plan, repair bool) ([]problem, error) {
	var probs []problem
	listed := 0
	add := func(key, format string, args ...any) {
		if listed < 3 {
			probs = append(probs, problem{key, fmt.Sprintf(format, args...)})
		}
		listed++
	}
	wrong, stray := 0, 0
	for _, f := range pl.tree {
		p := filepath.Join(dir, f.rel)
		if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, f.data) {
			wrong++
			switch {
			case err != nil:
				add("edit", "%s: %v", f.rel, err)
			case bytes.Equal(b, append([]byte(editPrefix), f.data...)):
				add("edit", "%s holds the edited text after the round (the undo, done and checked through the mount, did not reach the backing directory)", f.rel)
			default:
				add("edit", "%s: %d bytes, not the tree's %d", f.rel, len(b), len(f.data))
			}
			if repair {
				if err := os.WriteFile(p, f.data, 0o644); err != nil {
					return probs, err
				}
			}
		}
	}
	summary := func() {
		if listed > 3 {
			probs = append(probs, problem{"edit", fmt.Sprintf("in all: %d of the tree's files wrong, %d unexpected entries in its directories", wrong, stray)})
		}
	}
	want := map[string]bool{newDir: true}
	for d := range pl.perDir {
		want[d] = true
		ents, err := os.ReadDir(filepath.Join(dir, d))
		if err != nil {
			return probs, err
		}
		if len(ents) != pl.perDir[d] {
			for _, e := range ents {
				if !pl.inTree[filepath.Join(d, e.Name())] {
					stray++
					add("edit", "%s: unexpected entry %s (a sed temp file?)", d, e.Name())
					if repair {
						if err := os.RemoveAll(filepath.Join(dir, d, e.Name())); err != nil {
							return probs, err
						}
					}
				}
			}
		}
	}
	summary()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return probs, err
	}
	for _, e := range ents {
		if want[e.Name()] || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		key := "edit"
		if e.Name() == bigName {
			key = "seqw"
		}
		probs = append(probs, problem{key, "unexpected entry " + e.Name() + " in the root"})
		if repair {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return probs, err
			}
		}
	}
	missing := 0
	for _, f := range pl.newFiles {
		if b, err := os.ReadFile(filepath.Join(dir, f.rel)); err != nil || !bytes.Equal(b, f.data) {
			missing++
		}
	}
	if missing > 0 {
		probs = append(probs, problem{"durable", fmt.Sprintf("%d of the %d created files missing or wrong after the unmount", missing, len(pl.newFiles))})
	}
	return probs, os.RemoveAll(filepath.Join(dir, newDir))
}

// checkKeys compares memfs ls -l output (mode uid gid size date time key)
// with the tree's and the created files' keys and sizes.
func checkKeys(ls string, pl *plan) []problem {
	want := map[string]int{}
	for _, f := range pl.tree {
		want[f.rel] = len(f.data)
	}
	for _, f := range pl.newFiles {
		want[f.rel] = len(f.data)
	}
	var probs []problem
	add := func(key, format string, args ...any) {
		if len(probs) < 20 {
			probs = append(probs, problem{key, fmt.Sprintf(format, args...)})
		}
	}
	seen := 0
	for _, l := range strings.Split(strings.TrimSpace(ls), "\n") {
		f := strings.Fields(l)
		if len(f) < 7 {
			add("edit", "memfs ls -l: unexpected line %q", l)
			continue
		}
		if strings.HasPrefix(f[0], "d") {
			continue // directories are entries too (memfs ls -l lists them)
		}
		k := f[len(f)-1]
		size, _ := strconv.Atoi(f[3])
		w, ok := want[k]
		key := "edit"
		switch {
		case k == bigName:
			key = "seqw"
		case strings.HasPrefix(k, newDir+"/"):
			key = "durable"
		}
		switch {
		case !ok:
			add(key, "unexpected key %s in the store", k)
		case size != w:
			add(key, "%s: %d bytes in the store, want %d", k, size, w)
		default:
			seen++
		}
	}
	if seen != len(want) {
		add("durable", "the store holds %d of the %d expected keys with their sizes", seen, len(want))
	}
	return probs
}

// --- peer FUSE filesystems: passthroughs over a backing directory ---

// newPassthrough is a FUSE filesystem that serves a backing directory at
// the mountpoint, run in the foreground by argv. backing "" means a copy of
// the tree in dir/backing, made by Setup; otherwise backing is the tree
// Setup gets, served as it is. Durable unmounts it (umount(2)), waits for
// the process, then sync(2)s the backing directory's filesystem.
func newPassthrough(name, dir, backing string, argv func(backing, mnt string) []string) *fuseTarget {
	copied := backing == ""
	if copied {
		backing = filepath.Join(dir, "backing")
	}
	return &fuseTarget{
		name: name,
		dir:  dir,
		load: func(t *fuseTarget, src string) error {
			if !copied {
				return nil
			}
			return runQuiet("cp", "-a", src, backing)
		},
		argv: func(t *fuseTarget) []string { return argv(backing, t.mnt) },
		stop: func(t *fuseTarget, p *proc) error {
			var err error
			for range 100 {
				if err = syscall.Unmount(t.mnt, 0); err == nil || !errors.Is(err, syscall.EBUSY) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				p.stop(syscall.SIGTERM, time.Minute)
				return fmt.Errorf("unmount: %w", err)
			}
			select {
			case <-p.done:
			case <-time.After(10 * time.Minute):
				return errors.New("did not exit after its unmount")
			}
			syscall.Sync()
			return nil
		},
		// Reset: check the backing directory and repair it, so that a
		// peer that lost data starts the next round from the tree again;
		// rclone's cache goes too (it would upload stale items again).
		reset: func(t *fuseTarget, pl *plan) ([]problem, error) {
			probs, err := checkDir(backing, pl, true)
			if err != nil {
				return probs, err
			}
			return probs, os.RemoveAll(filepath.Join(dir, "cache"))
		},
	}
}
