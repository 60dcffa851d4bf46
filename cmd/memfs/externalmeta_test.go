package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// Every attribute is part of a version (issue 26): another program's
// chmod 600, chmod +x and setfattr on files of a directory store, and the
// directories and symlinks it makes there, reach the mount live (stat,
// getfattr, readlink), a watcher on the mount hears the attribute changes
// (IN_ATTRIB), and the mount's next save of the files keeps them.
func TestExternalMetadataReachesTheMount(t *testing.T) {
	store := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(store, "memory"), 0o755))
	for _, k := range []string{"f.md", "x.sh", "g.md"} {
		must(os.WriteFile(filepath.Join(store, "memory", k), []byte(k+"\n"), 0o644))
	}
	mnt := t.TempDir()
	p := startMount(t, "dir:"+store, mnt, nil)
	m := func(k string) string { return filepath.Join(mnt, "memory", k) }
	s := func(k string) string { return filepath.Join(store, "memory", k) }
	waitFor(t, "the mount", 5*time.Second, func() bool { return readBack(m("f.md")) == "f.md\n" })
	ev := watchDir(t, filepath.Join(mnt, "memory"))

	must(os.Chmod(s("f.md"), 0o600))
	must(os.Chmod(s("x.sh"), 0o755))
	must(unix.Setxattr(s("g.md"), "user.memfs.tags", []byte("ops"), 0))
	must(os.Mkdir(s("sub"), 0o700))
	must(os.Symlink("f.md", s("link")))

	perm := func(p string) os.FileMode {
		fi, err := os.Lstat(p)
		if err != nil {
			return 0
		}
		return fi.Mode()
	}
	waitFor(t, "chmod 600 on the mount", 5*time.Second, func() bool { return perm(m("f.md")).Perm() == 0o600 })
	waitFor(t, "chmod +x on the mount", 5*time.Second, func() bool { return perm(m("x.sh")).Perm() == 0o755 })
	waitFor(t, "setfattr on the mount", 5*time.Second, func() bool {
		buf := make([]byte, 64)
		n, err := unix.Getxattr(m("g.md"), "user.memfs.tags", buf)
		return err == nil && string(buf[:n]) == "ops"
	})
	waitFor(t, "mkdir on the mount", 5*time.Second, func() bool { d := perm(m("sub")); return d.IsDir() && d.Perm() == 0o700 })
	waitFor(t, "symlink on the mount", 5*time.Second, func() bool { l, err := os.Readlink(m("link")); return err == nil && l == "f.md" })
	for _, k := range []string{"f.md", "x.sh", "g.md"} {
		waitFor(t, "IN_ATTRIB of "+k, 5*time.Second, func() bool { return ev.has(k, fsnotify.Chmod) })
	}

	// The mount's next save of each keeps what the other program set.
	for _, k := range []string{"f.md", "x.sh", "g.md"} {
		f, err := os.OpenFile(m(k), os.O_WRONLY|os.O_TRUNC, 0)
		must(err)
		_, err = f.WriteString("mount's " + k + "\n")
		must(err)
		must(f.Sync())
		must(f.Close())
	}
	if got := perm(s("f.md")).Perm(); got != 0o600 {
		t.Errorf("f.md in the store after the mount's save: %v, want 0600", got)
	}
	if got := perm(s("x.sh")).Perm(); got != 0o755 {
		t.Errorf("x.sh in the store after the mount's save: %v, want 0755", got)
	}
	buf := make([]byte, 64)
	if n, err := unix.Getxattr(s("g.md"), "user.memfs.tags", buf); err != nil || string(buf[:n]) != "ops" {
		t.Errorf("g.md's tags in the store after the mount's save: %v", err)
	}
	if got := conflictCopies(t, mnt, ""); len(got) > 0 {
		t.Errorf("conflict copies: %v\n%s", got, p.log)
	}
}
