package mcpserver_test

import (
	"log/slog"
	"testing"

	"golang.org/x/sys/unix"

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
	mnt, private := mounttest.PlantedLink(t)
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
