package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs/internal/hint"
	"github.com/memfs/memfs/mountclient"
)

func TestHintPerAgent(t *testing.T) {
	for agent, file := range hint.Files {
		t.Run(agent, func(t *testing.T) {
			dir := t.TempDir() // in no repository: the section names none
			t.Chdir(dir)
			out := mustRun(t, "", "hint", "--mount", "/home/u/memory", agent)
			for _, want := range []string{
				hint.Begin, hint.End,
				"`/home/u/memory`",
				"/home/u/memory/.memfs/context.md",
				"/home/u/memory/memory/",
				"/home/u/memory/skills/*/SKILL.md",
				"/home/u/memory/agents/*.json",
				"cat '/home/u/memory/.memfs/search/",
				"cat '/home/u/memory/.memfs/context/",
				"setfattr -n user.memfs.tags -v",
				"setfattr -n user.memfs.agent -v " + agent + " ",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("hint %s lacks %q:\n%s", agent, want, out)
				}
			}
			if strings.Contains(out, hint.Placeholder) {
				t.Errorf("hint with --mount still has the placeholder")
			}
			// The section goes into the agent's own file by default.
			mustRun(t, "", "hint", "--write", "--mount", "/home/u/memory", agent)
			got, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil || string(got) != out {
				t.Errorf("%s after hint --write: %q, %v; want the printed section", file, got, err)
			}
		})
	}
}

// TestHintSearchPathsExist checks that the paths the hint names are the
// mount's: a search and a context pack answer there.
func TestHintSearchPathsExist(t *testing.T) {
	t.Parallel()
	store, mnt := "dir:"+t.TempDir(), t.TempDir()
	mustRun(t, "", "import", "--store", store, "../../testdata/sample")
	startMount(t, store, mnt, nil)
	// The mount is one that hint finds by itself (others may run too).
	if found := mountclient.Mountpoints(mountclient.Mounts(), uint32(os.Getuid())); !slices.Contains(found, mnt) {
		t.Errorf("memfs mounts in /proc/self/mountinfo = %q, want %s among them", found, mnt)
	}
	hint := mustRun(t, "", "hint", "--mount", mnt, "claude")
	for _, rel := range []string{".memfs/search/kernel cache tag:fuse top:5", ".memfs/context/kernel cache", ".memfs/context.md"} {
		if !strings.Contains(hint, filepath.Join(mnt, rel)) {
			t.Errorf("hint does not name %s", rel)
		}
		if _, err := os.ReadFile(filepath.Join(mnt, rel)); err != nil {
			t.Errorf("the hint's %s does not answer on a mount: %v", rel, err)
		}
	}
	for _, glob := range []string{"skills/*/SKILL.md", "agents/*.json"} {
		if m, _ := filepath.Glob(filepath.Join(mnt, glob)); len(m) == 0 {
			t.Errorf("the hint's %s matches nothing on the sample mount", glob)
		}
	}
}

func TestHintErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"hint", "copilot"}, `unknown agent "copilot"; want one of: claude, codex, gemini`},
		{[]string{"hint"}, `unknown agent ""`},
		{[]string{"hint", "--mount", "/m", "claude", "FILE.md"}, "FILE only with --write"},
	}
	for _, tt := range tests {
		_, _, err := run(t, "", tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("memfs %s: %v, want an error containing %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
}

// TestHintRoutesLikeTheOtherCommands: with several mounts, hint names the
// one the other commands would work through (the store MEMFS_STORE
// names), not a refusal.
func TestHintRoutesLikeTheOtherCommands(t *testing.T) {
	store1, store2 := "dir:"+t.TempDir(), "dir:"+t.TempDir()
	mnt1, mnt2 := t.TempDir(), t.TempDir()
	startMount(t, store1, mnt1, nil)
	startMount(t, store2, mnt2, nil)
	t.Setenv("MEMFS_STORE", store2)
	out, errOut, err := run(t, "", "hint", "claude")
	if err != nil || !strings.Contains(out, "`"+mnt2+"`") {
		t.Errorf("hint with two mounts, MEMFS_STORE the second's: %v\n%s\n%s; want %s", err, out, errOut, mnt2)
	}
	out, _, err = run(t, "", "hint", "--store", store1, "codex")
	if err != nil || !strings.Contains(out, "`"+mnt1+"`") {
		t.Errorf("hint --store the first's: %v\n%s; want %s", err, out, mnt1)
	}
}
