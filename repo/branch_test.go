package repo_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/memfs/memfs/repo"
)

// branches are the branches of the identities Parents gives in dir, in
// order ("" for the identity with no branch), each checked to have the
// hash Identify gives such an identity.
func branches(t *testing.T, dir string) []string {
	t.Helper()
	ps, err := repo.Parents(t.Context(), identify(t, dir))
	if err != nil {
		t.Fatalf("Parents(%s): %v", dir, err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.Branch)
	}
	return out
}

// The branch checked out before (or the detached HEAD before), then the
// remote's default branch; their identities are the ones Identify gives
// on them.
func TestParents(t *testing.T) {
	origin := newRepo(t)
	dir := filepath.Join(t.TempDir(), "clone")
	gitIn(t, filepath.Dir(dir), "clone", "-q", origin, dir)
	onMain := identify(t, dir)
	if onMain.Branch != "main" || onMain.Remote == "" {
		t.Fatalf("the clone: %+v", onMain)
	}
	if got := branches(t, dir); len(got) != 0 {
		t.Errorf("the default branch has no parent: %q", got)
	}

	gitIn(t, dir, "checkout", "-q", "-b", "feature")
	ps, _ := repo.Parents(t.Context(), identify(t, dir))
	if len(ps) != 1 || ps[0] != onMain {
		t.Errorf("feature's parents: %+v, want main's %+v alone", ps, onMain)
	}
	gitIn(t, dir, "checkout", "-q", "-b", "fix")
	gitIn(t, dir, "checkout", "-q", "feature")
	onFeature := identify(t, dir)
	gitIn(t, dir, "checkout", "-q", "fix")
	ps, _ = repo.Parents(t.Context(), identify(t, dir))
	if len(ps) != 2 || ps[0] != onFeature || ps[1] != onMain {
		t.Errorf("fix's parents: %+v, want feature's, then main's", ps)
	}

	// Made from a detached HEAD (a CI checkout): the identity with no
	// branch first, then the default branch.
	gitIn(t, dir, "checkout", "-q", "--detach")
	detached := identify(t, dir)
	gitIn(t, dir, "checkout", "-q", "-b", "from-detached")
	ps, _ = repo.Parents(t.Context(), identify(t, dir))
	if len(ps) != 2 || ps[0] != detached || ps[1] != onMain {
		t.Errorf("from a detached HEAD: %+v, want %+v then main's", ps, detached)
	}
	// After the previous branch is gone: the default branch.
	gitIn(t, dir, "checkout", "-q", "-b", "gone")
	gitIn(t, dir, "checkout", "-q", "-b", "last")
	gitIn(t, dir, "branch", "-q", "-D", "gone")
	if got := branches(t, dir); !slices.Equal(got, []string{"main"}) {
		t.Errorf("after the previous branch was deleted: %q, want main", got)
	}
}

// Without a remote every branch is one identity: no parent. Without a
// default branch recorded, only the detached HEAD before.
func TestParentsNone(t *testing.T) {
	dir := newRepo(t)
	gitIn(t, dir, "checkout", "-q", "-b", "feature")
	if got := branches(t, dir); len(got) != 0 {
		t.Errorf("no remote: %q", got)
	}
	gitIn(t, dir, "remote", "add", "origin", "https://example.com/proj.git")
	gitIn(t, dir, "checkout", "-q", "--detach")
	gitIn(t, dir, "checkout", "-q", "-b", "other")
	if got := branches(t, dir); !slices.Equal(got, []string{""}) {
		t.Errorf("no previous branch but a detached HEAD, and no origin/HEAD: %q", got)
	}
}
