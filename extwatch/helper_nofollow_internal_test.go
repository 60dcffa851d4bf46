package extwatch

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs/internal/paths"
	"github.com/memfs/memfs/session"
	"golang.org/x/sys/unix"
)

// The helper's touch and attr never go through a symlink at the key: a
// link's target gets neither the fallocate nor the attribute.
func TestHelperApplyRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "private.md")
	if err := os.WriteFile(target, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("private.md", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, op := range []string{"touch", "attr"} {
		if err := helperApply(root, helperOp{Op: op, Key: "link.md"}); !errors.Is(err, paths.ErrSymlink) {
			t.Errorf("%s of a symlink: %v, want ErrSymlink", op, err)
		}
	}
	buf := make([]byte, 64)
	if n, err := unix.Getxattr(target, session.AttrSignal, buf); err == nil {
		t.Errorf("the link's target got %s=%q", session.AttrSignal, buf[:n])
	}
}
