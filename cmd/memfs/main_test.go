package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/internal/mounthelper"
	"github.com/memfs/memfs/internal/mountinfo"
	"github.com/memfs/memfs/internal/syncbuf"
)

// TestMain lets the test binary act as the memfs command in subprocesses
// (MEMFS_TEST_MAIN=1), so that crash tests can kill a real memfs process;
// it runs the tests through etcdtest.RunShared, which stops the etcd
// server the tests share (sharedEtcdStore).
func TestMain(m *testing.M) {
	// mount(8) and umount(8) run the helper links memfs install made to
	// this binary (TestMountTypeFuseMemfs) by the links' names; the memfs
	// they start is this binary too.
	if b := filepath.Base(os.Args[0]); b == mounthelper.Name || b == mounthelper.UmountName {
		os.Setenv("MEMFS_TEST_MAIN", "1")
	}
	if os.Getenv("MEMFS_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	if dir := os.Getenv("MEMFS_TEST_WRITER"); dir != "" {
		// A writer in a process of its own (see startWriter).
		writerMain(dir, os.Getenv("MEMFS_TEST_WRITER_TAG"))
		os.Exit(0)
	}
	os.Exit(etcdtest.RunShared(m))
}

// Parallel tests: a long test that changes nothing of the process (no
// t.Setenv, no package variable), measures no latency and holds no wall
// clock bound calls t.Parallel, and so do its store-kind subtests; they
// run together after the others (go test -parallel, GOMAXPROCS by
// default). The etcd tests with MEMFS_ETCD_TIMEOUT=1s stay serial: under
// load a slow request would read as an outage.

// appMu serializes the in-process runs of the app: urfave/cli's parse
// writes to its package-level flags (cli.HelpFlag), which every App
// shares, and parallel tests run the app at once (the race detector
// caught it).
var appMu sync.Mutex

// run runs the app in-process and returns its output.
func run(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	appMu.Lock()
	defer appMu.Unlock()
	var stdout, stderr bytes.Buffer
	app := newApp(&stdout, &stderr)
	app.Reader = strings.NewReader(stdin)
	err := app.RunContext(context.Background(), append([]string{"memfs"}, args...))
	return stdout.String(), stderr.String(), err
}

func mustRun(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := run(t, stdin, args...)
	if err != nil {
		t.Fatalf("memfs %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// backends returns a --store value of each kind, in fresh directories.
func backends(t *testing.T) map[string]func() string {
	return map[string]func() string{
		"dir":    func() string { return "dir:" + t.TempDir() },
		"badger": func() string { return "badger:" + t.TempDir() },
	}
}

// memfsProc is a memfs mount running in a subprocess.
type memfsProc struct {
	cmd  *exec.Cmd
	mnt  string
	log  *syncbuf.Buffer
	done chan error
}

// startMount starts "memfs mount" in a subprocess and waits until the mount
// answers. Cleanup stops it (SIGTERM, then SIGKILL) and detaches the mount
// if it is still there.
func startMount(t *testing.T, store, mnt string, env []string, extra ...string) *memfsProc {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("MEMFS_SKIP_MOUNT_TESTS") != "" {
			t.Skip("MEMFS_SKIP_MOUNT_TESTS is set")
		}
		t.Fatalf("mount tests need /dev/fuse (%v); set MEMFS_SKIP_MOUNT_TESTS=1 to skip them", err)
	}
	args := append([]string{"mount", "--store", store, "--flush-interval", "0"}, extra...)
	args = append(args, mnt)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "MEMFS_TEST_MAIN=1"), env...)
	log := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &memfsProc{cmd: cmd, mnt: mnt, log: log, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { p.stop(t) })
	// Generous: a mount after a kill replays the journal and flushes it
	// (with its history) before it serves; 4,000 files under -race beside
	// other tests took more than 15 s in CI.
	up := await.Cond(60*time.Second, 20*time.Millisecond, func() bool {
		if _, err := os.ReadFile(filepath.Join(mnt, ".memfs", "status")); err == nil {
			return true
		}
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("memfs mount exited early: %v\n%s", err, log)
		default:
		}
		return false
	})
	if !up {
		t.Fatalf("mount did not come up in time\n%s", log)
	}
	return p
}

// stop ends the process if it still runs and removes a leftover mount.
func (p *memfsProc) stop(t *testing.T) {
	select {
	case err := <-p.done:
		p.done <- err
	default:
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-p.done:
			p.done <- err
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			p.waitDead(t)
		}
	}
	if isMounted(p.mnt) {
		syscall.Unmount(p.mnt, syscall.MNT_DETACH)
	}
}

// waitDead waits for the killed process. One still alive 10 s after
// SIGKILL is either slow (a loaded machine: its threads wait on nothing of
// FUSE's) and gets 50 s more, or waits on its own mount (a thread or its
// helper child in a request only it could answer): then the mount's FUSE
// connection is aborted, as `memfs unmount` does, and that is reported.
func (p *memfsProc) waitDead(t *testing.T) {
	wait := func(d time.Duration) bool {
		select {
		case err := <-p.done:
			p.done <- err
			return true
		case <-time.After(d):
			return false
		}
	}
	if wait(10 * time.Second) {
		return
	}
	// What each of its threads waits on.
	stacks := func() string {
		out, _ := exec.Command("sh", "-c", fmt.Sprintf("cat /proc/%d/task/*/stack 2>&1", p.cmd.Process.Pid)).CombinedOutput()
		return string(out)
	}
	out := stacks()
	if !strings.Contains(out, "fuse") {
		t.Logf("memfs (pid %d) still alive 10 s after SIGKILL, in no FUSE request: waiting longer", p.cmd.Process.Pid)
		if wait(50 * time.Second) {
			return
		}
		out = stacks()
	}
	t.Logf("kernel stacks of the process:\n%s", out)
	err := mountinfo.Abort(p.mnt)
	t.Errorf("memfs (pid %d) did not exit after SIGKILL: it waited on its own mount; aborted the FUSE connection (%v)", p.cmd.Process.Pid, err)
	p.done <- <-p.done
}

// kill9 kills the process with SIGKILL and detaches its dead mount.
func (p *memfsProc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.waitDead(t)
	if err := syscall.Unmount(p.mnt, syscall.MNT_DETACH); err != nil {
		t.Fatalf("detach dead mount %s: %v", p.mnt, err)
	}
}

// terminate sends SIGTERM and returns the exit error.
func (p *memfsProc) terminate(t *testing.T) error {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("memfs did not exit after SIGTERM\n%s", p.log)
		return nil
	}
}

// waitFor polls cond until it holds, and fails t if d passes first.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	await.True(t, what, d, cond)
}

// fsyncPath flushes the mount's session through a descriptor of its own.
func fsyncPath(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatalf("fsync %s: %v", path, err)
	}
}

// isMounted reports whether mnt is a mountpoint, from /proc/self/mountinfo.
func isMounted(mnt string) bool {
	_, ok := mountinfo.At(mnt)
	return ok
}
