package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/internal/mounthelper"
)

// forgedRoot is a FUSE file system that is no memfs: it serves a
// .memfs/status naming whatever process it is told to, as any user can
// with fusermount.
type forgedRoot struct {
	gofs.Inode
	status string
}

var _ gofs.NodeOnAdder = (*forgedRoot)(nil)

func (r *forgedRoot) OnAdd(ctx context.Context) {
	dir := r.NewPersistentInode(ctx, &gofs.Inode{}, gofs.StableAttr{Mode: syscall.S_IFDIR})
	r.AddChild(".memfs", dir, false)
	f := r.NewPersistentInode(ctx, &gofs.MemRegularFile{Data: []byte(r.status), Attr: fuse.Attr{Mode: 0o444}}, gofs.StableAttr{})
	dir.AddChild("status", f, false)
}

// forgedMount mounts a forgedRoot at a fresh directory, with the fsname of
// a memfs mount of store, whose status names pid; it is unmounted at
// cleanup.
func forgedMount(t *testing.T, store string, pid int) string {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("MEMFS_SKIP_MOUNT_TESTS") != "" {
			t.Skip("MEMFS_SKIP_MOUNT_TESTS is set")
		}
		t.Fatalf("mount tests need /dev/fuse (%v); set MEMFS_SKIP_MOUNT_TESTS=1 to skip them", err)
	}
	mnt := t.TempDir()
	status := "store: " + store + "\nmountpoint: " + mnt + "\npid: " + strconv.Itoa(pid) + "\n"
	srv, err := gofs.Mount(mnt, &forgedRoot{status: status}, &gofs.Options{
		MountOptions: fuse.MountOptions{FsName: "memfs:" + store, Name: "memfs", DirectMount: true},
	})
	if err != nil {
		t.Fatalf("mount the forged file system: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	if b, err := os.ReadFile(filepath.Join(mnt, ".memfs", "status")); err != nil || string(b) != status {
		t.Fatalf("the forged mount serves %q, %v; want %q", b, err, status)
	}
	return mnt
}

// A FUSE mount that is no memfs serves a .memfs/status naming a process
// (here a sleep the test started): memfs unmount and the umount helper
// must not take it for the serving process. unmount sent it SIGTERM.
func TestForgedStatusSignalsNothing(t *testing.T) {
	t.Parallel()
	sleep := exec.Command("sleep", "600")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleep.Process.Kill()
	store := "dir:" + t.TempDir()
	mnt := forgedMount(t, store, sleep.Process.Pid)

	if _, _, err := run(t, "", "unmount", "--timeout", "1s", mnt); err == nil {
		t.Errorf("memfs unmount of a forged mount succeeded")
	}
	if pid := mounthelper.ServedBy(mnt); pid != 0 {
		t.Errorf("servedBy(forged mount) = %d, want 0: it serves no memfs", pid)
	}
	// Kill it now: had unmount sent SIGTERM, the process would already be
	// dying of it (kill(2) marks the whole group at once), and the wait
	// status would name SIGTERM, not this SIGKILL.
	sleep.Process.Kill()
	sleep.Wait()
	if sig := sleep.ProcessState.Sys().(syscall.WaitStatus).Signal(); sig != syscall.SIGKILL {
		t.Errorf("the process the forged status names died of %v: memfs unmount signaled it", sig)
	}
}
