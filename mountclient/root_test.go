package mountclient_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
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
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := memfs.Open(context.Background(), st, memfs.Options{Name: "dir:" + dir, JournalPath: filepath.Join(dir, dirstore.JournalName)})
	if err != nil {
		t.Fatal(err)
	}
	m, err := f.Mount(mnt, memfs.MountOptions{})
	if err != nil {
		f.Close(context.Background())
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(20 * time.Second):
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
		f.Close(context.Background())
	}
	t.Cleanup(stop)
	return stop
}

// A Client whose mount was unmounted does nothing through the plain
// mountpoint, nor through another mount made there since (which the
// kernel may give the same device number).
func TestRootRefusesAMountGoneOrReplaced(t *testing.T) {
	needFUSE(t)
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
