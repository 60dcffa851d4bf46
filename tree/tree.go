// Package tree carries a directory tree's nodes between the file system
// and backend entries: what lstat(2) and the user.* attributes say of a
// node (NodeInfo), and ExportEntries, which writes entries as the nodes
// they are. The engine (package memfs) imports and exports a store with
// it; package mountclient exports through a mount with it, without the
// engine.
package tree

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/usererr"
)

// Import and export carry every node type between a directory tree and a
// store: files, directories, symlinks, fifos, sockets, devices and hard
// links, with mode, owner, times and user.* attributes. Neither ever
// follows a symlink: import reads each name with lstat(2) and
// readlink(2), export makes symlinks and sets attributes with the *at
// calls and AT_SYMLINK_NOFOLLOW. What cannot be carried is reported on
// the Tally, one line each, after which the rest is carried.

// Progress follows an import or an export: Start with the count of
// names, Add as they are done, Done at the end (search.Progress is one).
type Progress interface {
	Start(total int)
	Add(n int)
	Done()
}

// NoProgress is the Progress of a caller that wants none.
type NoProgress struct{}

func (NoProgress) Start(int) {}
func (NoProgress) Add(int)   {}
func (NoProgress) Done()     {}

// A Tally counts what an import or an export carried, by kind, and
// reports what it could not carry, one line each, on its writer.
type Tally struct {
	w      io.Writer
	counts map[string]int
	failed int
}

// NewTally returns a Tally that reports on w (io.Discard when nil).
func NewTally(w io.Writer) *Tally {
	if w == nil {
		w = io.Discard
	}
	return &Tally{w: w, counts: map[string]int{}}
}

// kinds are the kinds a summary names, in order, singular and plural.
var kinds = []struct{ one, many string }{
	{"file", "files"},
	{"directory", "directories"},
	{"symlink", "symlinks"},
	{"fifo", "fifos"},
	{"socket", "sockets"},
	{"char device", "char devices"},
	{"block device", "block devices"},
	{"hard link", "hard links"},
}

// Add counts one node of kind carried (backend.TypeName, "hard link").
func (t *Tally) Add(kind string) { t.counts[kind]++ }

// Fail reports what could not be carried: Err then fails.
func (t *Tally) Fail(format string, args ...any) {
	t.failed++
	t.Note(format, args...)
}

// Note reports what was left out on purpose. An error among args is told
// as usererr.Message tells it: "mkdir", not the os.Root's "mkdirat".
func (t *Tally) Note(format string, args ...any) {
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = usererr.Message(err)
		}
	}
	fmt.Fprintf(t.w, format+"\n", args...)
}

// Summary is "12 files, 3 directories, 1 hard link": files always, the
// other kinds when there are some.
func (t *Tally) Summary() string {
	var parts []string
	for i, k := range kinds {
		n := t.counts[k.one]
		if n == 0 && i > 0 {
			continue
		}
		name := k.many
		if n == 1 {
			name = k.one
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, name))
	}
	return strings.Join(parts, ", ")
}

// Err is the error of op (a command's name) when something could not be
// carried, nil otherwise.
func (t *Tally) Err(op string) error {
	if t.failed == 0 {
		return nil
	}
	if t.failed == 1 {
		return fmt.Errorf("%s: 1 name could not be carried (see above)", op)
	}
	return fmt.Errorf("%s: %d names could not be carried (listed above)", op, t.failed)
}

// NodeInfo is what lstat(2) and the user.* attributes say of the node at
// path, never following a symlink (a symlink's attributes are not read:
// Linux keeps no user.* attribute on one), and st, the node's stat.
func NodeInfo(path string) (backend.Info, *syscall.Stat_t, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return backend.Info{}, nil, err
	}
	info, st := infoOf(fi)
	if info.Mode.Type() != fs.ModeSymlink {
		if info.XAttrs, err = FileXAttrs(path); err != nil {
			return backend.Info{}, nil, err
		}
	}
	return info, st, nil
}

// infoOf is the Info that lstat's fi says, without attributes, and its stat.
func infoOf(fi fs.FileInfo) (backend.Info, *syscall.Stat_t) {
	st := fi.Sys().(*syscall.Stat_t)
	info := backend.Info{
		Mode:  backend.FileMode(st.Mode),
		MTime: time.Unix(st.Mtim.Unix()),
		ATime: time.Unix(st.Atim.Unix()),
		UID:   st.Uid, GID: st.Gid,
	}
	if info.Mode&fs.ModeDevice != 0 {
		info.Rdev = uint64(st.Rdev)
	}
	return info, st
}

// NodeInfoAt is NodeInfo of the node rel of root, however deep: the root
// walks rel one segment at a time, never following a symlink.
func NodeInfoAt(root *os.Root, rel string) (backend.Info, *syscall.Stat_t, error) {
	fi, err := root.Lstat(rel)
	if err != nil {
		return backend.Info{}, nil, err
	}
	info, st := infoOf(fi)
	if info.Mode.Type() != fs.ModeSymlink {
		p, done, err := procPath(root, rel)
		if err != nil {
			return backend.Info{}, nil, err
		}
		defer done()
		if info.XAttrs, err = xattrsOf(p, unix.Listxattr, unix.Getxattr); err != nil {
			return backend.Info{}, nil, err
		}
	}
	return info, st, nil
}

// FileXAttrs reads the user.* attributes of path (not following a
// symlink); nil when it has none, or its filesystem keeps none.
func FileXAttrs(path string) (map[string][]byte, error) {
	return xattrsOf(path, unix.Llistxattr, unix.Lgetxattr)
}

// xattrsOf is FileXAttrs with the list and get calls given: the l-calls
// for a path, the following ones for a /proc/self/fd path.
func xattrsOf(path string, list func(string, []byte) (int, error), get func(string, string, []byte) (int, error)) (map[string][]byte, error) {
	buf := make([]byte, 4096)
	n, err := list(path, buf)
	if errors.Is(err, unix.ENOTSUP) || n == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listxattr %s: %w", path, err)
	}
	var x map[string][]byte
	for name := range strings.SplitSeq(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if !strings.HasPrefix(name, backend.XAttrPrefix) {
			continue
		}
		v := make([]byte, 4096)
		m, err := get(path, name, v)
		if errors.Is(err, unix.ENODATA) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("getxattr %s %s: %w", path, name, err)
		}
		if x == nil {
			x = make(map[string][]byte)
		}
		x[name] = v[:m]
	}
	return x, nil
}
