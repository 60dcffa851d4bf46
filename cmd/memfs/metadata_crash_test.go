package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestKill9KeepsMetadataChanges: metadata-only changes (chmod, chown,
// utimes to the past, setxattr) and an in-place rewrite with its mtime set
// back are acknowledged when the call returns; kill -9 of memfs must not
// revert them (a 0600 file must not come back 0644).
func TestKill9KeepsMetadataChanges(t *testing.T) {
	t.Parallel()
	past := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			mnt := t.TempDir()
			env := []string{"XDG_STATE_HOME=" + t.TempDir()}
			p := startMount(t, store, mnt, env)
			a := filepath.Join(mnt, "a.md")
			b := filepath.Join(mnt, "b.md")
			for _, f := range []string{a, b} {
				if err := os.WriteFile(f, []byte("the first version\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fsyncPath(t, a) // both are in the store now, 0644, mtime now
			if err := os.Chmod(a, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(a, 1234, 5678); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(a, past, past); err != nil {
				t.Fatal(err)
			}
			if err := unix.Setxattr(a, "user.note", []byte("kept"), 0); err != nil {
				t.Fatal(err)
			}
			// An in-place rewrite: O_RDWR, pwrite, futimens to the past, close.
			f, err := os.OpenFile(b, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte("THE"), 0); err != nil {
				t.Fatal(err)
			}
			if err := unix.Futimes(int(f.Fd()), []unix.Timeval{unix.NsecToTimeval(past.UnixNano()), unix.NsecToTimeval(past.UnixNano())}); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			p.kill9(t)

			p2 := startMount(t, store, mnt, env)
			var st syscall.Stat_t
			if err := syscall.Stat(a, &st); err != nil {
				t.Fatal(err)
			}
			if st.Mode&0o7777 != 0o600 || st.Uid != 1234 || st.Gid != 5678 || st.Mtim.Sec != past.Unix() {
				t.Errorf("a.md after kill -9: mode %o uid %d gid %d mtime %d, want 600 1234 5678 %d",
					st.Mode&0o7777, st.Uid, st.Gid, st.Mtim.Sec, past.Unix())
			}
			v := make([]byte, 16)
			if n, err := unix.Getxattr(a, "user.note", v); err != nil || string(v[:n]) != "kept" {
				t.Errorf("a.md user.note after kill -9: %q, %v", v[:max(n, 0)], err)
			}
			if got, _ := os.ReadFile(b); string(got) != "THE first version\n" {
				t.Errorf("b.md after kill -9: %q, want the rewrite", got)
			}
			if err := syscall.Stat(b, &st); err != nil || st.Mtim.Sec != past.Unix() {
				t.Errorf("b.md mtime after kill -9: %d (%v), want %d", st.Mtim.Sec, err, past.Unix())
			}
			if err := p2.terminate(t); err != nil {
				t.Fatalf("exit: %v\n%s", err, p2.log)
			}
		})
	}
}

// TestReadOnlyMountOfACrashedStore: a store whose journal holds what a
// killed memfs left can be inspected read-only: the mount shows the
// journal's changes, writes nothing (the store and the journal stay as
// they are), and the next writable mount saves them.
func TestReadOnlyMountOfACrashedStore(t *testing.T) {
	t.Parallel()
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			mnt := t.TempDir()
			env := []string{"XDG_STATE_HOME=" + t.TempDir()}
			p := startMount(t, store, mnt, env)
			a := filepath.Join(mnt, "a.md")
			if err := os.WriteFile(a, []byte("closed before the kill\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			p.kill9(t)
			storeDir := store[len(name)+1:]
			// What the read-only mount must leave as it is: the journal,
			// and in a dir store every file (but the lock's PID). Badger
			// writes its own files when it opens (not read-only yet).
			state := func() string {
				if name == "badger" {
					b, err := os.ReadFile(filepath.Join(storeDir, "memfs.journal"))
					if err != nil {
						t.Fatal(err)
					}
					return string(b)
				}
				var files []string
				for _, l := range strings.Split(snapshotTree(t, storeDir), "\n") {
					if f := strings.Fields(l); len(f) > 1 && !strings.HasPrefix(f[1], "d") && !strings.HasSuffix(f[0], ".memfs-sys/.lock") {
						files = append(files, l)
					}
				}
				return strings.Join(files, "\n")
			}
			before := state()

			// Commands that only read show the journal's file and write
			// nothing either.
			if out := mustRun(t, "", "ls", "--store", store); !strings.Contains(out, "a.md") {
				t.Errorf("memfs ls of a crashed store: %q, want the journal's file", out)
			}
			if got := mustRun(t, "", "cat", "--store", store, "a.md"); got != "closed before the kill\n" {
				t.Errorf("memfs cat of a crashed store: %q", got)
			}
			if after := state(); after != before {
				t.Errorf("memfs ls and cat changed the store directory:\nbefore %s\nafter  %s", before, after)
			}

			ro := startMount(t, store, mnt, env, "--read-only")
			if b, err := os.ReadFile(a); err != nil || string(b) != "closed before the kill\n" {
				t.Errorf("read-only mount of a crashed store: %q, %v; want the journal's file", b, err)
			}
			if err := os.WriteFile(filepath.Join(mnt, "b.md"), []byte("x"), 0o644); !errors.Is(err, syscall.EROFS) {
				t.Errorf("a write on a read-only mount: %v, want EROFS", err)
			}
			if err := ro.terminate(t); err != nil {
				t.Fatalf("read-only unmount: %v\n%s", err, ro.log)
			}
			if after := state(); after != before {
				t.Errorf("the read-only mount changed the store directory:\nbefore %s\nafter  %s", before, after)
			}

			p2 := startMount(t, store, mnt, env)
			if b, err := os.ReadFile(a); err != nil || string(b) != "closed before the kill\n" {
				t.Errorf("the writable mount after the read-only one: %q, %v", b, err)
			}
			if err := p2.terminate(t); err != nil {
				t.Fatalf("exit: %v\n%s", err, p2.log)
			}
		})
	}
}
