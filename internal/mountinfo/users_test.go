package mountinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// A process with a file open under a directory keeps it busy; a
// directory nobody uses has no users.
func TestMountUsers(t *testing.T) {
	dir, idle := t.TempDir(), t.TempDir()
	f, err := os.Create(filepath.Join(dir, "held"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	me := fmt.Sprintf("%d ", os.Getpid())
	users := MountUsers(dir)
	if !slices.ContainsFunc(users, func(u string) bool { return strings.HasPrefix(u, me) }) {
		t.Errorf("MountUsers(%s) = %v, want this process (%d) among them", dir, users, os.Getpid())
	}
	if users := MountUsers(idle); len(users) != 0 {
		t.Errorf("MountUsers(%s) = %v, want none", idle, users)
	}
}

// A file mapped into memory holds its file system too, with no
// descriptor left open (ld.so's libraries, an mmap'ed database).
func TestMountUsersMaps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mapped")
	if err := os.WriteFile(path, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 4, syscall.PROT_READ, syscall.MAP_SHARED)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	me := fmt.Sprintf("%d ", os.Getpid())
	if users := MountUsers(dir); !slices.ContainsFunc(users, func(u string) bool { return strings.HasPrefix(u, me) }) {
		t.Errorf("MountUsers(%s) = %v, want this process, which maps a file there", dir, users)
	}
}
