package dirstore

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

// Every key path is resolved here, one segment at a time from the root's
// descriptor, with openat(O_NOFOLLOW|O_DIRECTORY): symlinks are data in
// this store (a key "skills/link" may point at /etc or at ../memory), so a
// symlink on a key's path is never followed, whether it leads out of the
// root or stays inside it. The kernel refuses such a segment with ENOTDIR
// (ELOOP on some paths), and so does a regular file in a directory's place.

// dirFlags opens a directory on a key's path. O_NOATIME is added where the
// process may use it (see openDirAt).
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// openDirAt opens the directory name in dirfd without following a symlink
// and, where permitted, without moving its atime when it is read: memfs keeps
// atimes, and List reads every directory. O_NOATIME needs the owner or
// CAP_FOWNER, so EPERM retries without it.
func openDirAt(dirfd int, name string) (int, error) {
	fd, err := openat(dirfd, name, dirFlags|unix.O_NOATIME, 0)
	if err == unix.EPERM {
		fd, err = openat(dirfd, name, dirFlags, 0)
	}
	return fd, err
}

func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// notDirError reports a segment of a key's path that is not a directory: a
// symlink (never followed), a file or another node.
type notDirError struct {
	at   string // the key of the segment
	what string // its node type, "" if unknown
	err  error  // the kernel's error (ENOTDIR or ELOOP)
}

func (e *notDirError) Error() string {
	if e.what == "" {
		return e.at + " is not a directory"
	}
	return fmt.Sprintf("%s is a %s, not a directory (memfs never follows a symlink on a key's path)", e.at, e.what)
}

// Is makes every such error match ENOTDIR, whichever the kernel gave.
func (e *notDirError) Is(target error) bool { return target == unix.ENOTDIR }
func (e *notDirError) Unwrap() error        { return e.err }

// notDir builds the error for segment name of dirfd, at key at, naming its
// type (one more system call, on the error path only).
func notDir(dirfd int, name, at string, err error) error {
	var st unix.Stat_t
	what := ""
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		what = backend.TypeName(backend.FileMode(st.Mode))
	}
	return &notDirError{at: at, what: what, err: err}
}

// isNotDir reports the errors openat gives for a segment that is not a
// directory it may enter.
func isNotDir(err error) bool { return err == unix.ENOTDIR || err == unix.ELOOP }

// dirCache opens the directories one operation uses, each once, from its
// parent's descriptor (a batch of 1,000 keys in 10 directories opens 10,
// plus their ancestors), and keeps them open until close. It is safe for
// concurrent use.
type dirCache struct {
	s      *Store
	create bool // make missing directories (0755, less the umask)

	mu sync.Mutex            // guards m
	m  map[string]*cachedDir // directory key -> its descriptor
}

type cachedDir struct {
	once sync.Once
	fd   int
	made bool // this directory or one of its ancestors was created
	err  error
}

func (s *Store) newDirCache(create bool) *dirCache {
	return &dirCache{s: s, create: create, m: map[string]*cachedDir{}}
}

// get opens the directory key dir ("" is the root). made reports that it,
// or a directory on its way, was created by this cache.
func (c *dirCache) get(dir string) (fd int, made bool, err error) {
	if dir == "" {
		return c.s.rfd, false, nil
	}
	c.mu.Lock()
	d := c.m[dir]
	if d == nil {
		d = &cachedDir{fd: -1}
		c.m[dir] = d
	}
	c.mu.Unlock()
	d.once.Do(func() { d.fd, d.made, d.err = c.open(dir) })
	return d.fd, d.made, d.err
}

func (c *dirCache) open(dir string) (int, bool, error) {
	parent, name := backend.Split(dir)
	pfd, made, err := c.get(parent)
	if err != nil {
		return -1, made, err
	}
	fd, err := openDirAt(pfd, name)
	for c.create && err == unix.ENOENT {
		err = unix.Mkdirat(pfd, name, 0o755)
		if err == nil {
			made = true
		}
		if err == nil || err == unix.EEXIST {
			fd, err = openDirAt(pfd, name)
		}
	}
	if isNotDir(err) {
		err = notDir(pfd, name, dir, err)
	}
	return fd, made, err
}

// cached returns the descriptor of dir if it was opened already.
func (c *dirCache) cached(dir string) (int, bool) {
	if dir == "" {
		return c.s.rfd, true
	}
	c.mu.Lock()
	d := c.m[dir]
	c.mu.Unlock()
	if d == nil {
		return -1, false
	}
	d.once.Do(func() { d.err = errNotOpened })
	return d.fd, d.err == nil
}

var errNotOpened = errors.New("directory not opened")

func (c *dirCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.m {
		d.once.Do(func() { d.err = errNotOpened })
		if d.err == nil {
			unix.Close(d.fd)
		}
	}
	c.m = nil
}

// absentErr reports a missing path, or a path with something other than a
// directory where a directory should be: such a key is not in the store
// (List never walks through a symlink or a file).
func absentErr(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP)
}

// statOf converts what os.File.Readdir reports.
func statOf(st *syscall.Stat_t) *unix.Stat_t {
	return &unix.Stat_t{
		Dev: st.Dev, Ino: st.Ino, Nlink: st.Nlink, Mode: st.Mode, Uid: st.Uid, Gid: st.Gid,
		Rdev: st.Rdev, Size: st.Size,
		Atim: unix.Timespec{Sec: st.Atim.Sec, Nsec: st.Atim.Nsec},
		Mtim: unix.Timespec{Sec: st.Mtim.Sec, Nsec: st.Mtim.Nsec},
		Ctim: unix.Timespec{Sec: st.Ctim.Sec, Nsec: st.Ctim.Nsec},
	}
}

// infoOf is the Info of a node as stat(2) describes it. Only regular files
// and symlinks have a size (a symlink's is its target's length); a node
// that is not a directory and has several names gets a Link derived from
// its device and inode numbers, the same for every name.
func infoOf(st *unix.Stat_t) backend.Info {
	mode := backend.FileMode(st.Mode)
	info := backend.Info{
		MTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec),
		ATime: time.Unix(st.Atim.Sec, st.Atim.Nsec),
		CTime: time.Unix(st.Ctim.Sec, st.Ctim.Nsec),
		Mode:  mode,
		UID:   st.Uid,
		GID:   st.Gid,
	}
	switch mode.Type() {
	case 0, fs.ModeSymlink:
		info.Size = st.Size
	case fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice:
		info.Rdev = st.Rdev
	}
	if st.Nlink > 1 && !mode.IsDir() {
		info.Link = linkName(st.Dev, st.Ino)
	}
	return info
}

// linkName names the hard-link group of inode ino on device dev.
func linkName(dev, ino uint64) string {
	b := make([]byte, 0, 32)
	b = append(b, 'i')
	b = strconv.AppendUint(b, dev, 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, ino, 10)
	return string(b)
}

// timespecs are the atime and mtime utimensat(2) gives a saved node: a zero
// MTime is the time of the save, a zero ATime is the MTime.
func timespecs(info backend.Info) []unix.Timespec {
	m := unix.Timespec{Nsec: unix.UTIME_NOW}
	if !info.MTime.IsZero() {
		m = unix.Timespec{Sec: info.MTime.Unix(), Nsec: int64(info.MTime.Nanosecond())}
	}
	a := m
	if !info.ATime.IsZero() {
		a = unix.Timespec{Sec: info.ATime.Unix(), Nsec: int64(info.ATime.Nanosecond())}
	}
	return []unix.Timespec{a, m}
}
