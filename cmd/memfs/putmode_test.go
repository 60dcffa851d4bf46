package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// memfs put through a mount over a 0600 file keeps it 0600 (the default
// --mode is a new file's); --mode given sets the mode.
func TestPutThroughAMountKeepsTheMode(t *testing.T) {
	t.Parallel()
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	startMount(t, store, mnt, nil)
	secret := filepath.Join(mnt, "memory", "secret.md")
	if err := os.MkdirAll(filepath.Dir(secret), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	mode := func() os.FileMode {
		t.Helper()
		fi, err := os.Stat(secret)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	mustRun(t, "two", "put", "--store", store, "memory/secret.md")
	if m := mode(); m != 0o600 {
		t.Errorf("memfs put over a 0600 file through the mount: mode %o, want 600", m)
	}
	if b, _ := os.ReadFile(secret); string(b) != "two" {
		t.Errorf("value %q, want two", b)
	}
	mustRun(t, "three", "put", "--store", store, "--mode", "0640", "memory/secret.md")
	if m := mode(); m != 0o640 {
		t.Errorf("memfs put --mode 0640: mode %o, want 640", m)
	}
	mustRun(t, "new", "put", "--store", store, "memory/new.md")
	if fi, err := os.Stat(filepath.Join(mnt, "memory", "new.md")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("a new file: %v, %v; want mode 644", fi, err)
	}
}

// The same without a mount: memfs put on the store keeps an old file's
// mode and owner unless --mode is given (it set 0644 and the caller's ids).
func TestPutOnTheStoreKeepsTheMode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := "dir:" + dir
	mustRun(t, "one", "put", "--store", store, "--mode", "0600", "memory/secret.md")
	path := filepath.Join(dir, "memory", "secret.md")
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "two", "put", "--store", store, "memory/secret.md")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Errorf("memfs put over a 0600 file on the store: mode %o, want 600", m)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || st.Gid != 65534 {
		t.Errorf("owner %d:%d, want 65534:65534 kept", st.Uid, st.Gid)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Errorf("value %q, want two", b)
	}
	mustRun(t, "three", "put", "--store", store, "--mode", "0640", "memory/secret.md")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("memfs put --mode 0640: %v, %v; want mode 640", fi, err)
	}
}
