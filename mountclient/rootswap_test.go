package mountclient_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/memfs/memfs/mountclient"
)

// Root checks the mount it opened, not the path again: a mountpoint path
// (a symlink) that points at a bind mount of a part of the same memfs
// when Root opens it, and back at the mount when the mount id is read,
// must be refused (the bind mount has the same device and another id).
func TestRootChecksTheMountItOpened(t *testing.T) {
	_, mnt := mountDir(t)
	if err := os.MkdirAll(filepath.Join(mnt, "memory", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	bind := t.TempDir()
	if err := syscall.Mount(filepath.Join(mnt, "memory", "sub"), bind, "", syscall.MS_BIND, ""); err != nil {
		t.Fatalf("bind mount (the test needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(bind, syscall.MNT_DETACH) })
	link := filepath.Join(t.TempDir(), "mem")
	if err := os.Symlink(mnt, link); err != nil {
		t.Fatal(err)
	}
	c, err := mountclient.Open(link, mountclient.Own)
	if err != nil {
		t.Fatal(err)
	}
	point := func(target string) {
		t.Helper()
		tmp := link + ".new"
		if err := os.Symlink(target, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, link); err != nil {
			t.Fatal(err)
		}
	}
	point(bind)
	mountclient.AfterRootOpen(func() { point(mnt) })
	t.Cleanup(func() { mountclient.AfterRootOpen(nil) })
	r, err := c.Root()
	if err == nil {
		defer r.Close()
		if _, serr := r.Stat("memory"); serr != nil {
			t.Fatalf("Root opened the bind mount of memory/sub (no memory/ in it: %v) and its check passed", serr)
		}
	}
}
