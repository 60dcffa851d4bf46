package mountclient_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/internal/mountinfo"
	"github.com/memfs/memfs/internal/mounttest"
	"github.com/memfs/memfs/mountclient"
)

// mountDir serves a dir store at a fresh mountpoint in this process, as
// memfs mount would (its name is the store's --store value), until the
// test ends. It returns the store's directory and the mountpoint.
func mountDir(t *testing.T) (string, string) {
	t.Helper()
	return mountStoreDir(t, t.TempDir())
}

// mountStoreDir is mountDir of the dir store at dir.
func mountStoreDir(t *testing.T, dir string) (string, string) {
	t.Helper()
	mnt := t.TempDir()
	mounttest.Serve(t, dir, mnt, memfs.Options{})
	return dir, mnt
}

// lockedAt is a spec whose lock is at lock.
type lockedAt struct {
	dirSpec
	lock string
}

func (l lockedAt) LockPath() string { return l.lock }

// A live mount is found by its mountpoint, its store's lock and a
// directory inside it; its status, values and removals go through it.
func TestClientThroughALiveMount(t *testing.T) {
	dir, mnt := mountDir(t)
	c, err := mountclient.Open(mnt, mountclient.Own)
	if err != nil {
		t.Fatal(err)
	}
	if c.PID != os.Getpid() || c.Store != "dir:"+dir || c.Dir != mnt {
		t.Errorf("Open = %+v, want pid %d store dir:%s", c, os.Getpid(), dir)
	}
	if f, ok := mountclient.Find(dirSpec{"dir", dir}, parseDir); !ok || f.Dir != mnt {
		t.Errorf("Find(the store) = %+v, %v; want the mount at %s", f, ok, mnt)
	}
	// Another store, with this store's lock (its holder, this mount's
	// process): the mount's source names another store.
	parseOther := func(v string) (lockedAt, error) { d, err := parseDir(v); return lockedAt{d, ""}, err }
	if _, ok := mountclient.Find(lockedAt{dirSpec{"dir", t.TempDir()}, dirstore.LockPath(dir)}, parseOther); ok {
		t.Error("Find of another store found this mount")
	}
	if err := c.Put("memory/a/b.md", []byte("through\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if e, ok := mountclient.Enclosing(filepath.Join(mnt, "memory", "a")); !ok || e.Dir != mnt {
		t.Errorf("Enclosing(inside the mount) = %+v, %v", e, ok)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "memory/a/b.md")); err != nil || string(b) != "through\n" {
		t.Errorf("the store after Put holds %q, %v; want the value (Put fsyncs)", b, err)
	}
	if v, err := c.Cat("memory/a/b.md"); err != nil || string(v) != "through\n" {
		t.Errorf("Cat = %q, %v", v, err)
	}
	var nv *mountclient.NoValueError
	if _, err := c.Cat("memory/a"); !errors.As(err, &nv) || !nv.Mode.IsDir() {
		t.Errorf("Cat of a directory = %v, want a NoValueError", err)
	}
	st, err := c.Status()
	if err != nil || st.PID != os.Getpid() || st.Mountpoint != mnt || st.KeysIndexed == 0 || st.Memory == nil || st.Search == "" {
		t.Errorf("Status = %+v, %v", st, err)
	}
	checkEntries(t, c, mnt)
	checkRemove(t, c, dir)
}

// checkEntries lists memory/ of c (the mount at mnt, which holds
// memory/a/b.md) with a symlink beside it and a file outside it.
func checkEntries(t *testing.T, c *mountclient.Client, mnt string) {
	t.Helper()
	if err := os.Symlink("b.md", filepath.Join(mnt, "memory/a/link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "other.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	entries, err := c.Entries("memory/", func(name string, err error) { t.Errorf("Entries skipped %s: %v", name, err) })
	var keys []string
	for _, e := range entries {
		keys = append(keys, e.Key)
	}
	if want := []string{"memory/a", "memory/a/b.md", "memory/a/link"}; err != nil || !slices.Equal(keys, want) {
		t.Errorf("Entries(memory/) = %q, %v; want %q (parents first, nothing else)", keys, err, want)
	}
}

// checkRemove removes memory/a (a directory) of c, whose store is dir.
func checkRemove(t *testing.T, c *mountclient.Client, dir string) {
	t.Helper()
	if err := c.Remove([]string{"memory/a"}, false, nil); !errors.Is(err, syscall.EISDIR) {
		t.Errorf("Remove of a directory without recursive = %v, want EISDIR", err)
	}
	var missing []string
	err := c.Remove([]string{"memory/a/", "nothing"}, true, func(k string) error { missing = append(missing, k); return nil })
	if err != nil || !slices.Equal(missing, []string{"nothing"}) {
		t.Errorf("Remove = %v, missing %q", err, missing)
	}
	if _, err := os.Stat(filepath.Join(dir, "memory/a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the store after Remove: %v, want the directory gone (Remove fsyncs)", err)
	}
}

// A cp -a copy of a live mount keeps a .memfs/status that names the live
// process; it is plain disk, and no mount.
func TestACopyOfAMountIsNoMount(t *testing.T) {
	_, mnt := mountDir(t)
	if err := os.WriteFile(filepath.Join(mnt, "m.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", mnt, cp).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	// A tree walk leaves .memfs out (the root does not list it): copied
	// by name, as a backup that names it would.
	if out, err := exec.Command("cp", "-a", filepath.Join(mnt, ".memfs"), cp).CombinedOutput(); err != nil {
		t.Fatalf("cp -a .memfs: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(cp, ".memfs", "status")); err != nil {
		t.Fatalf("the copy has no .memfs/status (%v): it tests nothing", err)
	}
	for _, a := range []mountclient.Access{mountclient.Own, mountclient.Any} {
		if c, err := mountclient.Open(cp, a); !errors.Is(err, mountclient.ErrNotLive) {
			t.Errorf("Open(copy, %d) = %+v, %v; want ErrNotLive", a, c, err)
		}
	}
	if c, ok := mountclient.Enclosing(cp); ok {
		t.Errorf("Enclosing(copy) = %+v", c)
	}
}

// forged is a FUSE file system that is no memfs but says it is: its
// fsname is a memfs store's, and its .memfs/status names a process of the
// test's (any user can serve this with fusermount).
type forged struct {
	gofs.Inode
	status string
}

func (r *forged) OnAdd(ctx context.Context) {
	dir := r.NewPersistentInode(ctx, &gofs.Inode{}, gofs.StableAttr{Mode: syscall.S_IFDIR})
	r.AddChild(".memfs", dir, false)
	dir.AddChild("status", r.NewPersistentInode(ctx, &gofs.MemRegularFile{Data: []byte(r.status), Attr: fuse.Attr{Mode: 0o444}}, gofs.StableAttr{}), false)
}

// A forged status never makes a mount live: its PID is not the process
// serving the mount, whoever's mounts the caller takes.
func TestForgedStatusIsNoMount(t *testing.T) {
	mounttest.NeedFUSE(t)
	sleep := exec.Command("sleep", "600")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	store, mnt := "dir:"+t.TempDir(), t.TempDir()
	status := "store: " + store + "\nmountpoint: " + mnt + "\npid: " + strconv.Itoa(sleep.Process.Pid) + "\n"
	srv, err := gofs.Mount(mnt, &forged{status: status}, &gofs.Options{MountOptions: fuse.MountOptions{FsName: "memfs:" + store, Name: "memfs"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Unmount() })
	if m, ok := mountinfo.At(mnt); !ok || !slices.Contains(mountPoints(mountclient.Mounts()), mnt) {
		t.Fatalf("the forged mount is not listed as a memfs mount (%+v): it tests nothing", m)
	}
	for _, a := range []mountclient.Access{mountclient.Own, mountclient.Shared, mountclient.Any} {
		c, err := mountclient.Open(mnt, a)
		if !errors.Is(err, mountclient.ErrNotLive) || !strings.Contains(err.Error(), "serves no FUSE mount") {
			t.Errorf("Open(forged, %d) = %+v, %v; want ErrNotLive: its process serves no FUSE mount", a, c, err)
		}
	}
}

func mountPoints(ms []mountinfo.Mount) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Point)
	}
	return out
}

func TestMountsIn(t *testing.T) {
	info := strings.Join([]string{
		`22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw`,
		`40 26 0:37 /sub /bound rw - fuse.memfs memfs:dir:/s rw`,
		`41 26 0:38 / /home/u/memory rw,nosuid,nodev,relatime shared:5 - fuse.memfs memfs:badger:/home/u/.local/share/memfs/store rw,user_id=0`,
		`42 26 0:39 / /srv/my\040memory rw - fuse.memfs memfs:dir:/srv/store rw`,
		`43 26 0:40 / /mnt/other rw - fuse.sshfs host:/x rw`,
		`44 26 0:41 / /mnt/tricky rw - fuse memfs rw`,
	}, "\n")
	got := mountPoints(mountclient.MountsIn(mountinfo.Parse(info)))
	want := []string{"/home/u/memory", "/srv/my memory", "/bound"}
	if !slices.Equal(got, want) {
		t.Errorf("MountsIn = %q, want %q (whole mounts first)", got, want)
	}
}

// Signal reaches only the process serving the mount now: a Client whose
// PID is another process's (one that served the mount before, and whose
// PID was reused) signals nothing.
func TestSignalOnlyTheServingProcess(t *testing.T) {
	_, mnt := mountDir(t)
	c, err := mountclient.Open(mnt, mountclient.Own)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Signal(0); err != nil {
		t.Errorf("Signal(0) to the serving process: %v", err)
	}
	sleep := exec.Command("sleep", "600")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleep.Process.Kill()
	stale := *c
	stale.PID = sleep.Process.Pid
	if err := stale.Signal(syscall.SIGTERM); !errors.Is(err, mountclient.ErrNotLive) {
		t.Errorf("Signal with another process's PID = %v, want ErrNotLive", err)
	}
	// Had it been signaled, the wait status would name SIGTERM (kill(2)
	// marks the process at once), not this SIGKILL.
	sleep.Process.Kill()
	sleep.Wait()
	if sig := sleep.ProcessState.Sys().(syscall.WaitStatus).Signal(); sig != syscall.SIGKILL {
		t.Errorf("the other process died of %v: Signal reached it", sig)
	}
}

// TestMountpointsOfOwnMounts: only the caller's own memfs mounts are
// candidates for the section's mountpoint.
func TestMountpointsOfOwnMounts(t *testing.T) {
	info := strings.Join([]string{
		`41 26 0:38 / /home/u/memory rw,nosuid,nodev,relatime shared:5 - fuse.memfs memfs:badger:/home/u/.local/share/memfs/store rw,user_id=1000,group_id=1000`,
		`42 26 0:39 / /root/memory rw - fuse.memfs memfs:dir:/srv/store rw,user_id=0,group_id=0`,
	}, "\n")
	table := mountinfo.Parse(info)
	if got, want := mountclient.Mountpoints(mountclient.MountsIn(table), 0), []string{"/root/memory"}; !slices.Equal(got, want) {
		t.Errorf("root's candidates = %q, want %q", got, want)
	}
	if got, want := mountclient.Mountpoints(mountclient.MountsIn(table), 1000), []string{"/home/u/memory"}; !slices.Equal(got, want) {
		t.Errorf("uid 1000's candidates = %q, want %q", got, want)
	}
}

// Revert with no seq goes back to what the command without a mount
// (memfs.FS.Revert) goes back to: the version before the last of a key
// that exists, the last before the delete of a deleted one.
func TestRevertThroughTheMount(t *testing.T) {
	_, mnt := mountDir(t)
	c, err := mountclient.Open(mnt, mountclient.Own)
	if err != nil {
		t.Fatal(err)
	}
	const key = "memory/r.md"
	for _, v := range []string{"one\n", "two\n", "three\n"} {
		if err := c.Put(key, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	revert := func(want string) {
		t.Helper()
		if _, err := c.Revert(key, 0); err != nil {
			t.Fatal(err)
		}
		if got, err := c.Cat(key); err != nil || string(got) != want {
			t.Fatalf("after revert: %q, %v; want %q", got, err, want)
		}
	}
	revert("two\n") // the one before the last
	if err := c.Remove([]string{key}, false, nil); err != nil {
		t.Fatal(err)
	}
	revert("two\n") // the last before the delete
}
