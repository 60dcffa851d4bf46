package memfs_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
)

// A git repository made and committed to in the mount, and a binary file,
// stay out of search (.memfs/search/) and of the context pack, through the
// kernel: the files stay in the mount (issue 30, finding 1).
func TestMountGitAndBinaryOutOfSearchAndPack(t *testing.T) {
	needFUSE(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git: %v (this test runs git in the mount)", err)
	}
	store, mnt := t.TempDir(), t.TempDir()
	st, err := dirstore.Open(store)
	must(t, err)
	f, err := memfs.Open(context.Background(), st, memfs.Options{JournalPath: filepath.Join(store, dirstore.JournalName), Namespace: true})
	must(t, err)
	s := serve(t, f, mnt, memfs.MountOptions{})
	repo := filepath.Join(mnt, "memory")
	must(t, os.WriteFile(filepath.Join(repo, "a.md"), []byte("# A\nthe wombat digs\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(repo, "blob.bin"), []byte("x\x9c wombat \xcb\xc9 burrow"), 0o644))
	git := func(args ...string) {
		t.Helper()
		// A subprocess: the serving process never runs a client of its own mount.
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "wombat burrow commit")
	if _, err := os.Stat(filepath.Join(repo, ".git/COMMIT_EDITMSG")); err != nil {
		t.Fatalf("the repository is not in the mount: %v", err)
	}
	must(t, f.Flush(context.Background()))
	for _, q := range []string{"wombat", "burrow", "commit", "hook"} {
		b, err := os.ReadFile(filepath.Join(mnt, ".memfs/search", url.PathEscape(q)))
		must(t, err)
		got := string(b)
		if strings.Contains(got, ".git") || strings.Contains(got, "blob.bin") {
			t.Errorf(".memfs/search/%s holds .git or binary content:\n%s", q, got)
		}
		if q == "wombat" && !strings.Contains(got, "memory/a.md") {
			t.Errorf(".memfs/search/wombat: got %q, want memory/a.md", got)
		}
	}
	b, err := os.ReadFile(filepath.Join(mnt, ".memfs/context.md"))
	must(t, err)
	if pack := string(b); strings.Contains(pack, ".git") || strings.Contains(pack, "blob.bin") || !strings.Contains(pack, "the wombat digs") {
		t.Errorf(".memfs/context.md: want memory/a.md and neither .git nor binary content, got:\n%s", pack)
	}
	s.stop(t)
	must(t, f.Close(context.Background()))
}
