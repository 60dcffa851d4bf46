package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/session"
)

// Import and export carry every node type between a directory tree and a
// store. Neither ever follows a symlink: import reads each name with
// lstat(2) and readlink(2), export makes symlinks and sets attributes with
// the *at calls and AT_SYMLINK_NOFOLLOW. What cannot be carried is reported
// one line each, and the command fails at the end, after carrying the rest.

// tally counts what a command carried, by kind, and what it could not.
type tally struct {
	w      io.Writer // where the one-line reports go
	counts map[string]int
	failed int
}

func newTally(w io.Writer) *tally { return &tally{w: w, counts: map[string]int{}} }

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

func (t *tally) add(kind string) { t.counts[kind]++ }

// fail reports what could not be carried; the command fails at the end.
func (t *tally) fail(format string, args ...any) {
	t.failed++
	fmt.Fprintf(t.w, format+"\n", args...)
}

// note reports what was left out on purpose.
func (t *tally) note(format string, args ...any) { fmt.Fprintf(t.w, format+"\n", args...) }

// summary is "12 files, 3 directories, 1 hard link": files always, the
// other kinds when there are some.
func (t *tally) summary() string {
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

// err is the command's error when something could not be carried.
func (t *tally) err(cmd string) error {
	if t.failed == 0 {
		return nil
	}
	if t.failed == 1 {
		return fmt.Errorf("%s: 1 name could not be carried (see above)", cmd)
	}
	return fmt.Errorf("%s: %d names could not be carried (listed above)", cmd, t.failed)
}

// kindOf names the kind of node m is, as a summary counts it.
func kindOf(m fs.FileMode) string {
	if m.Type() == 0 {
		return "file"
	}
	return backend.TypeName(m)
}

// importNode is one name found under the imported directory.
type importNode struct {
	path string // on disk
	key  string
	info backend.Info
	ino  [2]uint64 // (dev, ino) of a non-directory
}

// scanImport walks src without following symlinks and returns what can be
// imported under prefix, directories before what they hold, reporting
// what cannot.
func scanImport(src, prefix string, t *tally) ([]importNode, error) {
	// A dir store's own files (journal, lock, marker) are no keys: left
	// out silently. Elsewhere a reserved name is a name that is lost.
	_, err := os.Lstat(filepath.Join(src, backend.DirMarker))
	dirStore := err == nil
	var nodes []importNode
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == src {
				return err
			}
			t.fail("import: %s: %v; skipped", showName(p), err)
			return nil
		}
		if p == src {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		rel = filepath.ToSlash(rel)
		key := backend.Join(prefix, rel)
		skip := func() error {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case dirStore && backend.IsReserved(rel):
			return skip()
		case backend.IsReserved(key):
			t.fail("import: %s: the name %s is reserved for memfs's own files; skipped", showName(p), showName(key))
			return skip()
		case session.IsTransient(key, session.DefaultTransient):
			t.note("import: %s: a transient editor file (see mount --transient); skipped", showName(p))
			return skip()
		}
		if err := backend.ValidateKey(key); err != nil {
			t.fail("import: %s: %v; skipped", showName(p), err)
			return skip()
		}
		fi, err := os.Lstat(p)
		if err != nil {
			t.fail("import: %s: %v; skipped", showName(p), err)
			return skip()
		}
		st := fi.Sys().(*syscall.Stat_t)
		n := importNode{path: p, key: key, info: backend.Info{
			Mode:  backend.FileMode(st.Mode),
			MTime: time.Unix(st.Mtim.Unix()),
			ATime: time.Unix(st.Atim.Unix()),
			UID:   st.Uid, GID: st.Gid,
		}}
		if n.info.Mode&fs.ModeDevice != 0 {
			n.info.Rdev = uint64(st.Rdev)
		}
		if !fi.IsDir() && st.Nlink > 1 {
			n.ino = [2]uint64{uint64(st.Dev), uint64(st.Ino)}
		}
		if n.info.Mode.Type() != fs.ModeSymlink { // Linux keeps no user.* attribute on a symlink
			if n.info.XAttrs, err = fileXAttrs(p); err == nil {
				err = backend.ValidateXAttrs(n.info.XAttrs)
			}
			if err != nil {
				t.fail("import: %s: %v; skipped", showName(p), err)
				return skip()
			}
		}
		nodes = append(nodes, n)
		return nil
	})
	return nodes, err
}

// importTree puts nodes into the session: names of one inode become one
// node (a hard-link group), and directories get their attributes last,
// children first, so that filling them does not move their times.
func importTree(ctx context.Context, c *session.Context, nodes []importNode, t *tally, bar *progress) {
	groups := map[[2]uint64][]int{}
	for i, n := range nodes {
		if n.ino != [2]uint64{} {
			groups[n.ino] = append(groups[n.ino], i)
		}
	}
	var b [8]byte
	rand.Read(b[:])
	run := hex.EncodeToString(b[:]) // link groups of this import never meet older ones
	for ino, idx := range groups {
		if len(idx) < 2 {
			continue // its other names are outside the tree
		}
		for _, i := range idx {
			nodes[i].info.Link = fmt.Sprintf("import-%s-%d-%d", run, ino[0], ino[1])
		}
	}
	linked := map[string]bool{}
	var dirs []backend.Entry
	for _, n := range nodes {
		e := backend.Entry{Key: n.key, Info: n.info}
		kind := kindOf(n.info.Mode)
		switch n.info.Mode.Type() {
		case fs.ModeDir:
			dirs = append(dirs, e)
			bar.add(1)
			continue
		case fs.ModeSymlink:
			target, err := os.Readlink(n.path)
			if err != nil {
				t.fail("import: %s: %v; skipped", showName(n.path), err)
				continue
			}
			e.Value = []byte(target)
		case 0:
			v, err := readRegular(n.path)
			if err != nil {
				t.fail("import: %s: %v; skipped", showName(n.path), err)
				continue
			}
			e.Value = v
		}
		if l := e.Info.Link; l != "" {
			if linked[l] {
				kind = "hard link"
			}
			linked[l] = true
		}
		if err := c.Put(e); err != nil {
			t.fail("import: %s: %v; skipped", showName(n.path), explain(err))
			continue
		}
		t.add(kind)
		bar.add(1)
	}
	// Every directory once, parents first (a directory's mode may let
	// nothing in; the session does not check), then again children
	// first for the times.
	for pass := range 2 {
		for i := range dirs {
			e := dirs[i]
			if pass == 1 {
				e = dirs[len(dirs)-1-i]
			}
			if err := c.Put(e); err != nil {
				if pass == 0 {
					t.fail("import: %s: %v; skipped", showName(e.Key), explain(err))
				}
				continue
			}
			if pass == 0 {
				t.add("directory")
			}
		}
	}
}

// readRegular reads the regular file p, refusing anything that was put
// in its place after the walk saw it.
func readRegular(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("no longer a regular file")
	}
	return io.ReadAll(f)
}

// exportEntries returns every directory and every other node under
// prefix, directories first, parents before children.
func exportEntries(c *session.Context, prefix string) []backend.Entry {
	var dirs []backend.Entry
	var walk func(key string)
	walk = func(key string) {
		ents, err := c.ReadDir(key)
		if err != nil {
			return
		}
		for _, d := range ents {
			if !d.IsDir {
				continue
			}
			k := backend.Join(key, d.Name)
			if strings.HasPrefix(k, prefix) && !c.Local(k) {
				st, err := c.Stat(k)
				if err != nil {
					continue
				}
				info := backend.Info{Mode: st.Mode, MTime: st.MTime, ATime: st.ATime, UID: st.UID, GID: st.GID}
				if names, err := c.XAttrs().List(k); err == nil {
					for _, name := range names {
						if v, err := c.XAttrs().Get(k, name); err == nil {
							if info.XAttrs == nil {
								info.XAttrs = map[string][]byte{}
							}
							info.XAttrs[name] = v
						}
					}
				}
				dirs = append(dirs, backend.Entry{Key: k, Info: info})
			}
			walk(k)
		}
	}
	walk("")
	out := dirs
	for _, e := range c.Entries(prefix) {
		if !c.Local(e.Key) {
			out = append(out, e)
		}
	}
	return out
}

// exporter writes nodes under one directory, through an os.Root and the
// *at calls on the parent's descriptor.
type exporter struct {
	root   *os.Root
	dst    string
	t      *tally
	links  map[string]string // hard-link group -> the first name written
	asRoot bool
	// load gives the value of a file or symlink when the entries come
	// from elsewhere than the session (a live mount); nil: the session.
	load func(key string) ([]byte, error)
}

// value is the value of key: from load, or resolved in the session.
func (x *exporter) value(ctx context.Context, c *session.Context, key string) ([]byte, error) {
	if x.load != nil {
		return x.load(key)
	}
	if err := c.Resolve(ctx, key); err != nil {
		return nil, err
	}
	v, _ := c.Get(key)
	return v, nil
}

// parent opens the directory holding key and returns it with key's base
// name.
func (x *exporter) parent(key string) (*os.File, string, error) {
	dir, name := backend.Split(key)
	if dir == "" {
		dir = "."
	}
	f, err := x.root.Open(dir)
	return f, name, err
}

// write makes the node e names, with its attributes (the times of a
// directory are set by the caller, after its children).
func (x *exporter) write(ctx context.Context, c *session.Context, e backend.Entry) error {
	m := e.Info.Mode
	if d, _ := backend.Split(e.Key); d != "" {
		if err := x.root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if m.IsDir() {
		// Its mode, attributes and times are set after its children:
		// a mode may keep them out.
		if err := x.root.Mkdir(e.Key, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if x.asRoot {
			return x.root.Lchown(e.Key, int(e.Info.UID), int(e.Info.GID))
		}
		return nil
	}
	// A name already there (an earlier export) is replaced.
	if fi, err := x.root.Lstat(e.Key); err == nil && !fi.IsDir() {
		x.root.Remove(e.Key)
	}
	if first, ok := x.links[e.Info.Link]; ok && e.Info.Link != "" {
		return x.root.Link(first, e.Key) // the node's attributes came with the first name
	}
	switch m.Type() {
	case 0, fs.ModeSymlink:
		v, err := x.value(ctx, c, e.Key)
		if err != nil {
			return err
		}
		if m.Type() == fs.ModeSymlink {
			if err := x.root.Symlink(string(v), e.Key); err != nil {
				return err
			}
		} else if err := x.root.WriteFile(e.Key, v, 0o600); err != nil {
			return err
		}
	default:
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
		if err != nil {
			return err
		}
	}
	if e.Info.Link != "" {
		x.links[e.Info.Link] = e.Key
	}
	if err := x.attrs(e); err != nil {
		return err
	}
	return x.times(e)
}

// attrs sets the owner (as root), the mode with its special bits (after
// the owner: chown clears setuid) and the user.* attributes of e's node.
func (x *exporter) attrs(e backend.Entry) error {
	if x.asRoot {
		if err := x.root.Lchown(e.Key, int(e.Info.UID), int(e.Info.GID)); err != nil {
			return err
		}
	}
	if e.Info.Mode.Type() == fs.ModeSymlink {
		return nil // a symlink has no mode of its own, and no user.* attribute
	}
	if err := x.root.Chmod(e.Key, backend.PermBits(e.Info.Mode)); err != nil {
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
	if err := setFileXAttrs(filepath.Join(x.dst, filepath.FromSlash(e.Key)), xattrs); err != nil {
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

// exportTree writes entries (directories first, parents first) under
// x.dst, then the directories' times, children first.
func exportTree(ctx context.Context, c *session.Context, x *exporter, entries []backend.Entry, bar *progress) {
	var dirs []backend.Entry
	for _, e := range entries {
		kind := kindOf(e.Info.Mode)
		if _, ok := x.links[e.Info.Link]; ok && e.Info.Link != "" {
			kind = "hard link"
		}
		if err := x.write(ctx, c, e); err != nil {
			x.t.fail("export: %s: %v", showName(e.Key), err)
			continue
		}
		if e.Info.Mode.IsDir() {
			dirs = append(dirs, e)
		}
		x.t.add(kind)
		bar.add(1)
	}
	for _, e := range slices.Backward(dirs) {
		if err := x.attrs(e); err != nil {
			x.t.fail("export: %s: %v", showName(e.Key), err)
		} else if err := x.times(e); err != nil {
			x.t.fail("export: %s: times: %v", showName(e.Key), err)
		}
	}
}
