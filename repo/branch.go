package repo

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
)

// Parents are the identities whose memory a new branch's may start
// from, best first; Memory.See takes the first that has memory. They are
// the same path and remote with another branch: the branch checked out
// before this one (git's @{-1}), or, when that was a detached HEAD (a CI
// checkout, a clone of one), the identity with no branch; then the
// remote's default branch (its refs/remotes/REMOTE/HEAD). None is this
// branch itself, and a repository without a remote, whose branches share
// one identity, has none.
func Parents(ctx context.Context, id Identity) ([]Identity, error) {
	if id.Remote == "" {
		return nil, nil
	}
	prev, detached, err := previousBranch(ctx, id.Path)
	if err != nil {
		return nil, err
	}
	def, err := defaultBranch(ctx, id.Path)
	if err != nil {
		return nil, err
	}
	var out []Identity
	add := func(branch string) {
		if branch == id.Branch || slices.ContainsFunc(out, func(p Identity) bool { return p.Branch == branch }) {
			return
		}
		p := Identity{Path: id.Path, Remote: id.Remote, Branch: branch}
		p.Hash = hash(p)
		out = append(out, p)
	}
	if prev != "" || detached {
		add(prev) // "" when detached: the identity with no branch
	}
	if def != "" {
		add(def)
	}
	return out, nil
}

// previousBranch is the branch checked out before the current one; ""
// when there was none or it is gone, and with detached when it was a
// detached HEAD (git names no ref for it, but a commit).
func previousBranch(ctx context.Context, top string) (name string, detached bool, err error) {
	ref, err := git(ctx, top, "rev-parse", "--verify", "-q", "--symbolic-full-name", "@{-1}")
	if quietNo(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if ref == "" {
		_, err := git(ctx, top, "rev-parse", "--verify", "-q", "@{-1}")
		return "", err == nil, nil
	}
	name, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok {
		return "", false, nil
	}
	return name, false, nil
}

// defaultBranch is the default branch of the repository's remote (as
// Identify chooses it), as the clone recorded it; "" when it did not.
func defaultBranch(ctx context.Context, top string) (string, error) {
	remote, err := remoteName(ctx, top)
	if remote == "" || err != nil {
		return "", err
	}
	prefix := "refs/remotes/" + remote + "/"
	ref, err := git(ctx, top, "symbolic-ref", "-q", prefix+"HEAD")
	if quietNo(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	name, ok := strings.CutPrefix(ref, prefix)
	if !ok {
		return "", nil
	}
	return name, nil
}

// quietNo reports whether err is git's quiet "no" (-q): exit status 1.
func quietNo(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == 1
}

// Word is the query word of id's memory for a pack or a search
// (.memfs/context/, .memfs/search/): "repo:ID", followed by ",PARENT" for
// each of its Parents, whose memory a new branch reads until its first
// write starts its own.
func Word(ctx context.Context, id Identity) (string, error) {
	ps, err := Parents(ctx, id)
	w := "repo:" + id.Hash
	for _, p := range ps {
		w += "," + p.Hash
	}
	return w, err
}
