package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
)

func TestLock(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "lock")
	f, err := Lock(p, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, _ := os.ReadFile(p); string(b) != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("lock file holds %q, want our PID", b)
	}
	_, err = Lock(p, dir)
	if !errors.Is(err, backend.ErrStoreInUse) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second Lock: %v, want ErrStoreInUse naming our PID", err)
	}
}

// A lock file that is a symlink is refused, and what it points to is left
// as it was (a lock would truncate it and write a PID).
func TestLockRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(target, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "lock")
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	_, err := Lock(p, dir)
	if !errors.Is(err, backend.ErrSymlink) || !strings.Contains(err.Error(), p) {
		t.Fatalf("Lock of a symlink: %v, want ErrSymlink naming %s", err, p)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Fatalf("the link's target changed: %q", b)
	}
	if h := Holder(p); h != "another process" {
		t.Errorf("Holder read through a symlink: %q", h)
	}
}

// TestShare: readers share the lock and write nothing into it; a writer
// is refused while they hold it, told that readers do (the PID in the file
// is an old writer's), and readers are refused while a writer holds it.
func TestShare(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "lock")
	if f, err := Share(p, dir); f != nil || err != nil {
		t.Fatalf("Share of a missing lock file: %v, %v; want no lock and no error", f, err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Share created the lock file: %v", err)
	}
	w, err := Lock(p, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Share(p, dir); !errors.Is(err, backend.ErrStoreInUse) {
		t.Errorf("Share beside a writer: %v, want ErrStoreInUse", err)
	}
	w.Close()
	before, _ := os.ReadFile(p)
	r1, err := Share(p, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := Share(p, dir)
	if err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	defer r2.Close()
	_, err = Lock(p, dir)
	if !errors.Is(err, backend.ErrStoreInUse) || !strings.Contains(err.Error(), "reads it") {
		t.Errorf("Lock beside readers: %v, want ErrStoreInUse saying that a reader holds it", err)
	}
	if after, _ := os.ReadFile(p); string(after) != string(before) {
		t.Errorf("the lock file changed under readers: %q, was %q", after, before)
	}
}
