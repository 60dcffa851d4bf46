package paths_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs/internal/paths"
)

// A symlink at the last part of a name, or on the way to it, is refused
// for a read and for a write that truncates; its target is unchanged.
func TestOpenNoFollowRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "d", "private.md")
	if err := os.WriteFile(target, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"d/link.md": "private.md", "viadir": "d"} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, name := range []string{"d/link.md", "viadir/private.md"} {
		for _, flags := range []int{os.O_RDONLY, os.O_WRONLY | os.O_TRUNC, os.O_RDWR | os.O_CREATE} {
			f, err := paths.OpenNoFollow(r, name, flags, 0o644)
			if err == nil {
				f.Close()
			}
			if !errors.Is(err, paths.ErrSymlink) {
				t.Errorf("OpenNoFollow(%s, %#o) = %v, want ErrSymlink", name, flags, err)
			}
		}
		if _, err := paths.ReadNoFollow(r, name); !errors.Is(err, paths.ErrSymlink) {
			t.Errorf("ReadNoFollow(%s) = %v, want ErrSymlink", name, err)
		}
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "secret" {
		t.Errorf("the target is now %q (%v), want secret unchanged", b, err)
	}
	// A plain file opens, a new one is made, ".." is refused.
	f, err := paths.OpenNoFollow(r, "d/new.md", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("new"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, err := paths.ReadNoFollow(r, "d/new.md"); err != nil || string(b) != "new" {
		t.Errorf("ReadNoFollow(d/new.md) = %q, %v", b, err)
	}
	if _, err := paths.OpenNoFollow(r, "d/../../x", os.O_RDONLY, 0); err == nil {
		t.Error("a name out of the root opened")
	}
}

// MkdirAllNoFollow makes what is missing, with its mode, and refuses a
// symlink on the way, making nothing through it.
func TestMkdirAllNoFollow(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("victim", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := paths.MkdirAllNoFollow(r, "a/b/c", 0o700); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "a", "b", "c")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("a/b/c: %v, %v; want a directory of mode 0700", fi, err)
	}
	if err := paths.MkdirAllNoFollow(r, "a/b/c", 0o700); err != nil {
		t.Errorf("again: %v", err)
	}
	for _, name := range []string{"link/x", "link"} {
		if err := paths.MkdirAllNoFollow(r, name, 0o755); !errors.Is(err, paths.ErrSymlink) {
			t.Errorf("MkdirAllNoFollow(%s) = %v, want ErrSymlink", name, err)
		}
	}
	if es, _ := os.ReadDir(victim); len(es) != 0 {
		t.Errorf("made through the symlink: %v", es)
	}
}
