package hint

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/repo"
)

func TestWriteIdempotent(t *testing.T) {
	file := filepath.Join(t.TempDir(), "CLAUDE.md")
	mine := "# My project\n\nBuild with make.\n"
	if err := os.WriteFile(file, []byte(mine+"no newline at the end"), 0o640); err != nil {
		t.Fatal(err)
	}
	changed, err := Write(file, Section("claude", "/m1"))
	if err != nil || !changed {
		t.Fatalf("first Write: %v, changed %v; want written", err, changed)
	}
	first, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(first), mine+"no newline at the end\n\n"+Begin) {
		t.Errorf("the section is not appended after the user's text:\n%s", first)
	}

	changed, err = Write(file, Section("claude", "/m1"))
	second, _ := os.ReadFile(file)
	if string(second) != string(first) {
		t.Errorf("a second --write changed the file:\n%s\nwas\n%s", second, first)
	}
	if err != nil || changed {
		t.Errorf("second Write: %v, changed %v; want unchanged", err, changed)
	}

	// The user adds text after the section; a new mountpoint replaces the
	// section in place and keeps the text on both sides.
	after := "\n## Later notes\nkeep me\n"
	if err := os.WriteFile(file, append(second, after...), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(file, Section("claude", "/m2")); err != nil {
		t.Fatal(err)
	}
	third, _ := os.ReadFile(file)
	s := string(third)
	if strings.Count(s, Begin) != 1 || strings.Count(s, End) != 1 {
		t.Errorf("the section is not replaced in place (%d begin, %d end markers):\n%s", strings.Count(s, Begin), strings.Count(s, End), s)
	}
	if strings.Contains(s, "/m1") || !strings.Contains(s, "`/m2`") {
		t.Errorf("the section does not name the new mountpoint:\n%s", s)
	}
	if !strings.HasPrefix(s, mine) || !strings.HasSuffix(s, End+"\n"+after) {
		t.Errorf("the user's text around the section changed:\n%s", s)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v after --write, want 0640 kept", fi.Mode().Perm())
	}

	// A lone marker is the user's damage to fix, not to guess around.
	lone := filepath.Join(t.TempDir(), "AGENTS.md")
	os.WriteFile(lone, []byte("x\n"+Begin+"\n"), 0o644)
	if _, err := Write(lone, Section("codex", "/m1")); err == nil || !strings.Contains(err.Error(), "without its pair") {
		t.Errorf("--write into a file with a lone marker: %v, want a refusal", err)
	}
}

// TestSectionQuotesTheMount runs the hint's commands through a shell with a
// mountpoint that holds a space and a quote.
func TestSectionQuotesTheMount(t *testing.T) {
	mnt := filepath.Join(t.TempDir(), "agent's memory")
	out := Section("codex", mnt)
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

// TestWriteThroughSymlink: a CLAUDE.md that is a symlink (a dotfiles
// manager's) stays one. Write writes into the file it names when
// that is the caller's own regular file, and refuses, changing nothing,
// when it is another user's file, a directory, or missing.
func TestWriteThroughSymlink(t *testing.T) {
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
	changed, err := Write(link, Section("claude", "/m1"))
	if err != nil || !changed {
		t.Fatalf("first Write: %v, changed %v; want written", err, changed)
	}
	if got, err := os.Readlink(link); err != nil || got != target {
		t.Errorf("%s is now %q (%v), want it still a symlink to %s", link, got, err, target)
	}
	data, _ := os.ReadFile(target)
	if !strings.HasPrefix(string(data), mine) || !strings.Contains(string(data), Begin) {
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
			_, err := Write(link, Section("claude", "/m1"))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "symlink") {
				t.Errorf("Write through a symlink to %s: %v, want a refusal containing %q", tt.name, err, tt.want)
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

// TestSectionSaysWhatEachAgentNeeds: Claude Code and Gemini CLI load the
// context pack through an @ import line; Codex must be given the mount
// as a writable root of its sandbox.
func TestSectionSaysWhatEachAgentNeeds(t *testing.T) {
	for agent, want := range map[string]string{
		"claude": "\n@/m1/.memfs/context.md\n",
		"gemini": "\n@/m1/.memfs/context.md\n",
		"codex":  `writable_roots = ["/m1"]`,
	} {
		if out := Section(agent, "/m1"); !strings.Contains(out, want) {
			t.Errorf("the %s section lacks %q:\n%s", agent, want, out)
		}
	}
	if out := Section("codex", "/m1"); strings.Contains(out, "\n@/m1") {
		t.Errorf("the codex section has an @ import, which Codex does not read:\n%s", out)
	}
}

// TestMountpointRoutes: with several mounts, the one the other commands
// route to (routed) is the hint's; without one, several are an error.
func TestMountpointRoutes(t *testing.T) {
	mnt, found, err := Mountpoint("", "/b", []string{"/a", "/b"})
	if err != nil || !found || mnt != "/b" {
		t.Errorf("Mountpoint(routed /b of /a, /b) = %q, %v, %v; want /b", mnt, found, err)
	}
	if _, _, err := Mountpoint("", "", []string{"/a", "/b"}); err == nil {
		t.Error("Mountpoint of two mounts, none routed: want an error")
	}
	if mnt, _, _ := Mountpoint("/given", "/b", nil); mnt != "/given" {
		t.Errorf("--mount lost to the routed mount: %q", mnt)
	}
}

// TestInstall writes the section and the MCP registration, saying what it
// did to each file; a second Install says both are up to date.
func TestInstall(t *testing.T) {
	dir := t.TempDir()
	file, err := File("claude")
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, file)
	mcp := filepath.Join(dir, ".mcp.json")
	args := strings.Join(MCPArgs("/m1"), " ")
	for _, want := range []string{
		file + ": memfs section written\n" + mcp + ": memfs MCP server registered (" + args + ")\n",
		file + ": memfs section already up to date\n" + mcp + ": memfs MCP server already registered (" + args + ")\n",
	} {
		var out strings.Builder
		if err := Install(&out, "claude", file, "/m1"); err != nil || out.String() != want {
			t.Errorf("Install said %q, %v; want %q", out.String(), err, want)
		}
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), Section("claude", "/m1")) {
		t.Errorf("%s lacks the section:\n%s", file, b)
	}
	if _, err := File("emacs"); err == nil || !strings.Contains(err.Error(), "want one of: claude, codex, gemini") {
		t.Errorf("File(emacs) = %v; want the known agents named", err)
	}
}

// TestRun: memfs hint's arguments, as Run takes them: what it refuses,
// prints, warns of and writes.
func TestRun(t *testing.T) {
	t.Chdir(t.TempDir()) // in no repository: the section names none
	file := filepath.Join(t.TempDir(), "MINE.md")
	mcp := filepath.Join(filepath.Dir(file), ".mcp.json")
	tests := []struct {
		name           string
		args           []string
		write          bool
		given, routed  string
		mounts         []string
		out, warn, err string
	}{
		{name: "unknown agent", args: []string{"emacs"}, err: "unknown agent"},
		{name: "no agent", err: "unknown agent"},
		{name: "FILE without --write", args: []string{"claude", file}, err: "FILE only with --write"},
		{name: "too many", args: []string{"claude", file, "x"}, write: true, err: "FILE only with --write"},
		{name: "several mounts", args: []string{"claude"}, mounts: []string{"/a", "/b"}, err: "several memfs mounts"},
		{name: "routed", args: []string{"codex"}, routed: "/r", mounts: []string{"/a", "/b"}, out: Section("codex", "/r")},
		{name: "one mount", args: []string{"gemini"}, mounts: []string{"/a"}, out: Section("gemini", "/a")},
		{name: "none", args: []string{"claude"}, out: Section("claude", Placeholder),
			warn: "hint: no memfs mount found; replace " + Placeholder + " with the mountpoint, or pass --mount DIR\n"},
		{name: "write FILE", args: []string{"claude", file}, write: true, given: "/g",
			out: file + ": memfs section written\n" + mcp + ": memfs MCP server registered (" + strings.Join(MCPArgs("/g"), " ") + ")\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, warn strings.Builder
			err := Run(&out, &warn, tt.args, tt.write, tt.given, tt.routed, tt.mounts)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got error %v, want one with %q", err, tt.err)
				}
				if out.Len() > 0 {
					t.Errorf("a refusal printed %q", out.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.out || warn.String() != tt.warn {
				t.Errorf("got out %q, warn %q; want %q, %q", out.String(), warn.String(), tt.out, tt.warn)
			}
		})
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), Section("claude", "/g")) {
		t.Errorf("%s lacks the section for /g:\n%s", file, b)
	}
}

// TestDescriptionNamesTheFiles: the help names each agent's instructions
// file and MCP file as File and MCPFile name them, and the placeholder.
func TestDescriptionNamesTheFiles(t *testing.T) {
	want := []string{Placeholder}
	for agent, file := range Files {
		mcp, err := MCPFile(agent, "")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, file, mcp, "("+agent+")")
	}
	for _, w := range want {
		if !strings.Contains(Description, w) {
			t.Errorf("Description does not name %q:\n%s", w, Description)
		}
	}
}

// In a repository's working tree the section also names that
// repository's memory and how to use it; outside one, none.
func TestSectionInARepository(t *testing.T) {
	dir := t.TempDir()
	git := exec.Command("git", "init", "-q", dir)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	id, err := repo.Identify(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "CLAUDE.md")
	var out bytes.Buffer
	if err := Install(&out, "claude", file, "/m"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	for _, want := range []string{"`/m/repos/" + id.Hash + "/`", "cat '/m/.memfs/context/repo:" + id.Hash + "'", "memfs repo add convention"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the section of a repository's CLAUDE.md lacks %q:\n%s", want, b)
		}
	}
	plain := filepath.Join(t.TempDir(), "CLAUDE.md")
	if err := Install(&out, "claude", plain, "/m"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(plain); strings.Contains(string(b), "repos/") {
		t.Errorf("the section outside a repository names one:\n%s", b)
	}
}
