package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs/internal/install"
)

// visibleCommands lists the names of the commands a user is shown.
func visibleCommands(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, c := range newApp(nil, nil).Commands {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	if len(names) < 10 {
		t.Fatalf("only %d visible commands: %q", len(names), names)
	}
	return names
}

func TestHelpListsCommands(t *testing.T) {
	out := mustRun(t, "", "--help")
	for _, name := range visibleCommands(t) {
		if !strings.Contains(out, "\n   "+name) {
			t.Errorf("memfs --help does not list %s:\n%s", name, out)
		}
	}
	if strings.Contains(out, "mount-helper") {
		t.Errorf("memfs --help lists the hidden mount-helper:\n%s", out)
	}
}

func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			out := mustRun(t, "", "completion", shell)
			if !strings.Contains(out, "--generate-bash-completion") || !strings.Contains(out, "memfs") {
				t.Errorf("%s completion script does not ask memfs for completions:\n%s", shell, out)
			}
		})
	}
	if _, _, err := run(t, "", "completion", "fish"); err == nil || !strings.Contains(err.Error(), "want bash or zsh") {
		t.Errorf("completion fish: %v, want a refusal naming bash and zsh", err)
	}

	// What the scripts ask for: the commands, and a command's flags.
	words := strings.Fields(complete(t, nil, "--generate-bash-completion"))
	for _, name := range visibleCommands(t) {
		if !slices.Contains(words, name) {
			t.Errorf("completion of memfs does not offer %s: %q", name, words)
		}
	}
	if slices.Contains(words, "mount-helper") {
		t.Errorf("completion offers the hidden mount-helper")
	}
	if flags := complete(t, nil, "mount", "--re", "--generate-bash-completion"); !strings.Contains(flags, "--read-only\n") {
		t.Errorf("completion of memfs mount --re does not offer --read-only:\n%s", flags)
	}
	if zsh := complete(t, []string{"0=zsh"}, "--generate-bash-completion"); !strings.Contains(zsh, "mount:mount a memory store") {
		t.Errorf("zsh completion lacks \"name:usage\" lines:\n%s", zsh)
	}
}

// complete runs memfs (this test binary, as memfs) the way the completion
// scripts do: urfave/cli reads the word before the cursor from os.Args, so
// this cannot run in-process.
func complete(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "MEMFS_TEST_MAIN=1"), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("memfs %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// TestBashCompletionScript runs the bash script against a memfs on PATH
// (this test binary, acting as memfs).
func TestBashCompletionScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash on this machine")
	}
	bin := t.TempDir()
	if err := os.Symlink(os.Args[0], filepath.Join(bin, "memfs")); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "memfs.bash")
	if err := os.WriteFile(script, []byte(mustRun(t, "", "completion", "bash")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "--norc", "-c", `source "$1"; COMP_WORDS=(memfs unm); COMP_CWORD=1; _memfs_complete; echo "${COMPREPLY[*]}"`, "bash", script)
	cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1", "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "unmount" {
		t.Errorf("bash completes \"memfs unm\" to %q, want unmount", got)
	}
}

func TestManPage(t *testing.T) {
	page := mustRun(t, "", "man")
	if !strings.HasPrefix(page, ".nh\n.TH memfs 1") {
		t.Errorf("man page does not start with a section 1 title:\n%.200s", page)
	}
	for _, name := range visibleCommands(t) {
		if !strings.Contains(page, "\n.SH "+name+"\n") && !strings.Contains(page, "\n.SH "+name+",") {
			t.Errorf("man page has no section for %s", name)
		}
	}
	if strings.Contains(page, "mount-helper") {
		t.Errorf("man page documents the hidden mount-helper")
	}
	// It must be valid roff: man renders it without complaint.
	if _, err := exec.LookPath("groff"); err == nil {
		cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z")
		cmd.Stdin = strings.NewReader(page)
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("groff -man on the page: %v\n%s", err, out)
		}
	}
}

func TestInstall(t *testing.T) {
	prefix := t.TempDir()
	out := mustRun(t, "", "install", "--prefix", prefix)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	self, _ = filepath.EvalSymlinks(self)
	link := filepath.Join(prefix, "sbin", "mount.fuse.memfs")
	for _, l := range []string{link, filepath.Join(prefix, "sbin", "umount.fuse.memfs")} {
		if target, err := os.Readlink(l); err != nil || target != self {
			t.Errorf("%s -> %q (%v), want %s", l, target, err, self)
		}
	}
	files := map[string]string{
		"share/bash-completion/completions/memfs": "complete -o bashdefault -o default -F _memfs_complete memfs",
		"share/zsh/site-functions/_memfs":         "#compdef memfs",
		"share/man/man1/memfs.1":                  ".TH memfs 1",
		install.SystemUnit:                        "\nExecStart=" + self + " mount ",
		install.UserUnit:                          "\nExecStart=" + self + " mount ",
	}
	for rel, want := range files {
		data, err := os.ReadFile(filepath.Join(prefix, rel))
		if err != nil || !strings.Contains(string(data), want) {
			t.Errorf("%s: %v; want it to contain %q", rel, err, want)
		}
		if !strings.Contains(out, filepath.Join(prefix, rel)) {
			t.Errorf("install does not say it wrote %s:\n%s", rel, out)
		}
	}
	// Again: an earlier install is replaced, not an error.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/old/memfs", link); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "", "install", "--prefix", prefix)
	if target, _ := os.Readlink(link); target != self {
		t.Errorf("second install left %s -> %q, want %s", link, target, self)
	}
	// A helper that is a file belongs to someone else.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(link, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "", "install", "--prefix", prefix); err == nil || !strings.Contains(err.Error(), "not a symlink") {
		t.Errorf("install over a helper file: %v, want a refusal", err)
	}
	if data, _ := os.ReadFile(link); string(data) != "#!/bin/sh\n" {
		t.Errorf("install changed someone else's helper: %q", data)
	}
}
