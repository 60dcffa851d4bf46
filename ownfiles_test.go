package memfs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/session"
)

// gitIn runs git in dir, with no user or system configuration.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the test is of a dir store under git")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// A dir store under git: `git add -A` takes the keys and none of memfs's
// own files (lock, journal, system records), and after a commit another
// session leaves `git status` clean (issue 30).
func TestDirStoreUnderGitCommitsNoOwnFile(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	f := openDir(t, dir)
	must(t, f.Session().Set("memory/note.md", []byte("# a note\n")))
	must(t, f.Close(t.Context()))

	gitIn(t, dir, "add", "-A")
	if got := gitIn(t, dir, "status", "--porcelain"); got != "A  .memfs-store\nA  memory/note.md\n" {
		t.Errorf("git status after add -A:\n%s\nwant only the marker and the key", got)
	}
	gitIn(t, dir, "commit", "-q", "-m", "memory")

	f = openDir(t, dir)
	must(t, f.Session().Set("memory/other.md", []byte("other\n")))
	must(t, f.Close(t.Context()))
	if got := gitIn(t, dir, "status", "--porcelain"); got != "?? memory/other.md\n" {
		t.Errorf("git status after another session:\n%s\nwant only the new key", got)
	}
}

// A store made by the layout before (its journal and lock at the root)
// opens with nothing lost: the journal's records are replayed, and the
// journal moves to where the store keeps it now; a read-only session
// shows them and moves nothing.
func TestDirStoreOldLayoutJournalReplayed(t *testing.T) {
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	must(t, err)
	old := filepath.Join(dir, ".memfs-journal")
	j, _, err := journal.Open(old)
	must(t, err)
	c := session.NewContext(st, session.Options{Journal: j})
	must(t, c.Set("memory/crashed.md", []byte("kept\n")))
	// Killed: the journal holds the value, the store does not.
	must(t, j.Close())
	must(t, st.Close())
	if _, err := os.Stat(filepath.Join(dir, "memory/crashed.md")); err == nil {
		t.Fatal("the value reached the store before the crash: the test proves nothing")
	}
	if fi, err := os.Stat(old); err != nil || fi.Size() == 0 {
		t.Fatalf("the old journal: %v, %v; want records in it", fi, err)
	}

	// Read-only first: it moves nothing, and shows the record.
	ro, err := dirstore.OpenReadOnly(dir)
	must(t, err)
	rf, err := memfs.Open(t.Context(), ro, memfs.Options{JournalPath: filepath.Join(dir, dirstore.JournalName),
		Session: session.Options{ReadOnly: true}})
	must(t, err)
	if v, ok := rf.Session().Get("memory/crashed.md"); !ok || string(v) != "kept\n" {
		t.Errorf("a read-only session shows %q, %v; want the old journal's record", v, ok)
	}
	must(t, rf.Close(t.Context()))
	if fi, err := os.Stat(old); err != nil || fi.Size() == 0 {
		t.Fatalf("the old journal after a read-only open: %v, %v; want it as it was", fi, err)
	}

	st, err = dirstore.Open(dir)
	must(t, err)
	f, err := memfs.Open(t.Context(), st, memfs.Options{JournalPath: filepath.Join(dir, dirstore.JournalName)})
	must(t, err)
	must(t, f.Close(t.Context()))
	if b, err := os.ReadFile(filepath.Join(dir, "memory/crashed.md")); err != nil || string(b) != "kept\n" {
		t.Fatalf("the old journal's record after an open: %q, %v; want it replayed", b, err)
	}
	if _, err := os.Lstat(old); err == nil {
		t.Errorf("the old journal is still at the root: git would commit it")
	}
}
