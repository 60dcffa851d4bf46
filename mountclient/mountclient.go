// Package mountclient reaches a running memfs mount from another process:
// it finds the mount (Open, Find, Enclosing), checks that it is live and
// served by memfs, and reads and writes through it (Client). The memfs
// commands go through a mount this way when one serves the store they
// name, so that the mount's session stays the one writer.
//
// A mount is live when the mount table has a FUSE mount of a memfs store
// at that very point (its source is memfs:STORE), its .memfs/status, read
// through the directory whose device is that mount's, names the same
// store and a process of the mount's user that is alive and holds
// /dev/fuse open. A copy of a mount (cp -a keeps .memfs/status), the
// mountpoint after an unmount, or another FUSE file system serving a
// forged status is no live mount: nothing is done through it, and its
// status's PID is never trusted (ErrNotLive).
//
// Every operation of a Client opens the mount again and checks that the
// mountpoint is still that very mount (Root: its device and its mount's
// id): a mount gone since it was found leaves a plain directory, where a
// write would land on disk, and a mount made there since is another. The
// status is read once, by Open: the same mount is served by the same
// process.
//
// # Concurrency
//
// A Client is an immutable value; its methods may be called at once.
package mountclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/lockfile"
	"github.com/memfs/memfs/internal/mountinfo"
	"github.com/memfs/memfs/internal/paths"
	"github.com/memfs/memfs/repo"
	"github.com/memfs/memfs/status"
	"github.com/memfs/memfs/tree"
)

// ErrNotLive is the error of a directory that is no live memfs mount.
var ErrNotLive = errors.New("not a live memfs mount")

// Access says whose mounts Open takes.
type Access int

const (
	// Own takes the caller's own mounts only: another user's mount is not
	// the caller's memory.
	Own Access = iota
	// Shared also takes another user's mount that its owner offered to
	// other users (mounted with allow_other).
	Shared
	// Any takes any user's mount (root stopping a user's mount); its
	// process is still held to the mount's user.
	Any
)

// Client is a live memfs mount.
type Client struct {
	Dir   string // the mountpoint, as the caller named it
	Store string // the store the mount serves, as its status names it
	PID   int    // the memfs process serving it
	dev   uint64 // the mount's device
	mntID mountID
}

// mountID is a mount's id (statx): the unique one, never reused, where
// the kernel has it (Linux 6.8); else the one of the mount table.
type mountID struct {
	id     uint64
	unique bool
}

// mountIDOf is the id of the mount r, an opened directory, is on.
func mountIDOf(r *os.Root) (mountID, error) {
	d, err := r.Open(".")
	if err != nil {
		return mountID{}, err
	}
	defer d.Close()
	fd := int(d.Fd())
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID_UNIQUE, &st); err != nil {
		return mountID{}, err
	}
	if st.Mask&unix.STATX_MNT_ID_UNIQUE != 0 {
		return mountID{st.Mnt_id, true}, nil
	}
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &st); err != nil {
		return mountID{}, err
	}
	return mountID{st.Mnt_id, false}, nil
}

// Open returns the live memfs mount at mnt, which access allows.
func Open(mnt string, access Access) (*Client, error) {
	real, err := filepath.EvalSymlinks(mnt)
	if err != nil {
		return nil, notLive(mnt, err)
	}
	m, found := mountinfo.At(real)
	uid := uint32(os.Getuid())
	switch {
	case !found:
		return nil, notLive(mnt, errors.New("no mount there"))
	case !isMemfs(m):
		return nil, notLive(mnt, fmt.Errorf("a %s mount of %s", m.FSType, m.Source))
	case m.UID != uid && access == Own,
		m.UID != uid && access == Shared && !m.AllowOther:
		return nil, notLive(mnt, fmt.Errorf("a mount of user %d, not yours (%d), and not shared with allow_other", m.UID, uid))
	}
	r, err := os.OpenRoot(real)
	if err != nil {
		return nil, notLive(mnt, err)
	}
	defer r.Close()
	id, err := mountIDOf(r)
	if err != nil {
		return nil, notLive(mnt, err)
	}
	st, err := rootStatus(r, mnt, m.Dev)
	if err != nil {
		return nil, notLive(mnt, err)
	}
	// One memfs wrote both, from one name (memfs.Options.Name).
	if src := strings.TrimPrefix(m.Source, "memfs:"); src != st.Store {
		return nil, notLive(mnt, fmt.Errorf("it is mounted as %s, and its status names %s", m.Source, st.Store))
	}
	if err := servingProcess(st.PID, m.UID); err != nil {
		return nil, notLive(mnt, err)
	}
	return &Client{Dir: mnt, Store: st.Store, PID: st.PID, dev: m.Dev, mntID: id}, nil
}

// Find returns the caller's live mount serving the local store spec: its
// lock file names the holder's PID, and the mount's status must name the
// same. parse reads the store a mount's source names.
func Find[S Spec](spec S, parse func(string) (S, error)) (*Client, bool) {
	pid := lockfile.HolderPID(spec.LockPath())
	if pid <= 0 {
		return nil, false
	}
	for _, m := range Mounts() {
		if m.UID != uint32(os.Getuid()) || !isMemfs(m) {
			continue
		}
		if src, err := parse(strings.TrimPrefix(m.Source, "memfs:")); err != nil || !Same(spec, src) {
			continue
		}
		if c, err := Open(m.Point, Own); err == nil && c.PID == pid {
			return c, true
		}
	}
	return nil, false
}

// Enclosing returns the live memfs mount of the caller's that dir is in:
// the innermost mount holding dir must be one.
func Enclosing(dir string) (*Client, bool) {
	// The mount table holds real paths; dir may be reached through a
	// symlink.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	table, _ := mountinfo.Read()
	var best mountinfo.Mount
	for _, m := range table {
		if paths.Within(dir, m.Point) && len(m.Point) >= len(best.Point) {
			best = m
		}
	}
	if !isMemfs(best) {
		return nil, false
	}
	c, err := Open(best.Point, Own)
	return c, err == nil
}

// Mounts lists the FUSE mounts whose source names a memfs store, whole
// mounts before bind mounts of a part of one; live or not.
func Mounts() []mountinfo.Mount {
	table, _ := mountinfo.Read()
	return MountsIn(table)
}

// MountsIn is Mounts of a given table.
func MountsIn(table []mountinfo.Mount) []mountinfo.Mount {
	var whole, parts []mountinfo.Mount
	for _, m := range table {
		if !isMemfs(m) {
			continue
		}
		if m.Whole {
			whole = append(whole, m)
		} else {
			parts = append(parts, m)
		}
	}
	return append(whole, parts...)
}

// Mountpoints are the mountpoints of the mounts that the user uid made:
// another user's mount is not where the caller's agent keeps its memory.
func Mountpoints(mounts []mountinfo.Mount, uid uint32) []string {
	var points []string
	for _, m := range mounts {
		if m.UID == uid {
			points = append(points, m.Point)
		}
	}
	return points
}

func isMemfs(m mountinfo.Mount) bool {
	return strings.HasPrefix(m.FSType, "fuse") && strings.HasPrefix(m.Source, "memfs:")
}

// notLive is the error of a directory that is no live mount.
func notLive(mnt string, why error) error {
	return fmt.Errorf("%s is %w (%v): nothing was done through it", mnt, ErrNotLive, why)
}

// afterRootOpen, when set, runs between Root's open and its check (a
// test's seam).
var afterRootOpen func()

// statusReads counts the reads of rootStatus (a test's seam).
var statusReads atomic.Int64

// rootStatus reads .memfs/status through r, the root of the mount at mnt,
// whose device must be dev: a directory that is not that mount (a copy,
// or the mountpoint after an unmount) has another.
func rootStatus(r *os.Root, mnt string, dev uint64) (status.Status, error) {
	statusReads.Add(1)
	fi, err := r.Stat(".")
	if err != nil {
		return status.Status{}, err
	}
	if d := fi.Sys().(*syscall.Stat_t).Dev; d != dev {
		return status.Status{}, fmt.Errorf("device %d:%d, not the mount's %d:%d", unix.Major(d), unix.Minor(d), unix.Major(dev), unix.Minor(dev))
	}
	b, err := r.ReadFile(filepath.Join(".memfs", "status"))
	if err != nil {
		return status.Status{}, err
	}
	st, err := status.Parse(b)
	if err != nil || st.Store == "" || st.PID <= 0 {
		return status.Status{}, fmt.Errorf("%s/.memfs/status names no store and process", mnt)
	}
	return st, nil
}

// servingProcess checks that pid is a live process of user uid (the
// mount's) holding /dev/fuse open, as the process serving a memfs mount
// does; the descriptors of another user's process are not checked when
// the caller may not list them (nor may it signal that process).
func servingProcess(pid int, uid uint32) error {
	dir := "/proc/" + strconv.Itoa(pid)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("its process %d is gone", pid)
	}
	if owner := fi.Sys().(*syscall.Stat_t).Uid; owner != uid {
		return fmt.Errorf("its process %d is user %d's, not the mount's (%d)", pid, owner, uid)
	}
	fds, err := os.ReadDir(dir + "/fd")
	if errors.Is(err, fs.ErrPermission) && uid != uint32(os.Getuid()) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	for _, fd := range fds {
		if l, err := os.Readlink(dir + "/fd/" + fd.Name()); err == nil && l == "/dev/fuse" {
			return nil
		}
	}
	return fmt.Errorf("its process %d serves no FUSE mount", pid)
}

// Root opens the mount for plain file operations that stay inside it.
// The root is checked again: it must still be the mount Open checked (its
// device the mount's, its mount the same one), or the writes would land
// on plain disk (a mount gone since it was found leaves the mountpoint
// directory) or in another mount made there since. Close it when done.
func (c *Client) Root() (*os.Root, error) {
	r, err := os.OpenRoot(c.Dir)
	if err != nil {
		return nil, fmt.Errorf("the mount at %s: %w", c.Dir, err)
	}
	if afterRootOpen != nil {
		afterRootOpen()
	}
	if err := c.sameMount(r); err != nil {
		r.Close()
		return nil, notLive(c.Dir, err)
	}
	return r, nil
}

// sameMount checks that r, the root of c.Dir opened now, is the mount
// Open checked: its device and its mount id, both read through r (the
// path may name another mount by now). Without unique mount ids (Linux
// before 6.8), ids and anonymous devices are reused lowest-first, so the
// status is read again and must name the same process.
func (c *Client) sameMount(r *os.Root) error {
	fi, err := r.Stat(".")
	if err != nil {
		return err
	}
	if d := fi.Sys().(*syscall.Stat_t).Dev; d != c.dev {
		return fmt.Errorf("device %d:%d, not the mount's %d:%d", unix.Major(d), unix.Minor(d), unix.Major(c.dev), unix.Minor(c.dev))
	}
	id, err := mountIDOf(r)
	if err != nil {
		return err
	}
	if id != c.mntID {
		return fmt.Errorf("mount %d now, not %d", id.id, c.mntID.id)
	}
	if !id.unique {
		st, err := rootStatus(r, c.Dir, c.dev)
		if err != nil {
			return err
		}
		if st.PID != c.PID {
			return fmt.Errorf("served by process %d now, not %d", st.PID, c.PID)
		}
	}
	return nil
}

// Signal sends sig to the process serving the mount. The process is
// pinned first (a pidfd), then the mount is checked again (Open, of any
// user's) to be served by it: a process that exited since c was found,
// and a PID reused since, are never signaled.
func (c *Client) Signal(sig syscall.Signal) error {
	fd, err := unix.PidfdOpen(c.PID, 0)
	if err != nil {
		return fmt.Errorf("process %d: %w", c.PID, err)
	}
	defer unix.Close(fd)
	now, err := Open(c.Dir, Any)
	if err != nil {
		return err
	}
	if now.PID != c.PID || now.dev != c.dev {
		return notLive(c.Dir, fmt.Errorf("served by process %d now, not %d", now.PID, c.PID))
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0)
}

// Status reads the mount's .memfs/status, as the mount shows it to this
// process.
func (c *Client) Status() (status.Status, error) {
	r, err := c.Root()
	if err != nil {
		return status.Status{}, err
	}
	defer r.Close()
	return rootStatus(r, c.Dir, c.dev)
}

// Ask returns the mount's answer to the query name (percent-encoded
// words, as a file name under .memfs/DIR/ would be) in .memfs/DIR/
// ("search" or "context"), through its query file: a query of any
// length, which no path could hold, answered for this process's
// credential as a file name's would be.
func (c *Client) Ask(dir, name string) ([]byte, error) {
	r, err := c.Root()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.OpenFile(path.Join(".memfs", dir, status.QueryFile), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Write([]byte(name)); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.NewSectionReader(f, 0, math.MaxInt64))
	var errno syscall.Errno
	if errors.As(err, &errno) {
		// The read says only the errno; the file of the name, when a
		// name can hold the query, says why and what to do.
		why := "its log says why"
		if len(name) <= 255 {
			if t, err := r.ReadFile(path.Join(".memfs", dir, name)); err == nil && len(t) > 0 {
				why = strings.TrimSpace(string(t))
			}
		}
		return nil, fmt.Errorf("the mount cannot answer the query (%w):\n%s", errno, why)
	}
	return b, err
}

// WriteAnswer writes the mount's answer to the search query name (Ask) on
// w, as memfs search does through a mount, and says on warn when the mount
// searches by keyword only (its status: it has no embedder) and, with
// ownEmbedder (the caller named one), that the mount searches with its
// own.
func (c *Client) WriteAnswer(w, warn io.Writer, name string, ownEmbedder bool) error {
	b, err := c.Ask("search", name)
	if err != nil {
		return fmt.Errorf("search through %s: %w", c.Dir, err)
	}
	if ownEmbedder {
		fmt.Fprintf(warn, "memfs: --embedder is not used: the mount at %s searches with its own (see its .memfs/status)\n", c.Dir)
	}
	if st, err := c.Status(); err == nil && st.Search == status.KeywordOnly {
		fmt.Fprintf(warn, "memfs: keyword search only: the mount at %s has no embedder\n", c.Dir)
	}
	_, err = w.Write(b)
	return err
}

// WriteContext writes the mount's answer to the context pack query name
// (Ask: a pack, or its manifest) on w, as memfs context does through a
// mount.
func (c *Client) WriteContext(w io.Writer, name string) error {
	b, err := c.Ask("context", name)
	if err != nil {
		return fmt.Errorf("context through %s: %w", c.Dir, err)
	}
	_, err = w.Write(b)
	return err
}

// NoValueError is the error of a key whose node has no value to read: a
// directory, a fifo, a socket, a device.
type NoValueError struct {
	Key  string
	Mode fs.FileMode
}

func (e *NoValueError) Error() string { return e.Key + ": no value (a " + e.Mode.Type().String() + ")" }

// Value reads key through r (a Client's Root): a file's content, a
// symlink's target (as the store holds it); a *NoValueError for another
// node.
func Value(r *os.Root, key string) ([]byte, error) {
	fi, err := r.Lstat(key)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode().Type() == fs.ModeSymlink:
		target, err := r.Readlink(key)
		return []byte(target), err
	case fi.Mode().IsRegular():
		return paths.ReadNoFollow(r, key) // a link swapped in since is refused
	}
	return nil, &NoValueError{Key: key, Mode: fi.Mode()}
}

// Cat reads the value of key through the mount (Value).
func (c *Client) Cat(key string) ([]byte, error) {
	r, err := c.Root()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return Value(r, key)
}

// Put writes key through the mount, and fsyncs it: the value is in the
// store when Put returns, as without a mount. A new file gets mode; a file
// that was there keeps its own (a 0600 file is never widened by a write).
// A name that is not a regular file is replaced, as in the store; a
// directory is an error.
func (c *Client) Put(key string, value []byte, mode fs.FileMode) error {
	return c.put(key, value, mode, false)
}

// PutMode is Put that gives mode to a file that was there too: the mode
// its caller asked for explicitly (memfs put --mode, a revert to a
// version's mode).
func (c *Client) PutMode(key string, value []byte, mode fs.FileMode) error {
	return c.put(key, value, mode, true)
}

// PutFile is memfs put through the mount: PutMode when setMode (the
// caller asked for mode), else Put, which keeps an old file's mode (see
// memfs.PutFile, the same on a store). A repository's record that breaks
// its schema is refused, nothing written (repo.CheckKey): the mount would
// keep it and fail its close.
func (c *Client) PutFile(key string, value []byte, mode fs.FileMode, setMode bool) error {
	if err := repo.CheckKey(key, value); err != nil {
		return err // the mount would keep it and fail the close: say why, write nothing
	}
	return c.put(key, value, mode, setMode)
}

func (c *Client) put(key string, value []byte, mode fs.FileMode, always bool) error {
	r, err := c.Root()
	if err != nil {
		return err
	}
	defer r.Close()
	if dir, _ := filepath.Split(key); dir != "" {
		if err := paths.MkdirAllNoFollow(r, filepath.Clean(dir), 0o755); err != nil {
			return err
		}
	}
	fi, err := r.Lstat(key)
	created := err != nil
	if err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", key)
		}
		if err := r.Remove(key); err != nil {
			return err
		}
		created = true
	}
	// Written in place, so that the file keeps its attributes (tags,
	// owner), which a rename of a new file over it would drop; when the
	// write fails (a value past the mount's --max-file-size), the old
	// value is written back.
	// Neither open follows a symlink swapped in since the Lstat.
	old, oldErr := paths.ReadNoFollow(r, key)
	flags := os.O_WRONLY | os.O_TRUNC
	if created {
		// O_EXCL: a file made since the Lstat is another's, and keeps its mode.
		flags |= os.O_CREATE | os.O_EXCL
	}
	f, err := paths.OpenNoFollow(r, key, flags, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(value)
	if err != nil && oldErr == nil {
		if _, rerr := f.WriteAt(old, 0); rerr == nil {
			rerr = f.Truncate(int64(len(old)))
			err = errors.Join(err, rerr)
		} else {
			err = errors.Join(err, fmt.Errorf("the old value could not be written back: %w", rerr))
		}
	}
	if err == nil && (created || always) {
		err = f.Chmod(mode) // the umask took bits off a new file
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s through %s: %w", key, c.Dir, err)
	}
	return nil
}

// Remove removes keys through the mount (with recursive, a directory and
// every key under it), then fsyncs: the removal is in the store when
// Remove returns, as without a mount. A missing key is an error that
// satisfies errors.Is(err, fs.ErrNotExist), unless missing (when not nil)
// returns nil for it, or its own error; a directory without recursive is a *fs.PathError with EISDIR.
func (c *Client) Remove(keys []string, recursive bool, missing func(key string) error) error {
	r, err := c.Root()
	if err != nil {
		return err
	}
	defer r.Close()
	for _, k := range keys {
		k = strings.TrimSuffix(k, "/")
		fi, err := r.Lstat(k)
		if errors.Is(err, fs.ErrNotExist) && missing != nil {
			if err := missing(k); err != nil {
				return err
			}
			continue
		}
		switch {
		case err != nil:
		case fi.IsDir() && !recursive:
			err = &fs.PathError{Op: "remove", Path: k, Err: syscall.EISDIR}
		case fi.IsDir():
			err = r.RemoveAll(k)
		default:
			err = r.Remove(k)
		}
		if err != nil {
			return err
		}
	}
	d, err := r.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil { // an fsync flushes the mount's whole session
		return fmt.Errorf("flush through %s: %w", c.Dir, err)
	}
	return nil
}

// Entries lists the nodes under prefix in the mount, parents before
// children, each with its attributes as a store's export gives them; the
// names of one inode share a Link (tree.NodeInfo). What cannot be read
// is passed to skipped (with its key, or its path) and left out.
func (c *Client) Entries(prefix string, skipped func(name string, err error)) ([]backend.Entry, error) {
	r, err := c.Root() // live now: the walk is not of a plain directory
	if err != nil {
		return nil, err
	}
	r.Close()
	mnt := c.Dir
	var out []backend.Entry
	err = filepath.WalkDir(mnt, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == mnt {
				return err
			}
			skipped(p, err)
			return nil
		}
		if p == mnt {
			return nil
		}
		rel, _ := filepath.Rel(mnt, p)
		key := filepath.ToSlash(rel)
		skip := func() error {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if backend.IsReserved(key) {
			return skip() // .memfs: the mount's own files
		}
		if !strings.HasPrefix(key, prefix) {
			if d.IsDir() && strings.HasPrefix(prefix, key+"/") {
				return nil // the prefix is further down
			}
			return skip()
		}
		info, st, err := tree.NodeInfo(p)
		if err != nil {
			skipped(key, err)
			return skip()
		}
		info.Size = st.Size
		if !info.Mode.IsDir() && st.Nlink > 1 {
			info.Link = fmt.Sprintf("%d:%d", st.Dev, st.Ino)
		}
		out = append(out, backend.Entry{Key: key, Info: info})
		return nil
	})
	return out, err
}

// Nodes lists the nodes under prefix as Entries does, each symlink with
// its target as its value (as a store lists them). It fails on the first
// node it cannot read, but for one removed while it walks.
func (c *Client) Nodes(prefix string) ([]backend.Entry, error) {
	var failed error
	entries, err := c.Entries(prefix, func(name string, err error) {
		if failed == nil && !errors.Is(err, fs.ErrNotExist) {
			failed = fmt.Errorf("%s: %w", name, err)
		}
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return nil, err
	}
	for i, e := range entries {
		if e.Info.Mode.Type() == fs.ModeSymlink {
			target, err := os.Readlink(filepath.Join(c.Dir, filepath.FromSlash(e.Key)))
			if err != nil {
				return nil, err
			}
			entries[i].Value = []byte(target)
		}
	}
	return entries, nil
}

// Export writes the nodes under prefix of the mount under dst, as
// memfs.FS.Export does from a store (tree.ExportEntries over Entries);
// what cannot be read is counted as a failure in tally and left out.
func (c *Client) Export(ctx context.Context, dst, prefix string, tally *tree.Tally, opts tree.ExportOptions) error {
	r, err := c.Root()
	if err != nil {
		return err
	}
	defer r.Close()
	entries, err := c.Entries(prefix, func(name string, err error) {
		tally.Fail("export: %s: %v; skipped", name, err)
	})
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	load := func(key string) ([]byte, error) { return Value(r, key) }
	return tree.ExportEntries(ctx, dst, entries, load, tally, opts)
}
