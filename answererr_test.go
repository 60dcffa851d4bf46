package memfs_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs"
)

// A virtual file whose query cannot be answered is still a file: its text
// says why and what to do (an agent reads files), and the errno a program
// tests is its extended attribute user.memfs.error. A search with no hit
// says so in text and is empty in JSON.
func TestAnswerFilesSayWhy(t *testing.T) {
	needFUSE(t)
	dir := t.TempDir()
	f := openBadger(t, dir, false)
	mnt := t.TempDir()
	s := serve(t, f, mnt, memfs.MountOptions{})
	p := func(k string) string { return filepath.Join(mnt, k) }
	if err := os.MkdirAll(p("memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("memory/a.md"), []byte("alpha note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		file, errno, says string
	}{
		{".memfs/search/alpha tag:", "EINVAL", "tag:"},
		{".memfs/search/alpha mode:semantic", "ENOTSUP", "memfs models install"},
		{".memfs/search/alpha mode:bogus", "EINVAL", "mode:"},
		{".memfs/context/max:0", "EINVAL", "max:"},
		{".memfs/context/at:999999", "ENOENT", "memfs log"},
	} {
		b, err := os.ReadFile(p(tt.file))
		if err != nil {
			t.Errorf("read %s: %v; want the file to explain its error", tt.file, err)
			continue
		}
		if !strings.Contains(string(b), "What to do:") || !strings.Contains(string(b), tt.says) || !strings.Contains(string(b), tt.errno) {
			t.Errorf("%s = %q; want the reason, %q, what to do and %s", tt.file, b, tt.says, tt.errno)
		}
		buf := make([]byte, 64)
		n, err := unix.Getxattr(p(tt.file), "user.memfs.error", buf)
		if err != nil || string(buf[:n]) != tt.errno {
			t.Errorf("getxattr %s user.memfs.error = %q, %v; want %s", tt.file, buf[:max(n, 0)], err, tt.errno)
		}
	}
	// An answer that is not an error has no such attribute.
	if _, err := unix.Getxattr(p(".memfs/search/alpha"), "user.memfs.error", make([]byte, 64)); !errors.Is(err, syscall.ENODATA) {
		t.Errorf("getxattr of a good answer: %v, want ENODATA", err)
	}
	if b, err := os.ReadFile(p(".memfs/search/zzyzx")); err != nil || !strings.HasPrefix(string(b), "no match") {
		t.Errorf(".memfs/search/zzyzx = %q, %v; want a text that says no match", b, err)
	}
	if b, err := os.ReadFile(p(".memfs/search/zzyzx format:json")); err != nil || len(bytes.TrimSpace(b)) != 0 {
		t.Errorf(".memfs/search/zzyzx format:json = %q, %v; want no JSON line", b, err)
	}
	s.stop(t)
	if err := f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
