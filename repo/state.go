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
	"slices"
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
//
// An untracked file over 1 MiB counts by its size and modification time,
// not its content, which State does not read (an untracked file may be a
// disk image of gigabytes): touching it changes the state, and a change
// that keeps its size and modification time does not.
//
// Git runs no filter (filter.<driver>.clean or .process) that the
// repository's configuration names for its files: State turns off each
// driver the configuration defines, and fails for one whose name has a
// '=', which git's -c cannot name.
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
	off, err := noFilters(ctx, top)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	diff := &counter{w: h}
	// The tree, not HEAD, so that a commit made meanwhile does not mix
	// two bases; no external diff program or text conversion the
	// repository's configuration may name, and no color.
	if err := gitTo(ctx, top, diff, append(off, "diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", base, "--")...); err != nil {
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

// cleanState is State's fast path, three runs of git (rev-parse and
// config at once, then status) and no diff: the state of a working tree
// with a commit and no change (git status lists nothing, untracked files
// included). ok is false for anything else, which State then looks at in
// full.
func cleanState(ctx context.Context, top string) (state string, ok bool) {
	// config beside rev-parse: this path is the whole cost of a cached
	// artifact's read (BENCHMARKS.md), and a run of git a millisecond or two.
	filters := make(chan error, 1)
	var off []string
	go func() {
		var err error
		off, err = noFilters(ctx, top)
		filters <- err
	}()
	out, err := git(ctx, top, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "HEAD^{tree}")
	lines := strings.Split(out, "\n")
	if <-filters != nil || err != nil || len(lines) != 3 || lines[0] != "true" {
		return "", false
	}
	var changes bytes.Buffer
	if err := gitTo(ctx, lines[1], &changes, append(off, "status", "--porcelain=v2", "-z", "--untracked-files=all")...); err != nil || changes.Len() > 0 {
		return "", false
	}
	return "git:" + lines[2], true
}

// noFilters are git's options (before the command) that turn off each
// filter driver the configuration of the repository at top defines: git
// status and diff run a driver's clean command, or its process, on a
// file the repository's .gitattributes assign it (filter=NAME) whenever
// the index's record of the file's stat is stale. An empty command is
// none (git 2.39), and a driver that is not required may have none.
func noFilters(ctx context.Context, top string) ([]string, error) {
	var out bytes.Buffer
	err := gitTo(ctx, top, &out, "config", "-z", "--name-only", "--get-regexp", `^filter\.`)
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil, nil // no such key
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for key := range strings.SplitSeq(out.String(), "\x00") {
		// filter.NAME.VAR, NAME any text ("" too, which filter= names),
		// dots included; filter.VAR names no driver.
		rest, ok := strings.CutPrefix(key, "filter.")
		dot := strings.LastIndexByte(rest, '.')
		if !ok || dot < 0 {
			continue
		}
		names = append(names, rest[:dot])
	}
	slices.Sort(names)
	var args []string
	for _, name := range slices.Compact(names) {
		if strings.Contains(name, "=") {
			// -c splits at the first '=': it would set another key.
			return nil, fmt.Errorf("repo: state of %s: the filter driver %s: a name with '=' cannot be turned off, and git would run it", top, quote(name))
		}
		for _, v := range []string{"clean=", "smudge=", "process=", "required=false"} {
			args = append(args, "-c", "filter."+name+"."+v)
		}
	}
	return args, nil
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

// maxHashedFile is the largest untracked file whose content State reads.
const maxHashedFile = 1 << 20

// hashUntracked writes into h each untracked file of names (NUL-ended,
// relative to top): its name and its content (over maxHashedFile, its
// size and modification time; a symbolic link's target; nothing for a
// directory, a nested repository, or another kind of node, which reading
// could block).
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
		case fi.Mode().IsRegular() && fi.Size() > maxHashedFile:
			h.Write([]byte{4})
			writeLen(h, fi.Size())
			writeLen(h, fi.ModTime().UnixNano())
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
// h: the length first, so that no content can pass for the next name. It
// reads at most maxHashedFile+1 bytes, should the file have grown since
// it was looked at.
func hashFile(h io.Writer, root *os.Root, p string) error {
	// Non-blocking: a FIFO that replaced the file since Lstat does not
	// hang the open.
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	sum := sha256.New()
	n, err := io.Copy(sum, io.LimitReader(f, maxHashedFile+1))
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
