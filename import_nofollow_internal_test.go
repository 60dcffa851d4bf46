package memfs

import (
	"os"
	"path/filepath"
	"testing"
)

// A file the import's walk saw, swapped for a symlink before it is read,
// is refused: a private file's content is not read under the link's name.
func TestReadRegularRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "private.md"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("private.md", filepath.Join(dir, "public.md")); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, err := readRegular(r, "public.md"); err == nil {
		t.Errorf("readRegular read %q through a symlink", b)
	}
}
