package mcpserver_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/internal/mcptest"
	"github.com/memfs/memfs/internal/mounttest"
	"github.com/memfs/memfs/mcpserver"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/mountclient"
)

// The tag tool through a mount, given a key that is a symlink (planted by
// another user of a shared mount), refuses it: the link's target is not
// tagged.
func TestMountTagRefusesASymlink(t *testing.T) {
	_, mnt := mounttest.Dir(t, memfs.Options{Namespace: true, Logger: slog.New(slog.DiscardHandler)})
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
