package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A dir store under git, used through a mount and left by kill -9 with
// records in its journal: `git add -A` in it takes the keys and none of
// memfs's own files, while mounted, after the crash, and after the
// remount that replays the journal (issue 30).
func TestDirStoreUnderGitThroughAMount(t *testing.T) {
	t.Parallel()
	dir, mnt := t.TempDir(), t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: the test is of a dir store under git")
	}
	git("init", "-q")
	staged := func(when string) []string {
		t.Helper()
		git("add", "-A")
		var names []string
		for _, l := range strings.Split(strings.TrimSpace(git("status", "--porcelain")), "\n") {
			if name := strings.TrimSpace(l[2:]); name != "" {
				names = append(names, name)
			}
		}
		var own []string
		for _, n := range names {
			if n != ".memfs-store" && strings.HasPrefix(n, ".memfs") {
				own = append(own, n)
			}
		}
		if len(own) > 0 {
			t.Errorf("%s: git add -A took memfs's own %v", when, own)
		}
		return names
	}

	p := startMount(t, "dir:"+dir, mnt, nil)
	if err := os.WriteFile(filepath.Join(mnt, "note.md"), []byte("closed before the crash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	staged("mounted")
	p.kill9(t)
	staged("after kill -9")

	p = startMount(t, "dir:"+dir, mnt, nil)
	if err := p.terminate(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.log)
	}
	if !strings.Contains(p.log.String(), "replaying the journal") {
		t.Errorf("the remount replayed no journal:\n%s", p.log)
	}
	if got := staged("after the remount"); !slices.Equal(got, []string{".memfs-store", "note.md"}) {
		t.Errorf("staged after the remount: %v, want the marker and note.md", got)
	}
}
