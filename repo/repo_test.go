package repo_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/repo"
)

// gitIn runs the real git in dir, as a user's shell would, with no
// configuration but the repository's own.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func identify(t *testing.T, dir string) repo.Identity {
	t.Helper()
	id, err := repo.Identify(t.Context(), dir)
	if err != nil {
		t.Fatalf("Identify(%s): %v", dir, err)
	}
	if len(id.Hash) != 16 {
		t.Fatalf("Identify(%s): hash %q, want 16 hex digits", dir, id.Hash)
	}
	return id
}

// newRepo is a working tree with one commit and a subdirectory.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	if err := os.MkdirAll(filepath.Join(dir, "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "f.go"), []byte("package f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "one")
	return dir
}

// The same repository, however its path is spelt: from a subdirectory,
// with a trailing slash, through a symlink; and again on a later call.
func TestIdentityIsStable(t *testing.T) {
	for _, remote := range []bool{false, true} {
		dir := newRepo(t)
		if remote {
			gitIn(t, dir, "remote", "add", "origin", "https://example.com/team/proj.git")
		}
		want := identify(t, dir)
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(dir, link); err != nil {
			t.Fatal(err)
		}
		for _, spelt := range []string{dir + "/", filepath.Join(dir, "sub", "deeper"), link, link + "/sub/", dir} {
			if got := identify(t, spelt); got != want {
				t.Errorf("remote %v: Identify(%s) = %+v, want %+v", remote, spelt, got, want)
			}
		}
	}
}

// Another branch or another remote is another repository's memory; so
// is another clone's path. Without a remote, the path alone names it.
func TestIdentityChanges(t *testing.T) {
	dir := newRepo(t)
	pathOnly := identify(t, dir)
	gitIn(t, dir, "checkout", "-q", "-b", "feature")
	if got := identify(t, dir); got.Hash != pathOnly.Hash || got.Branch != "" || got.Remote != "" {
		t.Errorf("no remote: another branch gave %+v, want the path's id %+v", got, pathOnly)
	}
	gitIn(t, dir, "remote", "add", "origin", "https://example.com/team/proj.git")
	feature := identify(t, dir)
	if feature.Hash == pathOnly.Hash || feature.Branch != "feature" || feature.Remote != "https://example.com/team/proj.git" {
		t.Errorf("with a remote: %+v", feature)
	}
	gitIn(t, dir, "checkout", "-q", "main")
	main := identify(t, dir)
	if main.Hash == feature.Hash || main.Branch != "main" {
		t.Errorf("another branch, the same id: %+v and %+v", main, feature)
	}
	gitIn(t, dir, "remote", "set-url", "origin", "https://example.com/fork/proj.git")
	if fork := identify(t, dir); fork.Hash == main.Hash {
		t.Errorf("another remote, the same id: %+v", fork)
	}
	other := newRepo(t)
	gitIn(t, other, "remote", "add", "origin", "https://example.com/fork/proj.git")
	if got := identify(t, other); got.Hash == identify(t, dir).Hash {
		t.Errorf("another clone's path, the same id: %+v", got)
	}
}

// A remote is origin when there is one, else the first by name; the
// credentials a URL carries never reach the identity.
func TestIdentityRemote(t *testing.T) {
	dir := newRepo(t)
	gitIn(t, dir, "remote", "add", "zeta", "https://example.com/z.git")
	gitIn(t, dir, "remote", "add", "alpha", "https://user:ghp_secret0123456789@example.com/a.git")
	if got := identify(t, dir); got.Remote != "https://example.com/a.git" {
		t.Errorf("first remote by name, without credentials: %q", got.Remote)
	}
	gitIn(t, dir, "remote", "add", "origin", "git@example.com:team/proj.git")
	if got := identify(t, dir); got.Remote != "git@example.com:team/proj.git" {
		t.Errorf("origin: %q", got.Remote)
	}
	gitIn(t, dir, "checkout", "-q", "--detach")
	if got := identify(t, dir); got.Branch != "" || strings.Contains(got.Remote, "secret") {
		t.Errorf("detached: %+v", got)
	}
}

// A directory in no working tree is named by its path.
func TestIdentityOutsideGit(t *testing.T) {
	dir := t.TempDir()
	id := identify(t, dir)
	if id.Remote != "" || id.Branch != "" {
		t.Errorf("%+v", id)
	}
	if again := identify(t, dir+"/"); again != id {
		t.Errorf("%+v, then %+v", id, again)
	}
	if other := identify(t, t.TempDir()); other.Hash == id.Hash {
		t.Errorf("two directories, one id: %+v", other)
	}
}

// Whatever a URL's password holds, and a token in its query, no secret
// reaches the identity; a remote with no URL is none; the caller's
// GIT_DIR never points git at another repository (found by this stop's
// second review).
func TestIdentityLeaksNoSecret(t *testing.T) {
	dir := newRepo(t)
	for _, u := range []string{
		"https://user:pa#SECRET@example.com/a.git",
		"https://user:pa/SECRET@example.com/a.git",
		"https://user:pa?SECRET@example.com/a.git",
		"https://tok SECRET@example.com/a.git",
		"https://u:SECRET@example.com:abc/a.git",
		"https://example.com/a.git?private_token=SECRET",
	} {
		gitIn(t, dir, "config", "remote.origin.url", u)
		if got := identify(t, dir); strings.Contains(got.Remote, "SECRET") || !strings.Contains(got.Remote, "example.com") {
			t.Errorf("%s: remote %q", u, got.Remote)
		}
	}
	gitIn(t, dir, "config", "--unset", "remote.origin.url")
	gitIn(t, dir, "config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
	if got := identify(t, dir); got.Remote != "" {
		t.Errorf("a remote with no URL: %+v", got)
	}
	other := newRepo(t)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	if got := identify(t, filepath.Join(dir, "sub")); got.Path != identify(t, dir).Path {
		t.Errorf("GIT_DIR of another repository moved the id: %+v", got)
	}
}
