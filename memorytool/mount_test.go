package memorytool_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/memorytool"
	"github.com/memfs/memfs/mountclient"
)

// A write through the mount to a key that is a symlink (planted by
// another user of a shared mount) is refused: the link's target, a
// private note, is neither read nor written.
func TestMountWriteRefusesASymlink(t *testing.T) {
	needFUSE(t)
	dir := filepath.Join(t.TempDir(), "store")
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := memfs.Open(context.Background(), st, memfs.Options{JournalPath: filepath.Join(dir, dirstore.JournalName),
		Namespace: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mnt := t.TempDir()
	m, err := f.Mount(mnt, memfs.MountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- m.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
		if err := f.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if err := os.MkdirAll(filepath.Join(mnt, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(mnt, "memory", "private.md")
	if err := os.WriteFile(private, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("private.md", filepath.Join(mnt, "memory", "link.md")); err != nil {
		t.Fatal(err)
	}
	c, err := mountclient.Open(mnt, mountclient.Own)
	if err != nil {
		t.Fatal(err)
	}
	err = memorytool.Mount(c).WriteFile(t.Context(), "memory/link.md", []byte("overwritten"), *memfs.SelfWriter("test"))
	if err == nil {
		t.Error("a write to a key that is a symlink succeeded")
	}
	if b, err := os.ReadFile(private); err != nil || string(b) != "secret" {
		t.Errorf("the link's target is now %q (%v), want secret unchanged", b, err)
	}
}

func needFUSE(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("MEMFS_SKIP_MOUNT_TESTS") != "" {
			t.Skip("MEMFS_SKIP_MOUNT_TESTS is set")
		}
		t.Fatalf("mount tests need /dev/fuse (%v); set MEMFS_SKIP_MOUNT_TESTS=1 to skip them", err)
	}
}
