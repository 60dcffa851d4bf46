package mountclient_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs/mountclient"
)

// A Put over a file keeps the file's mode: a 0600 file is not widened to
// the mode asked for a new one (a mount never shows anyone what they
// could not read directly); a new file gets that mode; PutMode, the
// owner's explicit chmod, sets it.
func TestPutKeepsAnOldFilesMode(t *testing.T) {
	_, mnt := mountDir(t)
	c, err := mountclient.Open(mnt, mountclient.Own)
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(mnt, "memory", "secret.md")
	if err := c.Put("memory/secret.md", []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	mode := func(p string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	if m := mode(secret); m != 0o600 {
		t.Fatalf("a new file: mode %o, want 600", m)
	}
	if err := c.Put("memory/secret.md", []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m := mode(secret); m != 0o600 {
		t.Errorf("after a Put over it with 0644: mode %o, want 600 kept", m)
	}
	if b, _ := os.ReadFile(secret); string(b) != "two" {
		t.Errorf("value %q, want two", b)
	}
	if err := c.PutMode("memory/secret.md", []byte("three"), 0o640); err != nil {
		t.Fatal(err)
	}
	if m := mode(secret); m != 0o640 {
		t.Errorf("after PutMode 0640: mode %o, want 640", m)
	}
}
