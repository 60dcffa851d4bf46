package memfs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs"
)

// TestMountpointChecks: MakeMountpoint makes the last component only;
// CheckMountpoint refuses a file, a non-empty directory and an overlap
// with the store.
func TestMountpointChecks(t *testing.T) {
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	if made, err := memfs.MakeMountpoint(mnt); err != nil || !made {
		t.Fatalf("MakeMountpoint(%s) = %v, %v; want made", mnt, made, err)
	}
	if made, err := memfs.MakeMountpoint(mnt); err != nil || made {
		t.Errorf("MakeMountpoint of an existing directory = %v, %v; want not made, no error", made, err)
	}
	if _, err := memfs.MakeMountpoint(filepath.Join(dir, "typo", "mnt")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("MakeMountpoint under a missing parent: %v, want a refusal", err)
	}
	if err := memfs.CheckMountpoint(filepath.Join(mnt, "store"), mnt); err == nil {
		t.Errorf("CheckMountpoint of a missing mountpoint: no error")
	}
	if err := memfs.CheckMountpoint(mnt, filepath.Join(mnt, "store")); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("CheckMountpoint with the store inside: %v, want an overlap", err)
	}
	file := filepath.Join(mnt, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := memfs.CheckMountpoint(mnt, ""); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("CheckMountpoint of a non-empty directory: %v", err)
	}
	if err := memfs.CheckMountpoint(file, ""); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("CheckMountpoint of a file: %v", err)
	}
}

func TestDefaultStorePath(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data")
	if got := memfs.DefaultStorePath(); got != "/data/memfs/store" {
		t.Errorf("DefaultStorePath = %q, want /data/memfs/store", got)
	}
}
