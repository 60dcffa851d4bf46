package lockfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestHolderPID(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "lock")
	if got := HolderPID(p); got != 0 {
		t.Errorf("HolderPID of a missing file = %d, want 0", got)
	}
	f, err := Lock(p, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := HolderPID(p); got != os.Getpid() {
		t.Errorf("HolderPID = %d, want our PID %d", got, os.Getpid())
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("not a pid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := HolderPID(bad); got != 0 {
		t.Errorf("HolderPID of %q = %d, want 0", "not a pid", got)
	}
}
