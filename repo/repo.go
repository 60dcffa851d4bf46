package repo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Identity is a repository's identity and what it was made of.
type Identity struct {
	// Hash is the repository's id: 16 hex digits of the SHA-256 of Path,
	// Remote and Branch (of Path alone when there is no remote).
	Hash string `json:"hash"`
	// Path is the top level of the working tree (or the directory, outside
	// any), absolute, symlinks resolved.
	Path string `json:"path"`
	// Remote is the URL of the remote "origin", else of the first remote
	// by name, without the credentials a URL may carry; "" for none.
	Remote string `json:"remote,omitempty"`
	// Branch is the branch checked out; "" when HEAD is detached (the
	// detached head of a repository with a remote has its own id).
	Branch string `json:"branch,omitempty"`
}

// Text is id as `memfs repo id` prints it: its hash on a line, and with
// verbose what it is made of, a "name: value" line each.
func (id Identity) Text(verbose bool) string {
	if !verbose {
		return id.Hash + "\n"
	}
	return fmt.Sprintf("%s\npath: %s\nremote: %s\nbranch: %s\n", id.Hash, id.Path, id.Remote, id.Branch)
}

// Identify is the identity of the repository dir is in.
func Identify(ctx context.Context, dir string) (Identity, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Identity{}, err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return Identity{}, err
	}
	var id Identity
	top, err := git(ctx, abs, "rev-parse", "--show-toplevel")
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, errNotRepo):
		id.Path = abs // not in a working tree, or no git: the directory alone
	case err != nil:
		// Git refuses the repository (another user's, as safe.directory
		// says): an id of the directory alone would name another memory.
		return Identity{}, err
	default:
		if id.Path, err = filepath.EvalSymlinks(top); err != nil {
			return Identity{}, err
		}
		if id.Remote, err = remote(ctx, id.Path); err != nil {
			return Identity{}, err
		}
		if id.Remote != "" {
			// Detached: no branch (symbolic-ref fails quietly).
			id.Branch, _ = git(ctx, id.Path, "symbolic-ref", "--short", "-q", "HEAD")
		}
	}
	id.Hash = hash(id)
	return id, nil
}

// hash is Identity.Hash of id's parts.
func hash(id Identity) string {
	h := sha256.New()
	h.Write([]byte(id.Path))
	if id.Remote != "" {
		h.Write([]byte{0})
		h.Write([]byte(id.Remote))
		h.Write([]byte{0})
		h.Write([]byte(id.Branch))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// remote is the URL of the repository's remote "origin", else of its
// first remote by name, without credentials; "" when it has none.
func remote(ctx context.Context, top string) (string, error) {
	name, err := remoteName(ctx, top)
	if name == "" || err != nil {
		return "", err
	}
	// As configured: get-url would apply the user's url.*.insteadOf.
	u, err := git(ctx, top, "config", "--get", "remote."+name+".url")
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return "", nil // a remote with no URL is none
	}
	if err != nil {
		return "", err
	}
	return withoutCredentials(u), nil
}

// remoteName is the repository's remote "origin", else its first remote
// by name; "" when it has none.
func remoteName(ctx context.Context, top string) (string, error) {
	out, err := git(ctx, top, "remote")
	if err != nil {
		return "", err
	}
	names := strings.Fields(out)
	if len(names) == 0 {
		return "", nil
	}
	name := "origin"
	if !slices.Contains(names, name) {
		slices.Sort(names)
		name = names[0]
	}
	return name, nil
}

// withoutCredentials is the URL u without what may be a secret: the
// user and password a URL of the form scheme://user:password@host/...
// may carry (whatever characters the password holds: everything up to
// the last '@' goes), and its query and fragment (?private_token=...). A
// scp-like address (git@host:path) names a user, not a secret, and stays
// as it is.
func withoutCredentials(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = rest[at+1:]
	}
	rest, _, _ = strings.Cut(rest, "?")
	rest, _, _ = strings.Cut(rest, "#")
	return scheme + "://" + rest
}

// git runs git with args in dir and returns its output, trimmed (gitTo).
func git(ctx context.Context, dir string, args ...string) (string, error) {
	var out bytes.Buffer
	if err := gitTo(ctx, dir, &out, args...); err != nil {
		return "", err
	}
	return strings.TrimSpace(out.String()), nil
}

// gitTo runs git with args in dir, its output to stdout. Git reads the
// repository's own configuration alone, none of the system's or the
// user's, which differ between machines (GIT_CONFIG_NOSYSTEM,
// GIT_CONFIG_GLOBAL), and takes no lock it can do without
// (GIT_OPTIONAL_LOCKS=0: a State must not fail the user's own git
// commands, or theirs it).
func gitTo(ctx context.Context, dir string, stdout io.Writer, args ...string) error {
	// No program the repository's configuration names runs: no file
	// system monitor hook (core.fsmonitor), which status and diff start.
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "core.fsmonitor=false"}, args...)...)
	// None of the caller's GIT_* (GIT_DIR from a hook, GIT_CONFIG_COUNT)
	// may point git at another repository or configuration.
	cmd.Env = slices.DeleteFunc(cmd.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
	cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stdout = stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.HasPrefix(msg, "fatal: not a git repository") {
			return errNotRepo
		}
		if msg != "" {
			return fmt.Errorf("git %s in %s: %s: %w", strings.Join(args, " "), dir, msg, err)
		}
		return fmt.Errorf("git %s in %s: %w", strings.Join(args, " "), dir, err)
	}
	return nil
}

// errNotRepo is git's answer for a directory in no working tree.
var errNotRepo = errors.New("not in a git working tree")
