package tree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/names"
	"github.com/memfs/memfs/internal/paths"
	"github.com/memfs/memfs/meta"
)

// ExportOptions say how Export and ExportEntries write a tree.
type ExportOptions struct {
	// AsRoot sets each node's owner (only root may).
	AsRoot bool
	// Progress, when set, sees each name done.
	Progress Progress
}

// ExportEntries writes entries, directories first and parents before
// children, under the directory dst as the nodes they are, with their
// mode, times, user.* attributes and, with opts.AsRoot, owner; then the
// directories' attributes and times, children first. load gives the
// value of a file or a symlink. A name already there is replaced. What
// it writes is counted on t, what it cannot reported there (a device
// when not root, an attribute the target cannot hold); the error is
// dst's own.
func ExportEntries(ctx context.Context, dst string, entries []backend.Entry, load func(key string) ([]byte, error), t *Tally, opts ExportOptions) error {
	root, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer root.Close()
	progress := opts.Progress
	if progress == nil {
		progress = NoProgress{}
	}
	progress.Start(len(entries))
	defer progress.Done()
	x := &exporter{root: root, links: map[string]string{}, asRoot: opts.AsRoot, load: load}
	var dirs []backend.Entry
	for _, e := range entries {
		kind := backend.TypeName(e.Info.Mode)
		if _, ok := x.links[e.Info.Link]; ok && e.Info.Link != "" {
			kind = "hard link"
		}
		if err := x.write(e); err != nil {
			t.Fail("export: %s: %v", names.Show(e.Key), err)
			continue
		}
		if e.Info.Mode.IsDir() {
			dirs = append(dirs, e)
		}
		t.Add(kind)
		progress.Add(1)
	}
	for _, e := range slices.Backward(dirs) {
		if err := x.attrs(e); err != nil {
			t.Fail("export: %s: %v", names.Show(e.Key), err)
		} else if err := x.times(e); err != nil {
			t.Fail("export: %s: times: %v", names.Show(e.Key), err)
		}
	}
	return nil
}

// exporter writes nodes under one directory, through an os.Root and the
// *at calls on the parent's descriptor.
type exporter struct {
	root   *os.Root
	links  map[string]string // hard-link group -> the first name written
	asRoot bool
	load   func(key string) ([]byte, error) // the value of a file or symlink
}

// parent opens the directory holding key, through no symlink, and
// returns it with key's base name.
func (x *exporter) parent(key string) (*os.File, string, error) {
	dir, name := backend.Split(key)
	if dir == "" {
		dir = "."
	}
	f, err := paths.OpenNoFollow(x.root, dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	return f, name, err
}

// write makes the node e names, with its attributes (the times of a
// directory are set by the caller, after its children).
func (x *exporter) write(e backend.Entry) error {
	if d, _ := backend.Split(e.Key); d != "" {
		if err := x.root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if e.Info.Mode.IsDir() {
		// Its mode, attributes and times are set after its children:
		// a mode may keep them out.
		if err := x.at(e.Key, func(fd int, name string) error { return unix.Mkdirat(fd, name, 0o700) }); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if x.asRoot {
			return x.chown(e)
		}
		return nil
	}
	// A name already there (an earlier export) is replaced, in its
	// directory reached through no symlink.
	if err := x.clear(e.Key); err != nil {
		return err
	}
	if first, ok := x.links[e.Info.Link]; ok && e.Info.Link != "" {
		return x.root.Link(first, e.Key) // the node's attributes came with the first name
	}
	if err := x.make(e); err != nil {
		return err
	}
	if e.Info.Link != "" {
		x.links[e.Info.Link] = e.Key
	}
	if err := x.attrs(e); err != nil {
		return err
	}
	return x.times(e)
}

// at calls fn with the descriptor of key's directory, reached through no
// symlink, and key's name there.
func (x *exporter) at(key string, fn func(fd int, name string) error) error {
	f, name, err := x.parent(key)
	if err != nil {
		return err
	}
	defer f.Close()
	return fn(int(f.Fd()), name)
}

// chown gives e's node its owner, never through a symlink.
func (x *exporter) chown(e backend.Entry) error {
	return x.at(e.Key, func(fd int, name string) error {
		return unix.Fchownat(fd, name, int(e.Info.UID), int(e.Info.GID), unix.AT_SYMLINK_NOFOLLOW)
	})
}

// chmod sets the mode of the node at key, which is no symlink, through a
// descriptor of that very node (chmod(2) of its /proc/self/fd name):
// a symlink put at the name since it was made is never followed.
func (x *exporter) chmod(key string, mode fs.FileMode) error {
	p, done, err := procPath(x.root, key)
	if err != nil {
		return err
	}
	defer done()
	return unix.Chmod(p, backend.UnixMode(mode)&0o7777)
}

// clear removes what is at key, unless it is a directory, never
// following a symlink on the way.
func (x *exporter) clear(key string) error {
	f, name, err := x.parent(key)
	if err != nil {
		return err
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstatat(int(f.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		unix.Unlinkat(int(f.Fd()), name, 0)
	}
	return nil
}

// make makes the node e names, not a directory.
func (x *exporter) make(e backend.Entry) error {
	m := e.Info.Mode
	switch m.Type() {
	case 0, fs.ModeSymlink:
		v, err := x.load(e.Key)
		if err != nil {
			return err
		}
		if m.Type() == fs.ModeSymlink {
			return x.root.Symlink(string(v), e.Key)
		}
		// Made new (the name was cleared above), through no symlink: one
		// that another program put on the way, or at the name since, is
		// refused, never written through.
		f, err := paths.OpenNoFollow(x.root, e.Key, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = f.Write(v)
		return errors.Join(err, f.Close())
	}
	f, name, err := x.parent(e.Key)
	if err != nil {
		return err
	}
	err = unix.Mknodat(int(f.Fd()), name, backend.UnixMode(m)&^0o7777|0o600, int(e.Info.Rdev))
	f.Close()
	if errors.Is(err, unix.EPERM) && m&fs.ModeDevice != 0 {
		return fmt.Errorf("a %s (device %d:%d) can be made by root only; skipped",
			backend.TypeName(m), unix.Major(e.Info.Rdev), unix.Minor(e.Info.Rdev))
	}
	return err
}

// attrs sets the owner (as root), the mode with its special bits (after
// the owner: chown clears setuid) and the user.* attributes of e's node.
func (x *exporter) attrs(e backend.Entry) error {
	if x.asRoot {
		if err := x.chown(e); err != nil {
			return err
		}
	}
	if e.Info.Mode.Type() == fs.ModeSymlink {
		return nil // a symlink has no mode of its own, and no user.* attribute
	}
	if err := x.chmod(e.Key, backend.PermBits(e.Info.Mode)); err != nil {
		return err
	}
	xattrs := e.Info.XAttrs
	if t := e.Info.Mode.Type(); t != 0 && t != fs.ModeDir {
		// Linux keeps user.* attributes on files and directories only.
		// memfs's own (created, writer) are its bookkeeping and stay
		// behind quietly; one the user set is reported.
		var lost []string
		for name := range xattrs {
			if !strings.HasPrefix(name, meta.Prefix) || name == meta.Tags || name == meta.Importance {
				lost = append(lost, name)
			}
		}
		if len(lost) > 0 {
			slices.Sort(lost)
			return fmt.Errorf("a %s cannot hold user attributes; %s not exported", backend.TypeName(e.Info.Mode), strings.Join(lost, ", "))
		}
		xattrs = nil
	}
	if err := SetXAttrsAt(x.root, e.Key, xattrs); err != nil {
		return fmt.Errorf("%w (the target filesystem may not support user attributes)", err)
	}
	return nil
}

// times sets e's atime and mtime, never following a symlink.
func (x *exporter) times(e backend.Entry) error {
	f, name, err := x.parent(e.Key)
	if err != nil {
		return err
	}
	defer f.Close()
	at := e.Info.ATime
	if at.IsZero() {
		at = e.Info.MTime
	}
	ts := []unix.Timespec{unix.NsecToTimespec(at.UnixNano()), unix.NsecToTimespec(e.Info.MTime.UnixNano())}
	return unix.UtimesNanoAt(int(f.Fd()), name, ts, unix.AT_SYMLINK_NOFOLLOW)
}
