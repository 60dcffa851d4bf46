package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/mounthelper"
)

func TestPlanMountSloppy(t *testing.T) {
	p, err := mounthelper.PlanMount("dir:/s", "/m", []string{"ro", "compress", "level=3"}, helperPlanOptions(true))
	if err != nil {
		t.Fatalf("sloppy planMount: %v", err)
	}
	if want := []string{"compress", "level=3"}; !slices.Equal(p.Ignored, want) {
		t.Errorf("ignored = %q, want %q", p.Ignored, want)
	}
	if want := []string{"mount", "--store", "dir:/s", "--read-only", "/m"}; !slices.Equal(p.MountArgs, want) {
		t.Errorf("mount arguments = %q, want %q", p.MountArgs, want)
	}
	// Through the command: -s given as mount(8) gives it, and -f to stop short of mounting.
	out, errOut, err := run(t, "", helperArgs([]string{"/sbin/mount.fuse.memfs", "dir:/s", "/m", "-sf", "-o", "rw,compress"}, newApp(nil, nil).Commands)[1:]...)
	if err != nil || !strings.Contains(errOut, "ignoring unknown mount options (sloppy): compress") || !strings.Contains(out, "memfs mount --store dir:/s /m") {
		t.Errorf("mount.fuse.memfs -sf: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
}

// helperMounts tracks what a test mounted through the helper, and
// unmounts it at cleanup: SIGTERM to the serving process it started (named
// by the mount's .memfs/status), then a lazy detach if still mounted.
type helperMounts struct {
	t    *testing.T
	pids []int
	mnts []string
}

func newHelperMounts(t *testing.T) *helperMounts {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("MEMFS_SKIP_MOUNT_TESTS") != "" {
			t.Skip("MEMFS_SKIP_MOUNT_TESTS is set")
		}
		t.Fatalf("mount tests need /dev/fuse (%v); set MEMFS_SKIP_MOUNT_TESTS=1 to skip them", err)
	}
	h := &helperMounts{t: t}
	t.Cleanup(h.cleanup)
	return h
}

// served records mnt and the pid serving it, and returns the pid.
func (h *helperMounts) served(mnt string) int {
	h.t.Helper()
	h.mnts = append(h.mnts, mnt)
	pid := mounthelper.ServedBy(mnt)
	if pid <= 0 {
		h.t.Fatalf("%s: .memfs/status names no pid after the helper returned", mnt)
	}
	h.pids = append(h.pids, pid)
	return pid
}

func (h *helperMounts) cleanup() {
	for _, mnt := range h.mnts {
		if pid := mounthelper.ServedBy(mnt); pid > 0 && !slices.Contains(h.pids, pid) {
			h.pids = append(h.pids, pid)
		}
	}
	for _, pid := range h.pids {
		if syscall.Kill(pid, 0) != nil {
			continue
		}
		syscall.Kill(pid, syscall.SIGTERM)
		if !mounthelper.ProcessGone(pid, 20*time.Second) {
			syscall.Kill(pid, syscall.SIGKILL)
			mounthelper.ProcessGone(pid, 10*time.Second)
		}
	}
	for _, mnt := range h.mnts {
		if isMounted(mnt) {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	}
}

// TestMountHelperInProcess runs the helper as mount.fuse3 runs it (memfs
// SOURCE DIR -o OPTS): it must return with the file system served by a
// background process, which memfs unmount then stops after a flush.
func TestMountHelperInProcess(t *testing.T) {
	h := newHelperMounts(t)
	t.Setenv("MEMFS_TEST_MAIN", "1") // the background process is this test binary acting as memfs
	store, mnt := t.TempDir(), t.TempDir()
	logPath := filepath.Join(t.TempDir(), "memfs.log")
	args := helperArgs([]string{"memfs", "dir:" + store, mnt, "-o", "rw,nosuid,nodev,_netdev,flush_interval=0,log=" + logPath}, newApp(nil, nil).Commands)
	out := mustRun(t, "", args[1:]...)
	pid := h.served(mnt)
	if pid == os.Getpid() {
		t.Fatalf("the mount is served by the test process itself, not a background one")
	}
	if !strings.Contains(out, "logging to "+logPath) {
		t.Errorf("helper output %q does not say where the log is", out)
	}
	if err := os.WriteFile(filepath.Join(mnt, "note.md"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "", "unmount", mnt)
	if isMounted(mnt) {
		t.Fatalf("%s still mounted after memfs unmount", mnt)
	}
	if got, err := os.ReadFile(filepath.Join(store, "note.md")); err != nil || string(got) != "kept\n" {
		t.Errorf("store after unmount: %q, %v; want the note flushed", got, err)
	}
	if log, _ := os.ReadFile(logPath); !strings.Contains(string(log), "msg=mounted") {
		t.Errorf("the serving process's log %s lacks its mount line:\n%s", logPath, log)
	}

	// A mount that fails reports the server's own error, and exits non-zero.
	if err := os.WriteFile(filepath.Join(mnt, "in-the-way"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "", helperArgs([]string{"memfs", "dir:" + store, mnt, "-o", "log=" + logPath}, newApp(nil, nil).Commands)[1:]...)
	if err == nil || !strings.Contains(err.Error(), "is not empty") || !strings.Contains(err.Error(), "before serving") {
		t.Errorf("helper on a non-empty mountpoint: error %v, want the server's \"is not empty\" error", err)
	}
	if isMounted(mnt) {
		t.Errorf("%s mounted although the helper failed", mnt)
	}
}

// testMemfs is this test binary, which is memfs with MEMFS_TEST_MAIN=1 or
// by a helper link's name (TestMain): go test built it once, no test
// builds memfs again.
func testMemfs(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// memfsCommand runs bin (testMemfs) as the memfs command with args.
func memfsCommand(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1")
	return cmd
}

// TestMountTypeFuseMemfs runs the real mount(8) for type fuse.memfs, from
// the command line and from an fstab file, through /sbin/mount.fuse.memfs
// as memfs install makes it.
func TestMountTypeFuseMemfs(t *testing.T) {
	t.Parallel()
	h := newHelperMounts(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: mount(8) looks for its helper only in /sbin and /usr/sbin")
	}
	if _, err := exec.LookPath("mount"); err != nil {
		t.Skip("no mount(8) on this machine")
	}
	bin := testMemfs(t)
	link, ulink := filepath.Join("/sbin", mounthelper.Name), filepath.Join("/sbin", mounthelper.UmountName)
	for _, l := range []string{link, ulink} {
		if _, err := os.Lstat(l); err == nil {
			t.Skipf("%s already exists (an installed memfs?); this test does not replace it", l)
		}
	}
	// The links go through memfs install, as a user would make them.
	installOut, err := memfsCommand(bin, "install", "--prefix", t.TempDir(), "--helper-dir", "/sbin").CombinedOutput()
	t.Cleanup(func() { os.Remove(link); os.Remove(ulink) })
	if err != nil {
		t.Fatalf("memfs install: %v\n%s", err, installOut)
	}
	if target, err := os.Readlink(link); err != nil || target != bin {
		t.Fatalf("%s -> %q (%v), want %s", link, target, err, bin)
	}
	store, mnt := t.TempDir(), t.TempDir()
	logDir := t.TempDir()

	// An fstab line, with the store in the first field.
	fstab := filepath.Join(t.TempDir(), "fstab")
	line := "dir:" + store + " " + mnt + " fuse.memfs noauto,_netdev,nofail,flush_interval=0,log=" + filepath.Join(logDir, "fstab.log") + " 0 0\n"
	if err := os.WriteFile(fstab, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-T", fstab, mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount -T %s %s: %v\n%s", fstab, mnt, err, out)
	}
	pid := h.served(mnt)
	if err := os.WriteFile(filepath.Join(mnt, "note.md"), []byte("from fstab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := memfsCommand(bin, "unmount", mnt).CombinedOutput(); err != nil {
		t.Fatalf("memfs unmount: %v\n%s", err, out)
	}
	if !mounthelper.ProcessGone(pid, 30*time.Second) {
		t.Fatalf("memfs process %d still runs after memfs unmount", pid)
	}
	if got, _ := os.ReadFile(filepath.Join(store, "note.md")); string(got) != "from fstab\n" {
		t.Errorf("store after the fstab mount: %q, want the note", got)
	}

	// mount -t: what the fstab mount wrote is there. umount(8), through
	// umount.fuse.memfs, returns only when memfs has made its last flush
	// and exited (systemd kills what is left of an fstab mount right after
	// umount): the new values are in the store at once.
	if out, err := exec.Command("mount", "-t", "fuse.memfs", "dir:"+store, mnt, "-o", "flush_interval=0,log="+filepath.Join(logDir, "t.log")).CombinedOutput(); err != nil {
		t.Fatalf("mount -t fuse.memfs: %v\n%s", err, out)
	}
	pid = h.served(mnt)
	if got, _ := os.ReadFile(filepath.Join(mnt, "note.md")); string(got) != "from fstab\n" {
		t.Errorf("note.md through mount -t = %q", got)
	}
	for i := range 50 {
		if err := os.WriteFile(filepath.Join(mnt, fmt.Sprintf("new-%02d.md", i)), []byte("unflushed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v\n%s", err, out)
	}
	gone := mounthelper.ProcessGone(pid, 0)
	got, _ := os.ReadFile(filepath.Join(store, "new-49.md"))
	if !gone || string(got) != "unflushed\n" {
		t.Errorf("when umount returned: memfs process %d gone %v, store has new-49.md %q; want gone and flushed", pid, gone, got)
		mounthelper.ProcessGone(pid, 30*time.Second)
	}

	// mount -t, read-only: writes fail.
	if out, err := exec.Command("mount", "-t", "fuse.memfs", "dir:"+store, mnt, "-o", "ro,log="+filepath.Join(logDir, "ro.log")).CombinedOutput(); err != nil {
		t.Fatalf("mount -t fuse.memfs -o ro: %v\n%s", err, out)
	}
	pid = h.served(mnt)
	if err := os.WriteFile(filepath.Join(mnt, "ro.md"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("write on an ro mount: %v, want EROFS", err)
	}
	if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v\n%s", err, out)
	}
	mounthelper.ProcessGone(pid, 30*time.Second)

	// A failing mount makes mount(8) fail with the server's error (a
	// missing mountpoint is made, as memfs mount does; a non-empty one
	// is refused).
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "taken"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "fuse.memfs", "dir:"+store, full, "-o", "log="+filepath.Join(logDir, "fail.log")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "is not empty") {
		if err == nil {
			h.served(full) // mounted after all: unmounted by the cleanup
		}
		t.Errorf("mount on a non-empty mountpoint: %v\n%s\nwant a failure with the server's error", err, out)
	}
}
