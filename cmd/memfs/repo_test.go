package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/repo"
)

// memfs repo id prints the repository's id, and with -v what it is made
// of; a directory that is not there is an error naming it.
func TestRepoID(t *testing.T) {
	dir := t.TempDir()
	git := exec.Command("git", "init", "-q", dir)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	want, err := repo.Identify(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, "", "repo", "id", dir+"/"); got != want.Hash+"\n" {
		t.Errorf("memfs repo id: %q, want %q", got, want.Hash)
	}
	got := mustRun(t, "", "repo", "id", "-v", dir)
	if lines := strings.Split(strings.TrimSpace(got), "\n"); len(lines) != 4 || lines[0] != want.Hash || lines[1] != "path: "+want.Path {
		t.Errorf("memfs repo id -v:\n%s", got)
	}
	missing := filepath.Join(dir, "nope")
	if _, _, err := run(t, "", "repo", "id", missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("memfs repo id of no directory: %v", err)
	}
}
