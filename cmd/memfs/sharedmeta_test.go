package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// Every attribute is part of a version (issue 26): a chmod, chown and
// setxattr on mount A, fsynced, reach mount B of the same etcd namespace
// (stat and getfattr on B within a bounded wait; an inotify watcher on B
// hears IN_ATTRIB), and B's own next write
// of the files keeps them, with no conflict copy.
func TestSharedMetadataReachesTheOtherMount(t *testing.T) {
	a, b := twoMounts(t, sharedEtcdStore(t), sharedEnv(t))
	am := func(k string) string { return filepath.Join(a.mnt, "memory", k) }
	bm := func(k string) string { return filepath.Join(b.mnt, "memory", k) }
	for _, k := range []string{"f.md", "g.md", "h.md"} {
		if err := writeSync(am(k), []byte(k+"\n")); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"f.md", "g.md", "h.md"} {
		waitFor(t, "B sees "+k, 10*time.Second, func() bool { return readBack(bm(k)) == k+"\n" })
	}

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ev := watchDir(t, filepath.Join(b.mnt, "memory"))
	must(os.Chmod(am("f.md"), 0o600))
	must(os.Chown(am("g.md"), 65534, 65534))
	must(unix.Setxattr(am("h.md"), "user.memfs.tags", []byte("ops"), 0))
	f, err := os.Open(am("f.md"))
	must(err)
	must(f.Sync())
	f.Close()

	stat := func(p string) (os.FileMode, uint32) {
		fi, err := os.Stat(p)
		if err != nil {
			return 0, 0
		}
		return fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid
	}
	waitFor(t, "A's chmod 600 on B", 5*time.Second, func() bool { m, _ := stat(bm("f.md")); return m.Perm() == 0o600 })
	waitFor(t, "A's chown on B", 5*time.Second, func() bool { _, uid := stat(bm("g.md")); return uid == 65534 })
	waitFor(t, "A's setxattr on B", 5*time.Second, func() bool {
		buf := make([]byte, 64)
		n, err := unix.Getxattr(bm("h.md"), "user.memfs.tags", buf)
		return err == nil && string(buf[:n]) == "ops"
	})

	// A watcher on B hears each as an attribute change (IN_ATTRIB).
	for _, k := range []string{"f.md", "g.md", "h.md"} {
		waitFor(t, "IN_ATTRIB of "+k+" on B", 5*time.Second, func() bool { return ev.has(k, fsnotify.Chmod) })
	}

	// B's next writes keep A's metadata, and copy nothing.
	for _, k := range []string{"f.md", "g.md", "h.md"} {
		must(writeSync(bm(k), []byte("B's "+k+"\n")))
	}
	waitFor(t, "B's write on A", 10*time.Second, func() bool { return readBack(am("h.md")) == "B's h.md\n" })
	if m, _ := stat(am("f.md")); m.Perm() != 0o600 {
		t.Errorf("f.md on A after B's write: %v, want 0600", m)
	}
	if _, uid := stat(am("g.md")); uid != 65534 {
		t.Errorf("g.md on A after B's write: uid %d, want 65534", uid)
	}
	if got := conflictCopies(t, a.mnt, ""); len(got) > 0 {
		t.Errorf("conflict copies after B's writes: %v\nA:\n%s\nB:\n%s", got, a.log, b.log)
	}
}
