package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagsAfterArguments: flags go anywhere after the command, as with
// rclone, git and GNU tools; "--" ends them (issue 30, finding 7).
func TestFlagsAfterArguments(t *testing.T) {
	store := "dir:" + t.TempDir()
	mustRun(t, "note", "put", "memory/a.md", "--store", store)
	if out := mustRun(t, "", "ls", "memory/", "--store", store, "-l"); !strings.Contains(out, "memory/a.md") || !strings.Contains(out, "-rw") {
		t.Errorf("ls memory/ --store S -l = %q, want a long listing of memory/a.md", out)
	}
	file := filepath.Join(t.TempDir(), "CLAUDE.md")
	mustRun(t, "", "hint", "claude", file, "--write", "--mount", "/m")
	if data, err := os.ReadFile(file); err != nil || !strings.Contains(string(data), "/m/memory/") {
		t.Errorf("hint claude FILE --write: %q, %v", data, err)
	}
	// After "--", a word that starts with a dash is an argument.
	if _, _, err := run(t, "", "cat", "--store", store, "--", "--long"); err == nil || !strings.Contains(err.Error(), "--long") {
		t.Errorf("cat -- --long = %v, want an error about the key --long", err)
	}
}
