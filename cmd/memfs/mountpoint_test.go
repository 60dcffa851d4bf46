package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustNotExist(t *testing.T, path, why string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: %s exists (lstat: %v), want nothing there", why, path, err)
	}
}

// memfs mount makes a missing mountpoint (the last component only), says
// so, and removes it again when the mount fails.
func TestMountCreatesMountpoint(t *testing.T) {
	t.Parallel()
	store := "dir:" + t.TempDir()
	mnt := filepath.Join(t.TempDir(), "memory")
	p := startMount(t, store, mnt, nil)
	if !strings.Contains(p.log.String(), "created mountpoint") {
		t.Errorf("the mount log does not say it created %s:\n%s", mnt, p.log)
	}
	if err := p.terminate(t); err != nil {
		t.Fatalf("memfs exit: %v\n%s", err, p.log)
	}
	if fi, err := os.Stat(mnt); err != nil || !fi.IsDir() {
		t.Errorf("after the unmount the mountpoint is gone: %v", err)
	}

	// A missing parent is an error: a typo makes no tree of directories.
	deep := filepath.Join(t.TempDir(), "no", "such", "memory")
	if _, _, err := run(t, "", "mount", "--store", store, deep); err == nil || !strings.Contains(err.Error(), "mkdir -p") {
		t.Errorf("mount on %s = %v, want an error saying mkdir -p", deep, err)
	}
	mustNotExist(t, filepath.Dir(deep), "mount under a missing parent")

	// A mountpoint memfs made is removed when the mount then fails.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mnt2 := filepath.Join(t.TempDir(), "memory")
	if _, _, err := run(t, "", "mount", "--store", "dir:"+file, mnt2); err == nil {
		t.Fatalf("mount of a store that is a regular file succeeded")
	}
	mustNotExist(t, mnt2, "mount that failed after making its mountpoint")
}
