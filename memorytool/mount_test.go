package memorytool_test

import (
	"os"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/internal/mounttest"
	"github.com/memfs/memfs/memorytool"
	"github.com/memfs/memfs/mountclient"
)

// A write through the mount to a key that is a symlink (planted by
// another user of a shared mount) is refused: the link's target, a
// private note, is neither read nor written.
func TestMountWriteRefusesASymlink(t *testing.T) {
	mnt, private := mounttest.PlantedLink(t)
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
