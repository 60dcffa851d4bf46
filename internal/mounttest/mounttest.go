// Package mounttest serves a dir store through a real kernel mount in the
// test's own process, as memfs mount would, for the tests of the packages
// that work through a mount (mountclient, memorytool, mcpserver).
package mounttest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
)

// NeedFUSE fails t without /dev/fuse, or skips it where
// MEMFS_SKIP_MOUNT_TESTS says so.
func NeedFUSE(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("MEMFS_SKIP_MOUNT_TESTS") != "" {
			t.Skip("MEMFS_SKIP_MOUNT_TESTS is set")
		}
		t.Fatalf("mount tests need /dev/fuse (%v); set MEMFS_SKIP_MOUNT_TESTS=1 to skip them", err)
	}
}

// Serve serves the dir store at dir on mnt until stop is called or the
// test ends (an unmount that hangs is detached after 20 s). opts.Name
// defaults to the store's --store value, opts.JournalPath to the store's
// journal.
func Serve(t testing.TB, dir, mnt string, opts memfs.Options) (stop func()) {
	t.Helper()
	NeedFUSE(t)
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Name == "" {
		opts.Name = "dir:" + dir
	}
	if opts.JournalPath == "" {
		opts.JournalPath = filepath.Join(dir, dirstore.JournalName)
	}
	f, err := memfs.Open(context.Background(), st, opts)
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
		if err := f.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// Dir serves a new dir store at a new mountpoint until the test ends; it
// returns the store's directory and the mountpoint.
func Dir(t testing.TB, opts memfs.Options) (dir, mnt string) {
	t.Helper()
	dir, mnt = filepath.Join(t.TempDir(), "store"), t.TempDir()
	Serve(t, dir, mnt, opts)
	return dir, mnt
}

// PlantedLink serves a new dir store (Namespace on) with a private note,
// memory/private.md (0600, "secret"), and memory/link.md, a symlink to it
// as another user of a shared mount could plant: the case the other
// doors must refuse. It returns the mountpoint and the note's path.
func PlantedLink(t testing.TB) (mnt, private string) {
	t.Helper()
	_, mnt = Dir(t, memfs.Options{Namespace: true, Logger: slog.New(slog.DiscardHandler)})
	if err := os.MkdirAll(filepath.Join(mnt, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	private = filepath.Join(mnt, "memory", "private.md")
	if err := os.WriteFile(private, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("private.md", filepath.Join(mnt, "memory", "link.md")); err != nil {
		t.Fatal(err)
	}
	return mnt, private
}
