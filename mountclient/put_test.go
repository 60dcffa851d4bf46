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

// PutFile is Put, or with setMode PutMode: memfs put's --mode given or
// not.
func TestPutFile(t *testing.T) {
	_, mnt := mountDir(t)
	c, err := mountclient.Open(mnt, mountclient.Own)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		value   string
		mode    os.FileMode
		setMode bool
		want    os.FileMode
	}{
		{"new", 0o600, false, 0o600},  // a new file gets the mode
		{"kept", 0o644, false, 0o600}, // an old one keeps its own
		{"set", 0o640, true, 0o640},   // unless the mode was asked for
	}
	for _, s := range steps {
		if err := c.PutFile("note.md", []byte(s.value), s.mode, s.setMode); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(mnt, "note.md"))
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(mnt, "note.md")); fi.Mode().Perm() != s.want || string(b) != s.value {
			t.Errorf("PutFile(%q, %o, setMode %v): mode %o, value %q; want %o, %q", s.value, s.mode, s.setMode, fi.Mode().Perm(), b, s.want, s.value)
		}
	}
}
