package mcpserver_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/internal/mcptest"
	"github.com/memfs/memfs/mcpserver"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/mountclient"
)

// The tag tool through a mount, given a key that is a symlink (planted by
// another user of a shared mount), refuses it: the link's target is not
// tagged.
func TestMountTagRefusesASymlink(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("MEMFS_SKIP_MOUNT_TESTS") != "" {
			t.Skip("MEMFS_SKIP_MOUNT_TESTS is set")
		}
		t.Fatalf("this test mounts: it needs /dev/fuse (%v); set MEMFS_SKIP_MOUNT_TESTS=1 to skip it", err)
	}
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
	cs := connectInMemory(t, mcpserver.NewMount(c, mcpserver.Options{Logger: slog.New(slog.DiscardHandler)}))
	mcptest.Refused(t, cs, "tag", map[string]any{"key": "memory/link.md", "tags": []string{"planted"}})
	buf := make([]byte, 256)
	if n, err := unix.Getxattr(private, meta.Tags, buf); err != unix.ENODATA {
		t.Errorf("the link's target has tags %q (%v), want none", buf[:max(n, 0)], err)
	}
}
