package mountclient_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/internal/mounttest"
	"github.com/memfs/memfs/mountclient"
)

// A Client checks its mount once (Open reads .memfs/status); its
// operations then check only that the mountpoint is still that very
// mount, without reading the status again: 100 operations, 1 read.
func TestRootChecksTheMountOnce(t *testing.T) {
	_, mnt := mountDir(t)
	before := mountclient.StatusReads()
	c, err := mountclient.Open(mnt, mountclient.Own)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		key := fmt.Sprintf("memory/n%d.md", i)
		if err := c.Put(key, []byte("v"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Cat(key); err != nil {
			t.Fatal(err)
		}
	}
	if n := mountclient.StatusReads() - before; n != 1 {
		t.Errorf("Open and 100 operations read .memfs/status %d times, want 1", n)
	}
}

// serveAt serves the dir store at dir at mnt in this process until stop.
func serveAt(t *testing.T, dir, mnt string) (stop func()) {
	t.Helper()
	return mounttest.Serve(t, dir, mnt, memfs.Options{})
}

// A Client whose mount was unmounted does nothing through the plain
// mountpoint, nor through another mount made there since (which the
// kernel may give the same device number).
func TestRootRefusesAMountGoneOrReplaced(t *testing.T) {
	mounttest.NeedFUSE(t)
	mnt := t.TempDir()
	stop := serveAt(t, t.TempDir(), mnt)
	c, err := mountclient.Open(mnt, mountclient.Own)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Put("a.md", []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	stop()
	if err := c.Put("a.md", []byte("two"), 0o644); !errors.Is(err, mountclient.ErrNotLive) {
		t.Errorf("Put through an unmounted mountpoint: %v, want ErrNotLive", err)
	}
	if _, err := os.Lstat(filepath.Join(mnt, "a.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the plain mountpoint holds a.md (%v)", err)
	}
	other := t.TempDir()
	serveAt(t, other, mnt)
	if err := c.Put("b.md", []byte("three"), 0o644); !errors.Is(err, mountclient.ErrNotLive) {
		t.Errorf("Put through another mount at the same point: %v, want ErrNotLive", err)
	}
	if _, err := os.Lstat(filepath.Join(other, "b.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("another store got b.md (%v)", err)
	}
}
