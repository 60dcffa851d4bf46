package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// notifySocket is a service manager's end of sd_notify: a unix datagram
// socket, as systemd makes for a Type=notify unit.
func notifySocket(t *testing.T) (string, *net.UnixConn) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return path, conn
}

// nextNotice reads the next datagram sent to conn.
func nextNotice(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	return string(buf[:n])
}

// TestMountNotifiesServiceManager: under systemd Type=notify, memfs mount
// says READY=1 once its mount answers, and STOPPING=1 when it unmounts.
func TestMountNotifiesServiceManager(t *testing.T) {
	path, conn := notifySocket(t)
	mnt := t.TempDir()
	p := startMount(t, "dir:"+t.TempDir(), mnt, []string{"NOTIFY_SOCKET=" + path})
	ready := nextNotice(t, conn)
	if !strings.Contains(ready, "READY=1") || !strings.Contains(ready, "STATUS=serving dir:") {
		t.Fatalf("first notification %q, want READY=1 and a STATUS naming the store", ready)
	}
	if err := p.terminate(t); err != nil {
		t.Fatalf("memfs mount after SIGTERM: %v\n%s", err, p.log)
	}
	if got := nextNotice(t, conn); got != "STOPPING=1" {
		t.Errorf("notification at unmount %q, want STOPPING=1", got)
	}
}

// TestMountNotifyOnlyWhenReady: the first notification of a mount that
// fails is its error, never READY=1.
func TestMountNotifyOnlyWhenReady(t *testing.T) {
	path, conn := notifySocket(t)
	mnt := t.TempDir()
	if err := os.WriteFile(filepath.Join(mnt, "in-the-way"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "mount", "--store", "dir:"+t.TempDir(), mnt)
	cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1", "NOTIFY_SOCKET="+path)
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("mount on a non-empty directory succeeded:\n%s", out)
	}
	if got := nextNotice(t, conn); !strings.HasPrefix(got, "STATUS=") || !strings.Contains(got, "is not empty") {
		t.Errorf("notification %q, want STATUS= with the error", got)
	}
}

// daemonMount runs memfs mount --daemon with args and returns its output
// and exit error; cleanup stops the process it started.
func daemonMount(t *testing.T, args ...string) (string, error) {
	t.Helper()
	h := newHelperMounts(t)
	cmd := exec.Command(os.Args[0], append([]string{"mount", "--daemon", "--flush-interval", "0"}, args...)...)
	cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1")
	out, err := cmd.CombinedOutput()
	if m := regexp.MustCompile(`as process (\d+)`).FindStringSubmatch(string(out)); m != nil {
		pid, _ := strconv.Atoi(m[1])
		h.pids = append(h.pids, pid)
	}
	h.mnts = append(h.mnts, args[len(args)-1])
	return string(out), err
}

// TestMountDaemon: mount --daemon returns 0 only once the mount answers,
// served by a process that outlives it, logging to --log-file (0600).
func TestMountDaemon(t *testing.T) {
	store, mnt := t.TempDir(), t.TempDir()
	logPath := filepath.Join(t.TempDir(), "memfs.log")
	out, err := daemonMount(t, "--store", "dir:"+store, "--log-file", logPath, mnt)
	if err != nil {
		t.Fatalf("mount --daemon: %v\n%s", err, out)
	}
	// No wait: the mount answers when the command has returned.
	if _, err := os.ReadFile(filepath.Join(mnt, ".memfs", "status")); err != nil {
		t.Fatalf("mount --daemon returned, but the mount does not answer: %v\n%s", err, out)
	}
	if !strings.Contains(out, "logging to "+logPath) {
		t.Errorf("output %q does not name the log", out)
	}
	fi, err := os.Stat(logPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("log file: %v, %v; want mode 0600", fi, err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "note.md"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "", "unmount", mnt)
	if got, err := os.ReadFile(filepath.Join(store, "note.md")); err != nil || string(got) != "kept\n" {
		t.Errorf("store after unmount: %q, %v", got, err)
	}
	if log, _ := os.ReadFile(logPath); !strings.Contains(string(log), "msg=mounted") {
		t.Errorf("log %s lacks the mount's lines:\n%s", logPath, log)
	}
}

// TestMountDaemonFails: a daemon that cannot mount exits non-zero with
// the mount's own error; a --log-file that is a symlink is refused and
// its target left alone.
func TestMountDaemonFails(t *testing.T) {
	mnt := t.TempDir()
	if err := os.WriteFile(filepath.Join(mnt, "in-the-way"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := daemonMount(t, "--store", "dir:"+t.TempDir(), "--log-file", filepath.Join(t.TempDir(), "log"), mnt)
	if err == nil || !strings.Contains(out, "is not empty") {
		t.Errorf("mount --daemon on a non-empty directory: %v, want a failure naming it\n%s", err, out)
	}

	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "log")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	out, err = daemonMount(t, "--store", "dir:"+t.TempDir(), "--log-file", link, t.TempDir())
	if err == nil || !strings.Contains(out, "symlink") {
		t.Errorf("--log-file on a symlink: %v, want a refusal\n%s", err, out)
	}
	if got, _ := os.ReadFile(target); string(got) != "mine\n" {
		t.Errorf("the symlink's target was written: %q", got)
	}
}

// TestAnswerFilesReportTheirSize: .memfs/search/QUERY and
// .memfs/context/QUERY stat as the size of the caller's answer, as
// .memfs/status does, so that tools that trust st_size (rsync, a
// size-first reader) read it whole; an error's text too.
func TestAnswerFilesReportTheirSize(t *testing.T) {
	store, mnt := "dir:"+t.TempDir(), t.TempDir()
	mustRun(t, "kernel cache notes\n", "put", "--store", store, "memory/a.md")
	startMount(t, store, mnt, nil)
	for _, rel := range []string{".memfs/search/kernel cache", ".memfs/context/kernel cache", ".memfs/search/kernel top:zero"} {
		path := filepath.Join(mnt, rel)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 || fi.Size() != int64(len(data)) {
			t.Errorf("%s: stat size %d, content %d bytes; want the content's size", rel, fi.Size(), len(data))
		}
	}
}
