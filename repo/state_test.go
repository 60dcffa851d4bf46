package repo_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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

// A repository's configuration names no program State runs: a filter
// driver's clean command or process, which git status and diff run on a
// file .gitattributes assign the driver when the index's record of the
// file's stat is stale, is not started, on the clean path or the other.
// A driver's name may hold dots, or be empty (filter=).
func TestStateRunsNoFilter(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := newRepo(t)
	write(t, dir, "z.txt", "z\n") // last in the index: its process stops git
	write(t, dir, "b.md", "b\n")
	write(t, dir, ".gitattributes", "*.go filter=evil\n*.txt filter=ev.il\n*.md filter=\n")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "attributes")
	clean := state(t, dir)

	ran := t.TempDir()
	drivers := []struct{ file, key, command string }{
		{"sub/f.go", "filter.evil.clean", "touch " + ran + "/clean; cat"},
		{"z.txt", "filter.ev.il.process", "touch " + ran + "/process; exit 1"},
		{"b.md", "filter..clean", "touch " + ran + "/unnamed; cat"},
	}
	for _, d := range drivers {
		gitIn(t, dir, "config", d.key, d.command)
	}
	gitIn(t, dir, "config", "filter.evil.required", "true")
	mtime := time.Date(2026, 12, 6, 19, 15, 0, 0, time.UTC)
	stale := func() {
		t.Helper()
		mtime = mtime.Add(time.Second)
		for _, d := range drivers {
			if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(d.file)), mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
	}
	ranFilters := func() []string {
		t.Helper()
		entries, err := os.ReadDir(ran)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}

	stale()
	if s, err := repo.State(t.Context(), dir); s != clean || err != nil {
		t.Errorf("files touched, not changed: %q, %v; want %s", s, err, clean)
	}
	if names := ranFilters(); names != nil {
		t.Errorf("the clean path ran the repository's filters: %v", names)
	}
	stale()
	write(t, dir, "untracked", "x\n") // dirty: the longer path
	if s, err := repo.State(t.Context(), dir); !strings.Contains(s, "+dirty:") || err != nil {
		t.Errorf("an untracked file: %q, %v", s, err)
	}
	if names := ranFilters(); names != nil {
		t.Errorf("the dirty path ran the repository's filters: %v", names)
	}

	// git alone runs each of them: the test tests something.
	for _, d := range drivers {
		stale()
		cmd := exec.Command("git", "-C", dir, "status", "--porcelain", "--", d.file)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_OPTIONAL_LOCKS=0")
		cmd.Run() // the process filter fails it
	}
	if names := ranFilters(); len(names) != len(drivers) {
		t.Errorf("git status ran the filters %v, want %d of them", names, len(drivers))
	}
}

// A filter driver whose name has a '=' cannot be turned off with git's
// -c, which splits at the first '=': State fails rather than run it.
func TestStateFilterNameWithEquals(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := newRepo(t)
	write(t, dir, ".gitattributes", "*.go filter=a=b\n")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "attributes")
	marker := filepath.Join(t.TempDir(), "ran")
	gitIn(t, dir, "config", "filter.a=b.clean", "touch "+marker+"; cat")
	mtime := time.Date(2026, 12, 6, 19, 15, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "sub", "f.go"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	s, err := repo.State(t.Context(), dir)
	if err == nil || !strings.Contains(err.Error(), `the filter driver "a=b"`) {
		t.Errorf("got %q, %v; want an error naming the driver", s, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("State ran the repository's filter")
	}
}

// An untracked file over 1 MiB counts by its size and modification time,
// not its content: State does not read it (a sparse file of 2 GiB here;
// a change of its content that keeps both is not seen), and a change of
// either changes the state. A file of 1 MiB counts by its content.
func TestStateLargeUntracked(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := newRepo(t)
	mtime := time.Date(2026, 12, 6, 19, 15, 0, 123456789, time.UTC)
	file := func(name string, size int64) (change func(size int64, at time.Time, b byte)) {
		p := filepath.Join(dir, name)
		change = func(size int64, at time.Time, b byte) {
			t.Helper()
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644)
			if err == nil {
				err = f.Truncate(size)
			}
			if err == nil {
				_, err = f.WriteAt([]byte{b}, size/2)
			}
			if err == nil {
				err = f.Close()
			}
			if err == nil {
				err = os.Chtimes(p, at, at)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		change(size, mtime, 0)
		return change
	}
	const large = 2 << 30
	disk := file("disk.img", large)
	start := time.Now()
	before := state(t, dir)
	t.Logf("State beside a sparse file of 2 GiB: %v", time.Since(start))

	disk(large, mtime, 'x')
	if s := state(t, dir); s != before {
		t.Errorf("its content changed, its size and time kept: %s, want %s (State read it)", s, before)
	}
	seen := map[string]string{before: "before"}
	for _, tt := range []struct {
		what string
		size int64
		at   time.Time
	}{{"touched", large, mtime.Add(time.Second)}, {"grown", large + 1, mtime}, {"shrunk to 1 MiB", 1 << 20, mtime}} {
		disk(tt.size, tt.at, 'x')
		s := state(t, dir)
		if prev, ok := seen[s]; ok {
			t.Errorf("%s: the state of %s: %s", tt.what, prev, s)
		}
		seen[s] = tt.what
	}
	// Now 1 MiB: its content counts.
	disk(1<<20, mtime, 'y')
	if s := state(t, dir); seen[s] != "" {
		t.Errorf("1 MiB, its content changed: the state of %s: %s", seen[s], s)
	}
}
