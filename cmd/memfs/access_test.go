package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/syncbuf"
)

// The unprivileged callers: uid and gid 65534, without supplementary
// groups or in group 4242.
const (
	otherUID   = 65534
	staffGroup = 4242
	accessRun  = "access-run" // the run of every change of the access tests' mount
)

// caller runs commands as one user: root runs them as they are, the
// others through setpriv.
type caller struct {
	name  string
	priv  []string // setpriv's arguments; nil for root
	env   []string
	hides []string // what must appear in none of its outputs
	shows []string // what must appear in some of them
}

func (c caller) command(dir string, argv ...string) *exec.Cmd {
	if c.priv != nil {
		argv = append(append(append([]string{"setpriv"}, c.priv...), "--"), argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), c.env...)
	return cmd
}

// run runs argv as c in dir and returns its stdout and stderr together.
func (c caller) run(t *testing.T, dir string, argv ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := c.command(dir, argv...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// sharedDir is a new temporary directory that every user may enter: the
// mountpoint and the memfs binary must be reachable by the unprivileged
// callers (t.TempDir makes its directories 0700).
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// sharedBinary copies this test binary where every user may run it: with
// MEMFS_TEST_MAIN=1 it is the memfs command (see TestMain).
func sharedBinary(t *testing.T) string {
	t.Helper()
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := filepath.Join(sharedDir(t), "memfs")
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// privateFile is a file root writes through the mount, in a directory of
// its own mode and group.
type privateFile struct {
	key     string
	mode    os.FileMode
	dirMode os.FileMode
	gid     int // of the file and its directory
	text    string
}

// setupPrivateTree has root make, through the mount at mnt, files that
// others may and may not read, with the history the event log and the
// change feed will show: a file renamed inside a private directory, one
// deleted there, one moved out of it into a public one.
func setupPrivateTree(t *testing.T, mnt string, files []privateFile) {
	t.Helper()
	p := func(key string) string { return filepath.Join(mnt, key) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	sync := func(key string) {
		t.Helper()
		f, err := os.Open(p(key))
		must(err)
		must(f.Sync()) // fsync flushes the session: the changes reach the event log
		must(f.Close())
	}
	write := func(key, text string, mode os.FileMode, gid int) {
		t.Helper()
		must(os.WriteFile(p(key), []byte(text), mode))
		must(os.Chmod(p(key), mode))
		must(os.Chown(p(key), 0, gid))
		sync(key)
	}
	if fi, err := os.Stat(p("memory")); err != nil || !fi.IsDir() { // every mount makes it
		t.Fatalf("memory/ in the mount: %v, %v", fi, err)
	}
	for _, f := range files {
		dir := filepath.Dir(f.key)
		if _, err := os.Stat(p(dir)); err != nil {
			must(os.Mkdir(p(dir), f.dirMode))
			must(os.Chmod(p(dir), f.dirMode))
			must(os.Chown(p(dir), 0, f.gid))
		}
	}
	for _, f := range files {
		key := f.key
		if strings.HasSuffix(key, "/zanzibar-secret.md") {
			key = "memory/private/draft-kumquat.md" // written under another name first
		}
		write(key, f.text, f.mode, f.gid)
		if key != f.key {
			must(os.Rename(p(key), p(f.key)))
			sync(f.key)
		}
	}
	write("memory/private/deleted-pomelo.md", "deleted: quetzalcoatl\n", 0o600, 0)
	must(os.Remove(p("memory/private/deleted-pomelo.md")))
	write("memory/private/leak-name-tamarind.md", "moved out, now public: axolotl\n", 0o644, 0)
	must(os.Rename(p("memory/private/leak-name-tamarind.md"), p("memory/public/moved.md")))
	sync("memory/public/moved.md")
}

// With --allow-other, a user who may not read a file (its mode, or a
// directory's on the way) learns nothing of it from memfs's own files
// either: search answers, context packs, the event log and its chunks, the
// change feed, status, nor memfs search/context/log --mount run as that
// user. Root asks every question first, so that an answer cached for it
// would be served to the next caller. Whether a user may read a file is
// also asked of the kernel itself (cat), which the answers must agree with.
func TestAllowOtherCallersSeeOnlyWhatTheyMayRead(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("this test runs commands as another user with setpriv (util-linux): %v", err)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root: it mounts with --allow-other and runs commands as uid %d", otherUID)
	}
	files := []privateFile{
		{key: "memory/public/note.md", mode: 0o644, dirMode: 0o755, text: "public note: axolotl\n"},
		{key: "memory/private/zanzibar-secret.md", mode: 0o600, dirMode: 0o700, text: "private: quetzalcoatl\n"},
		{key: "memory/shut/shut-open-file.md", mode: 0o644, dirMode: 0o700, text: "readable file, shut directory: ocelotwhisper\n"},
		{key: "memory/staff/staff-only.md", mode: 0o640, dirMode: 0o750, gid: staffGroup, text: "for group 4242: marzipanfog\n"},
		{key: "memory/scratch/hidden/scratch-lynx.md", mode: 0o600, dirMode: 0o700, text: "working memory: lynxfeather\n"},
	}
	store := "dir:" + t.TempDir()
	mnt := sharedDir(t)
	bin := sharedBinary(t)
	// Every change is of one run (the mount's own), whose projection
	// names private keys: .memfs/runs answers each caller with its own.
	// Working memory (a mem: route) and a quota's usage are held to the
	// same rule.
	startMount(t, store, mnt, []string{"MEMFS_RUN=" + accessRun}, "--allow-other", "--route", "memory/scratch/=mem:", "--quota", "memory/=1MiB")
	setupPrivateTree(t, mnt, files)

	callers := privateTreeCallers()
	checkKernelAccess(t, mnt, files, callers)
	words := []string{"axolotl", "quetzalcoatl", "ocelotwhisper", "marzipanfog", "lynxfeather"}
	runAccessProbes(t, mnt, accessProbes(bin, mnt, words), callers)
	for _, c := range callers {
		out, err := c.run(t, "/", "cat", filepath.Join(mnt, ".memfs/status.json"))
		if hidden := strings.Contains(out, `"usage_hidden":true`); err != nil || hidden != (c.priv != nil) {
			t.Errorf("%s: the quota's usage hidden %v, want %v (%v):\n%s", c.name, hidden, c.priv != nil, err, out)
		}
	}

	// tail -f of the event log and of the change feed follows new changes
	// for a caller who may not see all of them (same sizes as root's).
	for _, file := range []string{".memfs/events.jsonl", ".memfs/changes"} {
		t.Run("tail -f "+file, func(t *testing.T) { tailFollowsWhatItMayRead(t, mnt, callers[1], file) })
	}
}

// privateTreeCallers are root, who may read every file of
// setupPrivateTree's, and uid 65534 without and with group 4242.
func privateTreeCallers() []caller {
	private := []string{"quetzalcoatl", "zanzibar-secret", "draft-kumquat", "deleted-pomelo", "leak-name-tamarind",
		"ocelotwhisper", "shut-open-file", "lynxfeather", "scratch-lynx"}
	staff := []string{"marzipanfog", "staff-only"}
	public := []string{"axolotl", "memory/public/note.md", "memory/public/moved.md"}
	env := []string{"MEMFS_TEST_MAIN=1", "HOME=/"}
	id := fmt.Sprintf("--reuid=%d", otherUID)
	gid := fmt.Sprintf("--regid=%d", otherUID)
	return []caller{
		{name: "root", env: env, shows: append(append(append([]string{}, public...), private...), staff...)},
		{name: "uid 65534", priv: []string{id, gid, "--clear-groups"}, env: env,
			hides: append(append([]string{}, private...), staff...), shows: public},
		{name: "uid 65534 in group 4242", priv: []string{id, gid, fmt.Sprintf("--groups=%d", staffGroup)}, env: env,
			hides: private, shows: append(append([]string{}, public...), staff...)},
	}
}

// checkKernelAccess asks the kernel itself who may cat which file: each
// caller may read what it does not hide, and gets EACCES for the rest.
func checkKernelAccess(t *testing.T, mnt string, files []privateFile, callers []caller) {
	t.Helper()
	for _, f := range files {
		for _, c := range callers {
			out, err := c.run(t, "/", "cat", filepath.Join(mnt, f.key))
			want := c.sees(f.key + f.text)
			if got := err == nil; got != want {
				t.Errorf("cat %s as %s: succeeded %v (%v: %q), want %v", f.key, c.name, got, err, out, want)
			}
			if err != nil && !strings.Contains(out, "Permission denied") {
				t.Errorf("cat %s as %s: %q, want Permission denied (EACCES)", f.key, c.name, out)
			}
		}
	}
}

// sees reports whether s holds nothing c hides.
func (c caller) sees(s string) bool {
	return !slices.ContainsFunc(c.hides, func(h string) bool { return strings.Contains(s, h) })
}

// accessProbe is a question a caller asks of memfs's own files or
// commands.
type accessProbe struct {
	name string
	argv []string
	// want is what this caller's output must hold (besides passing
	// the hides of its caller); nil: only the hides are checked.
	want func(c caller) []string
	// fails: the command fails for a caller with hidden events
	// (log --verify of a filtered view).
	fails bool
	// echo is what the output repeats of the caller's own question
	// (a context pack's "## Search: QUERY" heading): not a leak.
	echo string
}

// accessProbes are the questions of TestAllowOtherCallersSeeOnlyWhatTheyMayRead:
// searches and context packs for each of words and for all of them, by
// file and by command (bin, the mount at mnt), and the event log, change
// feed and status.
func accessProbes(bin, mnt string, words []string) []accessProbe {
	visibleWords := func(c caller) []string {
		var out []string
		for _, w := range words {
			if c.sees(w) {
				out = append(out, w)
			}
		}
		return out
	}
	all := strings.Join(words, " ")
	var probes []accessProbe
	for _, w := range append(words, all) {
		want := func(c caller) []string { return filterWords(visibleWords(c), w) }
		probes = append(probes,
			accessProbe{name: "cat .memfs/search/" + w, argv: []string{"cat", ".memfs/search/" + w}, want: want},
			accessProbe{name: "cat .memfs/context/" + w, argv: []string{"cat", ".memfs/context/" + w}, echo: "## Search: " + w, want: want},
			accessProbe{name: "memfs search --mount " + w, argv: []string{bin, "search", "--mount", mnt, w}, want: want},
			accessProbe{name: "memfs context --mount --query " + w, argv: []string{bin, "context", "--mount", mnt, "--query", w},
				echo: "## Search: " + w, want: want},
		)
	}
	holds := func(s ...string) func(caller) []string { return func(caller) []string { return s } }
	return append(probes,
		accessProbe{name: "memfs search --json", argv: []string{bin, "search", "--mount", mnt, "--json", all}, want: visibleWords},
		accessProbe{name: "cat .memfs/context.md", argv: []string{"cat", ".memfs/context.md"}, want: visibleWords},
		accessProbe{name: "cat .memfs/events.jsonl", argv: []string{"cat", ".memfs/events.jsonl"}, want: holds("memory/public/note.md")},
		accessProbe{name: "ls and cat .memfs/events/", argv: []string{"sh", "-c", "ls .memfs/events/ && cat .memfs/events/* .memfs/events.head"},
			want: holds("memory/public/note.md")},
		accessProbe{name: "cat .memfs/changes", argv: []string{"cat", ".memfs/changes"}, want: holds("memory/public/note.md")},
		accessProbe{name: "ls and cat .memfs/runs/", argv: []string{"sh", "-c", "ls .memfs/runs/ && cat .memfs/runs/" + accessRun + "/*"},
			want: holds(accessRun, "memory/public/note.md")},
		accessProbe{name: "cat .memfs/status", argv: []string{"cat", ".memfs/status"}, want: holds("keys_indexed:")},
		accessProbe{name: "memfs log --mount", argv: []string{bin, "log", "--mount", mnt, "--limit", "1000"}, want: holds("memory/public/note.md")},
		// The last two events (moved.md's) are hidden from the others
		// (it came from the private directory): their page goes back
		// to the one event before that they may see.
		accessProbe{name: "memfs log --mount --json --limit 2", argv: []string{bin, "log", "--mount", mnt, "--json", "--limit", "2"},
			want: func(c caller) []string {
				if c.priv == nil {
					return []string{"memory/public/moved.md"}
				}
				return []string{"memory/public/note.md", "events skipped"}
			}},
		accessProbe{name: "memfs log --mount --verify", argv: []string{bin, "log", "--mount", mnt, "--verify"}, fails: true,
			want: func(c caller) []string {
				if c.priv == nil {
					return []string{"hash chain intact"}
				}
				return []string{"filtered view", "not fully verified"}
			}},
	)
}

// runAccessProbes asks every probe as every caller, root first (so that
// an answer cached for root would leak to the next): no output shows what
// its caller hides, each holds what its probe wants, and all of a
// caller's outputs together show what it may read.
func runAccessProbes(t *testing.T, mnt string, probes []accessProbe, callers []caller) {
	t.Helper()
	seen := make(map[string]*strings.Builder)
	for _, c := range callers {
		seen[c.name] = &strings.Builder{}
	}
	for _, p := range probes {
		for _, c := range callers {
			out := p.ask(t, mnt, c)
			seen[c.name].WriteString(out)
		}
	}
	for _, c := range callers {
		for _, s := range c.shows {
			if !strings.Contains(seen[c.name].String(), s) {
				t.Errorf("no output as %s shows %q, which it may read", c.name, s)
			}
		}
	}
}

// ask runs p as c in the mount at mnt, checks its output, and returns it.
func (p accessProbe) ask(t *testing.T, mnt string, c caller) string {
	t.Helper()
	out, err := c.run(t, mnt, p.argv...)
	if wantErr := p.fails && c.priv != nil; (err != nil) != wantErr {
		t.Errorf("%s as %s: error %v, want an error: %v\n%s", p.name, c.name, err, wantErr, out)
	}
	scrubbed := out
	if p.echo != "" {
		scrubbed = strings.ReplaceAll(out, p.echo, "")
	}
	for _, h := range c.hides {
		if strings.Contains(scrubbed, h) {
			t.Errorf("%s as %s shows %q, which it may not read:\n%s", p.name, c.name, h, out)
		}
	}
	if p.want == nil {
		return out
	}
	for _, w := range p.want(c) {
		if !strings.Contains(out, w) {
			t.Errorf("%s as %s lacks %q:\n%s", p.name, c.name, w, out)
		}
	}
	return out
}

// tailFollowsWhatItMayRead runs tail -f of file as c while root writes a
// public and a private file: c's tail shows the public one alone, and no
// truncation.
func tailFollowsWhatItMayRead(t *testing.T, mnt string, c caller, file string) {
	out := &syncbuf.Buffer{}
	cmd := c.command(mnt, "tail", "-n", "0", "-f", file)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cmd.Process.Kill() // tail itself: setpriv execs it
			cmd.Wait()
		}
	}
	defer stop()
	// What is written from here on is new to tail: it has the file open
	// at its end (setpriv execs tail, so the pid is tail's).
	waitFor(t, "tail -f to open "+file+" at its end", 30*time.Second, func() bool {
		return openAtEnd(cmd.Process.Pid, filepath.Join(mnt, file))
	})
	name := strings.NewReplacer("/", "-", ".", "-").Replace(file)
	pub := "memory/public/late" + name + ".md"
	setupLate(t, mnt, pub, "memory/private/late-secret-yuzu"+name+".md")
	await.Cond(10*time.Second, 50*time.Millisecond, func() bool { return strings.Contains(out.String(), pub) })
	stop()
	got := out.String()
	if !strings.Contains(got, pub) {
		t.Errorf("tail -f %s as %s: no line for %s within 10 s:\n%s", file, c.name, pub, got)
	}
	if strings.Contains(got, "late-secret-yuzu") || strings.Contains(got, "truncated") {
		t.Errorf("tail -f %s as %s shows the private file, or a truncation:\n%s", file, c.name, got)
	}
}

// openAtEnd reports whether process pid has path open with its offset at
// the file's size (from /proc: its descriptors and their positions).
func openAtEnd(pid int, path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err != nil || target != path {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(info)) {
			if pos, ok := strings.CutPrefix(line, "pos:"); ok && strings.TrimSpace(pos) == strconv.FormatInt(fi.Size(), 10) {
				return true
			}
		}
	}
	return false
}

// setupLate writes pub (0644) and priv (0600, in the 0700 directory) as
// root and flushes them.
func setupLate(t *testing.T, mnt, pub, priv string) {
	t.Helper()
	for _, f := range []struct {
		key  string
		mode os.FileMode
	}{{priv, 0o600}, {pub, 0o644}} {
		p := filepath.Join(mnt, f.key)
		if err := os.WriteFile(p, []byte("late\n"), f.mode); err != nil {
			t.Fatal(err)
		}
		h, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Sync(); err != nil && !errors.Is(err, syscall.EINTR) {
			t.Fatal(err)
		}
		h.Close()
	}
}

// filterWords returns the words of query that are in visible.
func filterWords(visible []string, query string) []string {
	var out []string
	for _, w := range strings.Fields(query) {
		if slices.Contains(visible, w) {
			out = append(out, w)
		}
	}
	return out
}
