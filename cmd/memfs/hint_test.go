package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs/internal/mountinfo"
	"github.com/memfs/memfs/mountclient"
)

func TestHintPerAgent(t *testing.T) {
	for agent, file := range hintFiles {
		t.Run(agent, func(t *testing.T) {
			out := mustRun(t, "", "hint", "--mount", "/home/u/memory", agent)
			for _, want := range []string{
				hintBegin, hintEnd,
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
			if strings.Contains(out, mountPlaceholder) {
				t.Errorf("hint with --mount still has the placeholder")
			}
			// The section goes into the agent's own file by default.
			dir := t.TempDir()
			t.Chdir(dir)
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
	store, mnt := "dir:"+t.TempDir(), t.TempDir()
	mustRun(t, "", "import", "--store", store, "../../testdata/sample")
	startMount(t, store, mnt, nil)
	// The mount is one that hint finds by itself (others may run too).
	if found := mountPoints(mountclient.Mounts()); !slices.Contains(found, mnt) {
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

func TestHintWriteIdempotent(t *testing.T) {
	file := filepath.Join(t.TempDir(), "CLAUDE.md")
	mine := "# My project\n\nBuild with make.\n"
	if err := os.WriteFile(file, []byte(mine+"no newline at the end"), 0o640); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "", "hint", "--write", "--mount", "/m1", "claude", file)
	if !strings.Contains(out, "written") {
		t.Errorf("first --write said %q", out)
	}
	first, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(first), mine+"no newline at the end\n\n"+hintBegin) {
		t.Errorf("the section is not appended after the user's text:\n%s", first)
	}

	out = mustRun(t, "", "hint", "--write", "--mount", "/m1", "claude", file)
	second, _ := os.ReadFile(file)
	if string(second) != string(first) {
		t.Errorf("a second --write changed the file:\n%s\nwas\n%s", second, first)
	}
	if !strings.Contains(out, "already up to date") {
		t.Errorf("second --write said %q, want \"already up to date\"", out)
	}

	// The user adds text after the section; a new mountpoint replaces the
	// section in place and keeps the text on both sides.
	after := "\n## Later notes\nkeep me\n"
	if err := os.WriteFile(file, append(second, after...), 0o640); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "", "hint", "--write", "--mount", "/m2", "claude", file)
	third, _ := os.ReadFile(file)
	s := string(third)
	if strings.Count(s, hintBegin) != 1 || strings.Count(s, hintEnd) != 1 {
		t.Errorf("the section is not replaced in place (%d begin, %d end markers):\n%s", strings.Count(s, hintBegin), strings.Count(s, hintEnd), s)
	}
	if strings.Contains(s, "/m1") || !strings.Contains(s, "`/m2`") {
		t.Errorf("the section does not name the new mountpoint:\n%s", s)
	}
	if !strings.HasPrefix(s, mine) || !strings.HasSuffix(s, hintEnd+"\n"+after) {
		t.Errorf("the user's text around the section changed:\n%s", s)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v after --write, want 0640 kept", fi.Mode().Perm())
	}

	// A lone marker is the user's damage to fix, not to guess around.
	// (--mount: the mounts other tests on this machine serve meanwhile
	// must not decide this test.)
	lone := filepath.Join(t.TempDir(), "AGENTS.md")
	os.WriteFile(lone, []byte("x\n"+hintBegin+"\n"), 0o644)
	if _, _, err := run(t, "", "hint", "--write", "--mount", "/m1", "codex", lone); err == nil || !strings.Contains(err.Error(), "without its pair") {
		t.Errorf("--write into a file with a lone marker: %v, want a refusal", err)
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

// TestHintQuotesTheMount runs the hint's commands through a shell with a
// mountpoint that holds a space and a quote.
func TestHintQuotesTheMount(t *testing.T) {
	mnt := filepath.Join(t.TempDir(), "agent's memory")
	out := mustRun(t, "", "hint", "--mount", mnt, "codex")
	var lines []string
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, "    cat ") {
			lines = append(lines, "printf '%s\\n' "+strings.TrimPrefix(line, "    cat "))
		}
	}
	if len(lines) != 2 {
		t.Fatalf("want 2 cat lines in the hint, got %d:\n%s", len(lines), out)
	}
	got, err := exec.Command("sh", "-c", strings.Join(lines, "\n")).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := mnt + "/.memfs/search/kernel cache tag:fuse top:5\n" + mnt + "/.memfs/context/kernel cache\n"
	if string(got) != want {
		t.Errorf("the shell reads the hint's paths as %q, want %q", got, want)
	}
}

// TestHintWriteThroughSymlink: a CLAUDE.md that is a symlink (a dotfiles
// manager's) stays one. hint --write writes into the file it names when
// that is the caller's own regular file, and refuses, changing nothing,
// when it is another user's file, a directory, or missing.
func TestHintWriteThroughSymlink(t *testing.T) {
	dots := t.TempDir()
	link := filepath.Join(t.TempDir(), "CLAUDE.md")
	mine := "# dotfiles\n"

	target := filepath.Join(dots, "CLAUDE.md")
	if err := os.WriteFile(target, []byte(mine), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "", "hint", "--write", "--mount", "/m1", "claude", link)
	if !strings.Contains(out, "written") {
		t.Errorf("--write said %q", out)
	}
	if got, err := os.Readlink(link); err != nil || got != target {
		t.Errorf("%s is now %q (%v), want it still a symlink to %s", link, got, err, target)
	}
	data, _ := os.ReadFile(target)
	if !strings.HasPrefix(string(data), mine) || !strings.Contains(string(data), hintBegin) {
		t.Errorf("the link's target does not hold the user's text and the section:\n%s", data)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("the target's mode is %v, want 0640 kept", fi.Mode().Perm())
	}

	others := filepath.Join(dots, "others.md")
	if err := os.WriteFile(others, []byte(mine), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(others, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, target, want string }{
		{"another user's file", others, "is not yours"},
		{"a directory", dots, "not a regular file"},
		{"nothing", filepath.Join(dots, "missing.md"), "names nothing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			link := filepath.Join(t.TempDir(), "CLAUDE.md")
			if err := os.Symlink(tt.target, link); err != nil {
				t.Fatal(err)
			}
			_, _, err := run(t, "", "hint", "--write", "--mount", "/m1", "claude", link)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "symlink") {
				t.Errorf("--write through a symlink to %s: %v, want a refusal containing %q", tt.name, err, tt.want)
			}
			if got, err := os.Readlink(link); err != nil || got != tt.target {
				t.Errorf("%s is now %q (%v), want the symlink left alone", link, got, err)
			}
			if data, err := os.ReadFile(others); err != nil || string(data) != mine {
				t.Errorf("another user's file changed: %q (%v)", data, err)
			}
			if _, err := os.Lstat(filepath.Join(dots, "missing.md")); err == nil {
				t.Errorf("a dangling link's target was created")
			}
		})
	}
}

// TestHintIgnoresOtherUsersMounts: only the caller's own memfs mounts are
// candidates for the section's mountpoint.
func TestHintIgnoresOtherUsersMounts(t *testing.T) {
	info := strings.Join([]string{
		`41 26 0:38 / /home/u/memory rw,nosuid,nodev,relatime shared:5 - fuse.memfs memfs:badger:/home/u/.local/share/memfs/store rw,user_id=1000,group_id=1000`,
		`42 26 0:39 / /root/memory rw - fuse.memfs memfs:dir:/srv/store rw,user_id=0,group_id=0`,
	}, "\n")
	table := mountinfo.Parse(info)
	if got, want := mountPoints(ownMounts(mountclient.MountsIn(table), 0)), []string{"/root/memory"}; !slices.Equal(got, want) {
		t.Errorf("root's candidates = %q, want %q", got, want)
	}
	if got, want := mountPoints(ownMounts(mountclient.MountsIn(table), 1000)), []string{"/home/u/memory"}; !slices.Equal(got, want) {
		t.Errorf("uid 1000's candidates = %q, want %q", got, want)
	}
}
