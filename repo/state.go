package repo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrNoState is State's error for a directory in no git working tree (or
// where git is not installed): its caller needs a key of its own for what
// it derives from the directory.
var ErrNoState = errors.New("no state: not in a git working tree")

// State names the content of the working tree top is in, for derived
// artifacts (meta.Derived): "git:" and the tree of HEAD; when the working
// tree differs from it (changes to tracked files, staged or not, and
// files that are neither tracked nor ignored), "+dirty:" and 16 hex
// digits of a SHA-256 over `git diff HEAD --binary` and each such
// file's name and content. A repository without a commit is "git:empty"
// and the same dirty part. The same content gives the same state; any
// change gives another (or the same again once undone).
func State(ctx context.Context, top string) (string, error) {
	if state, ok := cleanState(ctx, top); ok {
		return state, nil
	}
	inside, err := git(ctx, top, "rev-parse", "--is-inside-work-tree")
	if errors.Is(err, errNotRepo) || errors.Is(err, exec.ErrNotFound) || (err == nil && inside != "true") {
		return "", fmt.Errorf("repo: state of %s: %w", top, ErrNoState)
	}
	if err != nil {
		return "", err
	}
	if top, err = git(ctx, top, "rev-parse", "--show-toplevel"); err != nil {
		return "", err
	}
	state, base, err := headTree(ctx, top)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	diff := &counter{w: h}
	// The tree, not HEAD, so that a commit made meanwhile does not mix
	// two bases; no external diff program or text conversion the
	// repository's configuration may name, and no color.
	if err := gitTo(ctx, top, diff, "diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", base, "--"); err != nil {
		return "", err
	}
	var names bytes.Buffer
	if err := gitTo(ctx, top, &names, "ls-files", "--others", "--exclude-standard", "-z"); err != nil {
		return "", err
	}
	if diff.n == 0 && names.Len() == 0 {
		return state, nil
	}
	writeLen(h, diff.n)
	if err := hashUntracked(h, top, names.Bytes()); err != nil {
		return "", err
	}
	return state + "+dirty:" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// cleanState is State's fast path, two runs of git where State takes five
// and a diff: the state of a working tree with a commit and no change
// (git status lists nothing, untracked files included). ok is false for
// anything else, which State then looks at in full.
func cleanState(ctx context.Context, top string) (state string, ok bool) {
	out, err := git(ctx, top, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "HEAD^{tree}")
	lines := strings.Split(out, "\n")
	if err != nil || len(lines) != 3 || lines[0] != "true" {
		return "", false
	}
	var changes bytes.Buffer
	if err := gitTo(ctx, lines[1], &changes, "status", "--porcelain=v2", "-z", "--untracked-files=all"); err != nil || changes.Len() > 0 {
		return "", false
	}
	return "git:" + lines[2], true
}

// headTree is the state of HEAD's tree ("git:TREE", or "git:empty" before
// the first commit) and the tree to compare the working tree with.
func headTree(ctx context.Context, top string) (state, base string, err error) {
	tree, err := git(ctx, top, "rev-parse", "--verify", "-q", "HEAD^{tree}")
	if quietNo(err) {
		// No commit yet: the empty tree (of the repository's hash).
		empty, err := git(ctx, top, "hash-object", "-t", "tree", os.DevNull)
		if err != nil {
			return "", "", err
		}
		return "git:empty", empty, nil
	}
	if err != nil {
		return "", "", err
	}
	return "git:" + tree, tree, nil
}

// hashUntracked writes into h each untracked file of names (NUL-ended,
// relative to top): its name and its content (a symbolic link's target;
// nothing for a directory, a nested repository, or another kind of node,
// which reading could block).
func hashUntracked(h io.Writer, top string, names []byte) error {
	root, err := os.OpenRoot(top)
	if err != nil {
		return err
	}
	defer root.Close()
	for name := range strings.SplitSeq(string(names), "\x00") {
		if name == "" {
			continue // after the last NUL
		}
		writeLen(h, int64(len(name)))
		io.WriteString(h, name)
		p := filepath.FromSlash(strings.TrimSuffix(name, "/"))
		fi, err := root.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			h.Write([]byte{0}) // removed meanwhile
		case err != nil:
			return err
		case fi.Mode().IsRegular():
			h.Write([]byte{1})
			if err := hashFile(h, root, p); err != nil {
				return err
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := root.Readlink(p)
			if err != nil {
				return err
			}
			h.Write([]byte{2})
			writeLen(h, int64(len(target)))
			io.WriteString(h, target)
		default:
			h.Write([]byte{3})
		}
	}
	return nil
}

// hashFile writes the length and the SHA-256 of the file p of root into
// h: the length first, so that no content can pass for the next name.
func hashFile(h io.Writer, root *os.Root, p string) error {
	// Non-blocking: a FIFO that replaced the file since Lstat does not
	// hang the open.
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	sum := sha256.New()
	n, err := io.Copy(sum, f)
	if err != nil {
		return err
	}
	writeLen(h, n)
	h.Write(sum.Sum(nil))
	return nil
}

// writeLen writes n into h, as 8 bytes.
func writeLen(h io.Writer, n int64) {
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// counter counts what it writes to w.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
