package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/internal/names"
	"github.com/memfs/memfs/meta"
)

// noControl fails the test when out holds a control character other than
// newline and tab (a name printed raw).
func noControl(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
			t.Errorf("%s holds the raw control character %U:\n%q", what, r, out)
			return
		}
	}
}

// controlNames are names with control characters, each as a path under a
// directory and as showName prints it.
var controlNames = []struct{ path, shown string }{
	{"memory/esc\x1b[2Jclear.md", `"memory/esc\x1b[2Jclear.md"`},
	{"new\nline.md", `"new\nline.md"`},
	{"bel\a/inside.md", `"bel\a"`},
	{"c1\u009b.md", `"c1\u009b.md"`},
}

// makeTree makes ok.md plus every controlName under dir.
func makeTree(t *testing.T, dir string) {
	t.Helper()
	for _, p := range []string{"ok.md", controlNames[0].path, controlNames[1].path, controlNames[2].path, controlNames[3].path} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPutRefusesControlKeys: put refuses a key with a control character,
// naming it quoted, and stores nothing.
func TestPutRefusesControlKeys(t *testing.T) {
	for kind, store := range backends(t) {
		t.Run(kind, func(t *testing.T) {
			s := store()
			for _, key := range []string{"memory/a\nb.md", "esc\x1b[31m.md", "bel\a", "c1\u009b"} {
				_, errOut, err := run(t, "x", "put", "--store", s, key)
				if err == nil {
					t.Fatalf("put %q succeeded, want an error", key)
				}
				if !strings.Contains(err.Error(), strings.Trim(names.Show(key), `"`)) || !strings.Contains(err.Error(), "control character") {
					t.Errorf("put %q = %q, want the key quoted and the reason", key, err)
				}
				noControl(t, "the error", err.Error()+errOut)
			}
			// A store the refused puts did not make is no store at all.
			out, _, err := run(t, "", "ls", "--store", s)
			if err != nil && !strings.Contains(err.Error(), "no store") {
				t.Errorf("after refused puts ls: %v, want nothing listed", err)
			}
			if out != "" {
				t.Errorf("after refused puts ls = %q, want nothing", out)
			}
		})
	}
}

// TestImportReportsControlNames: import takes what it can, and reports
// each source name that cannot be a key on one line, quoted; the command
// fails, naming how many.
func TestImportReportsControlNames(t *testing.T) {
	src := t.TempDir()
	makeTree(t, src)
	store := "dir:" + t.TempDir()
	out, errOut, err := run(t, "", "import", "--store", store, src)
	if err == nil || !strings.Contains(err.Error(), "4 names could not be carried") {
		t.Fatalf("import = %v, want 4 names not carried\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	noControl(t, "import's output", out+errOut)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 4 {
		t.Fatalf("import reported %d lines, want 4 (one per name):\n%s", len(lines), errOut)
	}
	for _, n := range controlNames {
		want := strings.TrimSuffix(names.Show(filepath.Join(src, filepath.FromSlash(n.path))), `"`)
		if strings.Contains(n.path, "/inside.md") {
			want = strings.TrimSuffix(names.Show(filepath.Join(src, "bel\a")), `"`)
		}
		if !strings.Contains(errOut, "import: "+want) {
			t.Errorf("import's report lacks %s:\n%s", want, errOut)
		}
	}
	if got := mustRun(t, "", "ls", "--store", store); got != "ok.md\n" {
		t.Errorf("after import ls = %q, want ok.md alone", got)
	}
}

// TestStoreWithControlNames: a dir store another program filled with
// names no key can be is listed without them, each reported quoted,
// never printed raw.
func TestStoreWithControlNames(t *testing.T) {
	dir := t.TempDir()
	store := "dir:" + dir
	mustRun(t, "x\n", "put", "--store", store, "ok.md")
	makeTree(t, dir)
	out, errOut, err := run(t, "", "ls", "-l", "--store", store)
	if err != nil {
		t.Fatalf("ls: %v\n%s", err, errOut)
	}
	noControl(t, "ls's output", out+errOut)
	if n := strings.Count(errOut, "cannot be a key"); n != 4 {
		t.Errorf("ls reported %d names that cannot be keys, want 4:\n%s", n, errOut)
	}
	for _, n := range controlNames {
		if !strings.Contains(errOut, strings.Trim(n.shown, `"`)) {
			t.Errorf("ls's report lacks %s:\n%s", n.shown, errOut)
		}
	}
	if !strings.Contains(out, "ok.md") {
		t.Errorf("ls -l = %q, want ok.md", out)
	}
	for _, n := range controlNames {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(n.path))); err != nil {
			t.Errorf("%s after ls: %v, want it left as it is", n.shown, err)
		}
	}
}

// TestSymlinkTargetQuoted: a symlink's target is text of any kind; ls -l
// shows it quoted when it holds a control character.
func TestSymlinkTargetQuoted(t *testing.T) {
	dir := t.TempDir()
	store := "dir:" + dir
	mustRun(t, "x\n", "put", "--store", store, "ok.md")
	if err := os.Symlink("evil\x1b]0;pwned\a", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "", "ls", "-l", "--store", store)
	noControl(t, "ls -l", out)
	if want := `link -> "evil\x1b]0;pwned\a"`; !strings.Contains(out, want) {
		t.Errorf("ls -l = %q, want it to show %s", out, want)
	}
}

// TestLogQuotesNames: events an older memfs logged (a key with a control
// character, a process that named itself with one) are shown quoted.
func TestLogQuotesNames(t *testing.T) {
	dir := t.TempDir()
	store := "dir:" + dir
	mustRun(t, "x\n", "put", "--store", store, "ok.md")
	spec, err := parseStore(store)
	if err != nil {
		t.Fatal(err)
	}
	st, err := openStoreAs(spec, false, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	l, err := eventlog.Open(t.Context(), st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	_, err = l.Append(t.Context(), []eventlog.Event{
		{Op: eventlog.OpWrite, Key: "old\x1b[2Jkey.md", Writer: meta.WriterInfo{Comm: "ev\x1bil", PID: 7}},
		{Op: eventlog.OpRename, OldKey: "from\nline", Key: "to\u009b"},
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "", "log", "--store", store)
	noControl(t, "log", out)
	for _, want := range []string{`"old\x1b[2Jkey.md"`, `"ev\x1bil"[7]`, `"from\nline" -> "to\u009b"`, "ok.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("log = %q, want it to show %s", out, want)
		}
	}
	if n := strings.Count(strings.TrimSpace(out), "\n") + 1; n != 3 {
		t.Errorf("log printed %d lines, want 3 (one per event):\n%s", n, out)
	}
}

// TestMountWithControlNames: a mount of a dir store holding names no key
// can be serves the rest, logs each of those names quoted, never raw, and
// refuses to make such a name (EINVAL) through a real mount.
func TestMountWithControlNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := "dir:" + dir
	mustRun(t, "x\n", "put", "--store", store, "ok.md")
	makeTree(t, dir)
	mnt := t.TempDir()
	p := startMount(t, store, mnt, []string{"XDG_STATE_HOME=" + t.TempDir()})
	if b, err := os.ReadFile(filepath.Join(mnt, "ok.md")); err != nil || string(b) != "x\n" {
		t.Errorf("ok.md through the mount: %q, %v", b, err)
	}
	ents, err := os.ReadDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if names.Show(e.Name()) != e.Name() { // quoted: not a plain name
			t.Errorf("the mount lists %q", e.Name())
		}
	}
	if err := os.WriteFile(filepath.Join(mnt, "new\x1b[31m.md"), []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "invalid argument") {
		t.Errorf("create of a name with ESC through the mount = %v, want EINVAL", err)
	}
	if err := p.terminate(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.log)
	}
	log := p.log.String()
	noControl(t, "the mount's log", log)
	if n := strings.Count(log, "cannot be a key"); n != 4 {
		t.Errorf("the mount logged %d names that cannot be keys, want 4:\n%s", n, log)
	}
	for _, n := range controlNames {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(n.path))); err != nil {
			t.Errorf("%s after the mount: %v, want it left as it is", n.shown, err)
		}
	}
}
