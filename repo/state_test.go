package repo_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memfs/memfs/repo"
)

func state(t *testing.T, dir string) string {
	t.Helper()
	s, err := repo.State(t.Context(), dir)
	if err != nil {
		t.Fatalf("State(%s): %v", dir, err)
	}
	if !regexp.MustCompile(`^git:([0-9a-f]{40}|[0-9a-f]{64}|empty)(\+dirty:[0-9a-f]{16})?$`).MatchString(s) {
		t.Fatalf("State(%s) = %q", dir, s)
	}
	return s
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The state follows the working tree's content: each change gives
// another, undoing it gives the same again.
func TestState(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no user's excludes file
	dir := newRepo(t)
	write(t, dir, ".gitignore", "*.log\n")
	gitIn(t, dir, "add", ".gitignore")
	gitIn(t, dir, "commit", "-q", "-m", "ignore")
	clean := state(t, dir)
	tree, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD^{tree}").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "git:" + strings.TrimSpace(string(tree)); clean != want {
		t.Fatalf("a clean tree: %s, want %s", clean, want)
	}
	if again := state(t, filepath.Join(dir, "sub", "deeper")); again != clean {
		t.Errorf("from a subdirectory: %s, want %s", again, clean)
	}
	seen := map[string]string{clean: "clean"}
	step := func(what string, change func()) string {
		t.Helper()
		change()
		s := state(t, dir)
		if prev, ok := seen[s]; ok {
			t.Errorf("%s: the state of %s: %s", what, prev, s)
		}
		seen[s] = what
		if !strings.HasPrefix(s, strings.SplitN(clean, "+", 2)[0]) && what != "commit" {
			t.Errorf("%s: another tree: %s", what, s)
		}
		return s
	}
	edited := step("edit", func() { write(t, dir, "sub/f.go", "package f\n\n// X is new.\nvar X int\n") })
	gitIn(t, dir, "add", "sub/f.go")
	if s := state(t, dir); s != edited {
		t.Errorf("staging the edit changed the content's state: %s, want %s", s, edited)
	}
	step("an untracked file", func() { write(t, dir, "new.txt", "new\n") })
	step("its content", func() { write(t, dir, "new.txt", "newer\n") })
	step("staging it", func() { gitIn(t, dir, "add", "new.txt") })
	gitIn(t, dir, "reset", "-q")
	os.Remove(filepath.Join(dir, "new.txt"))
	if s := state(t, dir); s != edited {
		t.Errorf("back to the edit alone: %s, want %s", s, edited)
	}
	write(t, dir, "debug.log", "ignored\n")
	if s := state(t, dir); s != edited {
		t.Errorf("an ignored file changed the state: %s, want %s", s, edited)
	}
	write(t, dir, "sub/f.go", "package f\n")
	if s := state(t, dir); s != clean {
		t.Errorf("the edit undone: %s, want %s", s, clean)
	}
	write(t, dir, "sub/f.go", "package f\n\n// X is new.\nvar X int\n")
	gitIn(t, dir, "commit", "-q", "-am", "two")
	committed := step("commit", func() {})
	if strings.Contains(committed, "dirty") {
		t.Errorf("after a commit: %s", committed)
	}

	gitIn(t, dir, "checkout", "-q", "-b", "other")
	write(t, dir, "other.go", "package f\n")
	gitIn(t, dir, "add", "other.go")
	gitIn(t, dir, "commit", "-q", "-m", "other")
	other := state(t, dir)
	if other == committed {
		t.Errorf("another branch's tree, the same state: %s", other)
	}
	gitIn(t, dir, "checkout", "-q", "main")
	if s := state(t, dir); s != committed {
		t.Errorf("back on main: %s, want %s", s, committed)
	}
}

// Before the first commit: git:empty, dirty with any file.
func TestStateEmpty(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	if s := state(t, dir); s != "git:empty" {
		t.Errorf("empty: %s", s)
	}
	write(t, dir, "a.txt", "a\n")
	untracked := state(t, dir)
	gitIn(t, dir, "add", "a.txt")
	staged := state(t, dir)
	if !strings.HasPrefix(untracked, "git:empty+dirty:") || !strings.HasPrefix(staged, "git:empty+dirty:") || staged == untracked {
		t.Errorf("untracked %s, staged %s", untracked, staged)
	}
}

// Outside a working tree there is no state; the caller's GIT_DIR never
// moves it.
func TestStateOutsideGit(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	if _, err := repo.State(t.Context(), t.TempDir()); !errors.Is(err, repo.ErrNoState) {
		t.Errorf("a plain directory: %v", err)
	}
	dir := newRepo(t)
	if _, err := repo.State(t.Context(), filepath.Join(dir, ".git")); !errors.Is(err, repo.ErrNoState) {
		t.Errorf("in .git: %v", err)
	}
	want := state(t, dir)
	other := newRepo(t)
	write(t, other, "x", "x")
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	if got := state(t, dir); got != want {
		t.Errorf("with another GIT_DIR: %s, want %s", got, want)
	}
}

// A repository's configuration names no program State runs: a file
// system monitor hook (core.fsmonitor), which git status and diff start,
// is not started.
func TestStateRunsNoHook(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := newRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	hook := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "config", "core.fsmonitor", hook)
	write(t, dir, "new.txt", "x\n") // dirty: the longer path too
	state(t, dir)
	os.Remove(filepath.Join(dir, "new.txt"))
	state(t, dir)
	if _, err := os.Stat(marker); err == nil {
		t.Error("State ran the repository's core.fsmonitor hook")
	}
}
