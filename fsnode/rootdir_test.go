package fsnode_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/internal/etcdtest"
)

// rootStores are the stores the root's attributes must survive a remount
// on: every store memfs has.
func rootStores() []struct {
	name string
	open func(t *testing.T) backend.Store
} {
	return []struct {
		name string
		open func(t *testing.T) backend.Store
	}{
		{"dir", func(t *testing.T) backend.Store { return newDirStore(t, t.TempDir()) }},
		{"badger", func(t *testing.T) backend.Store {
			st, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
		{"memstore", func(t *testing.T) backend.Store { return memstore.New() }},
		{"etcd", func(t *testing.T) backend.Store {
			srv := etcdtest.Start(t)
			cfg, err := etcdstore.ParseURL(srv.URL("root"))
			if err != nil {
				t.Fatal(err)
			}
			st, err := etcdstore.Open(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
	}
}

// TestMountRootIsADirectoryLikeAnyOther: chmod, chown, utimes and user.*
// xattrs of the mount's root work (they were EINVAL and EOPNOTSUPP) and
// survive a remount, on every store.
func TestMountRootIsADirectoryLikeAnyOther(t *testing.T) {
	for _, sto := range rootStores() {
		t.Run(sto.name, func(t *testing.T) {
			st := sto.open(t)
			m := mount(t, st, mountConfig{})
			mtime := time.Unix(1600000000, 123456789)
			if err := os.Chmod(m.dir, 0o700); err != nil {
				t.Fatalf("chmod of the root: %v", err)
			}
			if err := os.Chown(m.dir, 1234, 5678); err != nil {
				t.Fatalf("chown of the root: %v", err)
			}
			if err := unix.Setxattr(m.dir, "user.note", []byte("the root"), 0); err != nil {
				t.Fatalf("setxattr of the root: %v", err)
			}
			if err := os.Chtimes(m.dir, mtime, mtime); err != nil {
				t.Fatalf("utimes of the root: %v", err)
			}
			checkRoot := func(dir string) {
				t.Helper()
				var s syscall.Stat_t
				if err := syscall.Stat(dir, &s); err != nil {
					t.Fatal(err)
				}
				if got := s.Mode & 0o7777; got != 0o700 {
					t.Errorf("root mode: got %o, want 700", got)
				}
				if s.Uid != 1234 || s.Gid != 5678 {
					t.Errorf("root owner: got %d:%d, want 1234:5678", s.Uid, s.Gid)
				}
				if got := time.Unix(s.Mtim.Unix()); !got.Equal(mtime) {
					t.Errorf("root mtime: got %v, want %v", got, mtime)
				}
				buf := make([]byte, 64)
				n, err := unix.Getxattr(dir, "user.note", buf)
				if err != nil || string(buf[:n]) != "the root" {
					t.Errorf("root user.note: got %q, %v; want %q", buf[:max(n, 0)], err, "the root")
				}
			}
			checkRoot(m.dir)
			if err := m.c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			again := mount(t, st, mountConfig{})
			checkRoot(again.dir)
		})
	}
}

// TestMountCopyIntoTheRoot: the tools people copy a tree with (cp -a,
// rsync -a, tar -x, touch) set the root's attributes and exit 0 (they
// exited 1, 23 and 2).
func TestMountCopyIntoTheRoot(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "memory", "project"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "memory", "project", "notes.md"), []byte("notes\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(src, 0o750); err != nil {
		t.Fatal(err)
	}
	old := time.Unix(1500000000, 0)
	if err := os.Chtimes(src, old, old); err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(t.TempDir(), "tree.tar")
	if out, err := exec.Command("tar", "-c", "-f", tarball, "-C", src, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar -c: %v\n%s", err, out)
	}
	tools := []struct {
		name string
		argv func(mnt string) []string
	}{
		{"cp", func(mnt string) []string { return []string{"cp", "-a", src + "/.", mnt} }},
		{"rsync", func(mnt string) []string { return []string{"rsync", "-a", src + "/", mnt + "/"} }},
		{"tar", func(mnt string) []string { return []string{"tar", "-x", "-f", tarball, "-C", mnt} }},
	}
	for _, tool := range tools {
		t.Run(tool.name, func(t *testing.T) {
			st := newDirStore(t, t.TempDir())
			m := mount(t, st, mountConfig{})
			argv := tool.argv(m.dir)
			if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
			}
			if got := readFile(t, filepath.Join(m.dir, "memory", "project", "notes.md")); got != "notes\n" {
				t.Errorf("copied file: got %q", got)
			}
			fi, err := os.Stat(m.dir)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o750 || !fi.ModTime().Equal(old) {
				t.Errorf("root after %s: mode %v mtime %v, want 0750 and %v", tool.name, fi.Mode().Perm(), fi.ModTime(), old)
			}
			if out, err := exec.Command("touch", m.dir).CombinedOutput(); err != nil {
				t.Fatalf("touch of the root: %v\n%s", err, out)
			}
		})
	}
}

// TestMountMemfsOutOfTreeWalks: .memfs is not listed in the root (it
// was: grep -r, git add -A, cp -a and rsync took it in) but is reachable
// by name, and Options.ShowMemfs lists it; every directory lists . and
// .. (ls -a showed neither); .memfs/status reports its size, so rsync,
// which copies st_size bytes, copies it whole (it copied an empty file).
func TestMountMemfsOutOfTreeWalks(t *testing.T) {
	st := newDirStore(t, t.TempDir())
	seedStore(t, st, sample)
	m := mount(t, st, mountConfig{})
	out, err := exec.Command("ls", "-a", m.dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(out)); strings.Join(got, " ") != ". .. agents memory skills" {
		t.Errorf("ls -a of the root: %q, want . .. agents memory skills", got)
	}
	// The root's link count is 2 + the directories it lists (find's
	// leaf optimisation and mount-test.sh's lossless check count them):
	// an unlisted .memfs is not one of them.
	var rst syscall.Stat_t
	if err := syscall.Stat(m.dir, &rst); err != nil || rst.Nlink != 2+3 {
		t.Errorf("nlink of the root: %d %v, want 5 (agents, memory, skills)", rst.Nlink, err)
	}
	out, err = exec.Command("ls", "-a", filepath.Join(m.dir, "memory")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(out)); strings.Join(got, " ") != ". .. global.md project" {
		t.Errorf("ls -a of memory: %q", got)
	}
	out, _ = exec.Command("grep", "-r", "-l", "", m.dir).Output()
	if strings.Contains(string(out), ".memfs") {
		t.Errorf("grep -r over the mount read .memfs:\n%s", out)
	}
	status := readFile(t, filepath.Join(m.dir, ".memfs", "status"))
	fi, err := os.Stat(filepath.Join(m.dir, ".memfs", "status"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != int64(len(status)) {
		t.Errorf(".memfs/status: stat says %d bytes, cat reads %d", fi.Size(), len(status))
	}
	dst := t.TempDir()
	if out, err := exec.Command("rsync", filepath.Join(m.dir, ".memfs", "status"), dst+"/").CombinedOutput(); err != nil {
		t.Fatalf("rsync of .memfs/status: %v\n%s", err, out)
	}
	if got := readFile(t, filepath.Join(dst, "status")); len(got) == 0 || !strings.Contains(got, "keys_indexed:") {
		t.Errorf("rsync copied .memfs/status as %q", got)
	}

	shown := mount(t, st, mountConfig{fopts: fsnode.Options{ShowMemfs: true}})
	ents, err := os.ReadDir(shown.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) == 0 || ents[0].Name() != ".memfs" {
		t.Errorf("with ShowMemfs the root lists %v, want .memfs first", ents)
	}
}

// TestMountStatfsIsTheStores: df of a mount over a dir store reports the
// free space of the filesystem that holds the store and the store's own
// usage (it reported a made-up 4 TiB, half free).
func TestMountStatfsIsTheStores(t *testing.T) {
	storeDir := t.TempDir()
	st := newDirStore(t, storeDir)
	seedStore(t, st, map[string]string{"memory/big.md": strings.Repeat("x", 1<<20)})
	m := mount(t, st, mountConfig{fopts: fsnode.Options{Space: func(ctx context.Context) (backend.Space, error) {
		return st.Space(ctx)
	}}})
	var mnt, under unix.Statfs_t
	if err := unix.Statfs(m.dir, &mnt); err != nil {
		t.Fatal(err)
	}
	if err := unix.Statfs(storeDir, &under); err != nil {
		t.Fatal(err)
	}
	avail, want := int64(mnt.Bavail)*mnt.Bsize, int64(under.Bavail)*under.Bsize
	// Other programs write on the same filesystem meanwhile: a margin.
	if d := avail - want; d > 64<<20 || d < -64<<20 {
		t.Errorf("df avail: %d bytes, the store's filesystem has %d", avail, want)
	}
	used := int64(mnt.Blocks-mnt.Bfree) * mnt.Bsize
	if used < 1<<20 || used > 8<<20 {
		t.Errorf("df used: %d bytes, want the store's (a 1 MiB file and directories)", used)
	}
}
