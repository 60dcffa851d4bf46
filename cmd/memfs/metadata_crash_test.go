package main

import (
	"os"
	"path/filepath"
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
