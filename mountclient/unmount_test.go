package mountclient_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/internal/mountinfo"
	"github.com/memfs/memfs/mountclient"
)

// Unmount of a mount that is not memfs's (a tmpfs, with no .memfs/status
// to read) refuses and leaves it mounted: it took any failed status read
// for a dead memfs and detached whatever was mounted there.
func TestUnmountLeavesAMountNotMemfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root: it mounts a tmpfs")
	}
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("memfs-test", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	if u, err := mountclient.Unmount(dir, mountclient.UnmountOptions{Timeout: time.Second}); err == nil {
		t.Errorf("Unmount of a tmpfs = %+v, nil; want a refusal", u)
	}
	if _, ok := mountinfo.At(dir); !ok {
		t.Error("Unmount detached a tmpfs")
	}
}
