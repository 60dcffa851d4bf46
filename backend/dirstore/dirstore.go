package dirstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

// formatVersion is the layout this package writes and reads: one file per
// key, attributes as user.* xattrs, records under .memfs-sys.
const formatVersion = 1

// Store is a backend.Store kept in a plain directory. It is safe for
// concurrent use by multiple goroutines.
type Store struct {
	dir      string   // absolute path of the root, for messages and Root
	rfd      int      // the root, opened O_DIRECTORY: every key path starts here (path.go)
	root     *os.Root // system records only (sys.go)
	lock     *os.File // holds the flock until Close (shared when read-only; nil: no lock file to share)
	oldLock  *os.File // the layout before's lock file, locked too when there is one (own.go)
	lockFD   int      // lock's descriptor, for syncfs (strategy batchedSyncfs)
	strategy strategy // how Save and Delete make a batch durable
	notRoot  bool     // the process may not give files away (chown EPERM is expected)
	readOnly bool     // OpenReadOnly: every write fails with backend.ErrReadOnly

	skippedMu sync.Mutex // guards skipped
	skipped   []string   // what the last List could not take for a key

	closed  chan struct{}  // closed by Close: running Watches end
	watches sync.WaitGroup // running Watch goroutines; Close waits for them

	feedsMu sync.Mutex          // guards feeds
	feeds   map[*watch]struct{} // running Watches, for reportKept

	closeOnce sync.Once
	closeErr  error // result of the first Close
}

var (
	_ backend.Store    = (*Store)(nil)
	_ backend.SysStore = (*Store)(nil)
	_ backend.Walker   = (*Store)(nil)
)

// Open opens the store kept in dir, creating dir (0755) if it is missing, and
// takes its lock. If another Store holds the lock — in another process or in
// this one — Open fails with an error wrapping backend.ErrStoreInUse that names
// the holder's PID.
func Open(dir string) (*Store, error) {
	return open(dir, options{})
}

// options are the knobs only this package's tests and benchmarks turn.
type options struct {
	strategy strategy
	readOnly bool // OpenReadOnly
}

func open(dir string, o options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("dirstore: %w", err)
	}
	// Never take another kind of store's files for keys.
	if err := backend.CheckKind(abs, "dir", formatVersion); err != nil {
		return nil, fmt.Errorf("dirstore: %w", err)
	}
	if !o.readOnly {
		// The root itself cannot be made through the root.
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("dirstore: %w", err)
		}
	}
	// os.Root follows a symlink that stays inside the root, and ignores
	// O_NOFOLLOW: memfs's own files are checked by name first.
	if err := backend.RefuseSymlinks(abs, sysDir, lockName, JournalName, oldLockName, oldJournalName, backend.DirMarker); err != nil {
		return nil, fmt.Errorf("dirstore: %w", err)
	}
	lock, oldLock, err := lockOwn(abs, o.readOnly)
	if err != nil {
		return nil, fmt.Errorf("dirstore: %w", err)
	}
	closeLock := func() { closeFiles(lock, oldLock) }
	if !o.readOnly {
		err := backend.WriteMarker(abs, backend.DirMarker, "dir", formatVersion)
		if err == nil {
			err = setUpOwn(abs)
		}
		if err != nil {
			closeLock()
			return nil, fmt.Errorf("dirstore: %w", err)
		}
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		closeLock()
		return nil, fmt.Errorf("dirstore: %w", err)
	}
	rfd, err := openat(unix.AT_FDCWD, abs, dirFlags, 0)
	if err != nil {
		closeLock()
		root.Close()
		return nil, fmt.Errorf("dirstore: %w", &fs.PathError{Op: "open", Path: abs, Err: err})
	}
	s := &Store{
		dir:      abs,
		rfd:      rfd,
		root:     root,
		lock:     lock,
		oldLock:  oldLock,
		lockFD:   -1,
		strategy: o.strategy,
		notRoot:  os.Geteuid() != 0,
		readOnly: o.readOnly,
		closed:   make(chan struct{}),
		feeds:    make(map[*watch]struct{}),
	}
	if o.readOnly {
		return s, nil
	}
	s.lockFD = int(lock.Fd())
	s.sweepTemps()
	return s, nil
}

// sweepTemps removes the temp nodes a crashed writer left behind, in every
// directory (a temp directory only when empty). Only a holder of the lock
// writes temp nodes, and we hold it now, so every one found is garbage.
// Failures are harmless: List never shows temps.
func (s *Store) sweepTemps() {
	s.walk(context.Background(), true, func(dirfd int, key string, fi fs.FileInfo) bool {
		name := fi.Name()
		if !strings.HasPrefix(name, tempPrefix) {
			// memfs's own files at the root hold no temps, but for the
			// system records' directory.
			return fi.IsDir() && (!backend.IsReserved(key) || key == sysDir)
		}
		flags := 0
		if fi.IsDir() {
			flags = unix.AT_REMOVEDIR
		}
		unix.Unlinkat(dirfd, name, flags)
		return false
	}, nil)
}

// Skipped returns the paths the last List found but could not take for
// keys: names that are not valid UTF-8 or hold a control character (a
// directory of them is skipped whole), or too long. Their bytes are as found, so a caller that prints
// them should quote them.
func (s *Store) Skipped() []string {
	s.skippedMu.Lock()
	defer s.skippedMu.Unlock()
	return slices.Clone(s.skipped)
}

// Root returns the absolute path of the store's directory.
func (s *Store) Root() string { return s.dir }

// Close ends every running Watch (and waits for it), then releases the
// lock and the root. Calling it again does nothing and returns the first
// call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		s.watches.Wait()
		s.closeErr = errors.Join(closeFiles(s.lock, s.oldLock), s.root.Close(), unix.Close(s.rfd))
		if s.closeErr != nil {
			s.closeErr = fmt.Errorf("dirstore: close %s: %w", s.dir, s.closeErr)
		}
	})
	return s.closeErr
}

// walk visits every node under the root, depth first, directories before
// what they hold, without following a symlink: each directory is opened
// from its parent's descriptor with O_NOFOLLOW|O_DIRECTORY, so a directory
// replaced by a symlink after it was read is not entered. visit gets the
// descriptor of the node's directory, its key (not validated) and its
// lstat, and returns whether to enter it (directories only). A directory
// that vanished, or is no longer one, is passed over; one the process may
// not read is reported to unreadable (nil: passed over). With all, names
// that are not valid UTF-8 are visited too.
func (s *Store) walk(ctx context.Context, all bool, visit func(dirfd int, key string, fi fs.FileInfo) bool, unreadable func(key string)) error {
	fd, err := openDirAt(s.rfd, ".")
	if err != nil {
		if absentErr(err) {
			return nil
		}
		return err
	}
	return s.walkDir(ctx, fd, "", visit, unreadable)
}

// walkDir walks the directory fd, whose key is dir, and closes fd.
func (s *Store) walkDir(ctx context.Context, fd int, dir string, visit func(int, string, fs.FileInfo) bool, unreadable func(string)) error {
	if err := ctx.Err(); err != nil {
		unix.Close(fd)
		return err
	}
	// Readdir stats each name with fstatat on fd: one system call per
	// entry, and no path that could cross a symlink.
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	fis, err := f.Readdir(-1)
	if err != nil && !absentErr(err) {
		return fmt.Errorf("read directory %q: %w", dir, unwrapPath(err))
	}
	// In name order: a walk visits a tree the same way every time.
	slices.SortFunc(fis, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	for _, fi := range fis {
		key := backend.Join(dir, fi.Name())
		if !visit(fd, key, fi) || !fi.IsDir() {
			continue
		}
		cfd, err := openDirAt(fd, fi.Name())
		switch {
		case err == nil:
			if err := s.walkDir(ctx, cfd, key, visit, unreadable); err != nil {
				return err
			}
		case absentErr(err):
		case err == unix.EACCES && unreadable != nil:
			unreadable(key)
		case err == unix.EACCES:
		default:
			return fmt.Errorf("open directory %q: %w", key, err)
		}
	}
	return nil
}

// List walks the root and reports every node as itself (see the package
// doc): files, directories, symlinks (never followed), fifos, sockets and
// devices. Reserved names are passed over, memfs's own directories whole.
// A name that is not a valid key (invalid UTF-8, a control character, too
// long) cannot be reported: it is skipped, a directory whole, and listed
// by Skipped.
func (s *Store) List(ctx context.Context) ([]backend.Entry, error) {
	var out []backend.Entry
	err := s.list(ctx, func(e backend.Entry) error {
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Walk order is per directory, which is not key order: "a-b" sorts
	// before "a/b".
	slices.SortFunc(out, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Walk reports what List does, as it walks (backend.Walker): depth first,
// each directory's names in byte order, never the whole listing at once.
func (s *Store) Walk(ctx context.Context, fn func([]backend.Entry) error) error {
	return backend.WalkEach(func(add func(backend.Entry) error) error { return s.list(ctx, add) }, fn)
}

// list walks the root for List and Walk, passing each entry to add; an
// error from add stops the walk and is returned as it is.
func (s *Store) list(ctx context.Context, add func(backend.Entry) error) error {
	var skipped []string
	defer func() {
		s.skippedMu.Lock()
		s.skipped = skipped
		s.skippedMu.Unlock()
	}()
	var werr, addErr error
	err := s.walk(ctx, false, func(dirfd int, key string, fi fs.FileInfo) bool {
		if werr != nil || addErr != nil || backend.IsReserved(key) {
			return false
		}
		if !utf8.ValidString(fi.Name()) || backend.ValidateKey(key) != nil {
			// No key can name it (a git pull or unzip of another
			// system's names): reported, never a reason to fail.
			skipped = append(skipped, key)
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return false
		}
		info := infoOf(statOf(st))
		// Linux keeps user.* attributes on files and directories only
		// (the VFS refuses them on other nodes): one call for those.
		if t := info.Mode.Type(); t == 0 || t == fs.ModeDir {
			x, err := pathXAttrs(dirfd, fi.Name())
			if err != nil {
				if absentErr(err) {
					return false
				}
				werr = fmt.Errorf("%q: %w", key, err)
				return false
			}
			info.XAttrs = x
		}
		if addErr = add(backend.Entry{Key: key, Info: info}); addErr != nil {
			return false
		}
		return true
	}, func(key string) {
		// A directory the process may not read: listed, its content
		// is not, and the caller is told.
		skipped = append(skipped, key)
	})
	if addErr != nil {
		return addErr
	}
	if err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("dirstore: list %s: %w", s.dir, err)
	}
	return nil
}

// Load reads the nodes named by keys: a regular file's content, a
// symlink's target (read with readlinkat, never followed), and no value for
// the others; no fifo or device is ever opened. A key whose path is
// missing, or crosses a symlink or anything else that is not a directory,
// is not found.
func (s *Store) Load(ctx context.Context, keys ...string) ([]backend.Entry, error) {
	if err := checkKeys("load", keys); err != nil {
		return nil, err
	}
	dirs := s.newDirCache(false)
	defer dirs.close()
	out := make([]backend.Entry, len(keys))
	for i, k := range keys {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e, err := s.load(dirs, k, true)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// load reads key, its value only if value is set.
func (s *Store) load(dirs *dirCache, key string, value bool) (backend.Entry, error) {
	dir, name := backend.Split(key)
	dfd, _, err := dirs.get(dir)
	if err != nil {
		return backend.Entry{}, loadErr(key, err)
	}
	// An O_PATH descriptor pins the node without opening it: a fifo
	// would block, a device would act. Everything else is read through it.
	pfd, err := openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return backend.Entry{}, loadErr(key, err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return backend.Entry{}, loadErr(key, err)
	}
	e := backend.Entry{Key: key, Info: infoOf(&st)}
	switch e.Info.Mode.Type() {
	case 0:
		if !value {
			e.Info.XAttrs, err = pathXAttrs(pfd, "")
			break
		}
		err = readFile(pfd, &e)
	case fs.ModeSymlink:
		if value {
			e.Value, err = readlink(pfd, st.Size)
			e.Info.Size = int64(len(e.Value))
			if err == nil {
				keepATime(pfd, dfd, name, &st)
				// Which moves its ctime: the version is the one after.
				var now unix.Stat_t
				if unix.Fstat(pfd, &now) == nil {
					e.Info.CTime = time.Unix(now.Ctim.Sec, now.Ctim.Nsec)
				}
			}
		}
	case fs.ModeDir:
		e.Info.XAttrs, err = pathXAttrs(pfd, "")
	}
	if err != nil {
		return backend.Entry{}, loadErr(key, err)
	}
	return e, nil
}

// readFile reads the regular file pinned by the O_PATH descriptor pfd into
// e. It is reopened through /proc, which names that very inode: no other
// node can take its place between the check and the open. O_NOATIME keeps
// the atime that memfs stores, where the process may use it.
func readFile(pfd int, e *backend.Entry) error {
	p := "/proc/self/fd/" + strconv.Itoa(pfd)
	fd, err := openat(unix.AT_FDCWD, p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOATIME|unix.O_NONBLOCK, 0)
	if err == unix.EPERM {
		fd, err = openat(unix.AT_FDCWD, p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	}
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), e.Key)
	defer f.Close()
	// The size is a hint: another writer may change the file as we read.
	buf := bytes.NewBuffer(make([]byte, 0, e.Info.Size+bytes.MinRead))
	if _, err := buf.ReadFrom(f); err != nil {
		return unwrapPath(err)
	}
	e.Value = buf.Bytes()
	e.Info.Size = int64(buf.Len())
	e.Info.XAttrs, err = fileXAttrs(f)
	return err
}

// readlink reads the target of the symlink pinned by pfd.
func readlink(pfd int, size int64) ([]byte, error) {
	buf := make([]byte, max(size, 64)+1)
	for range 8 {
		n, err := unix.Readlinkat(pfd, "", buf)
		if err != nil {
			return nil, err
		}
		if n < len(buf) {
			return buf[:n:n], nil
		}
		buf = make([]byte, 2*len(buf))
	}
	return nil, errUnstable
}

// keepATime puts back the atime of the symlink pinned by pfd (name in
// dfd), which was before as the Load began, if reading the link moved it:
// readlink(2) touches a symlink's atime (under relatime, whenever the atime
// is not after the mtime and ctime, as a saved one often is), no flag
// prevents it, and memfs keeps atimes. Putting it back moves the ctime,
// which a directory store cannot keep anyway. Best effort: a failure
// leaves the new atime.
func keepATime(pfd, dfd int, name string, before *unix.Stat_t) {
	var st unix.Stat_t
	if unix.Fstat(pfd, &st) != nil || st.Atim == before.Atim {
		return
	}
	ts := []unix.Timespec{before.Atim, {Nsec: unix.UTIME_OMIT}}
	err := unix.UtimesNanoAt(pfd, "", ts, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
	if err == unix.EINVAL || err == unix.ENOENT {
		// Kernels before 5.8 take no AT_EMPTY_PATH here: by name, then,
		// if the name still holds the same node.
		if unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Ino == before.Ino && st.Dev == before.Dev {
			unix.UtimesNanoAt(dfd, name, ts, unix.AT_SYMLINK_NOFOLLOW)
		}
	}
}

// errUnstable reports a symlink that kept growing while it was read.
var errUnstable = errors.New("symlink kept changing while it was read")

func loadErr(key string, err error) error {
	var nd *notDirError
	switch {
	case errors.As(err, &nd):
		return &fs.PathError{Op: "load", Path: key, Err: fmt.Errorf("%w: %w", backend.ErrKeyNotFound, nd)}
	case absentErr(err):
		return backend.NotFound("load", key)
	}
	return &fs.PathError{Op: "load", Path: key, Err: unwrapPath(err)}
}

// unwrapPath drops the *fs.PathError or *os.LinkError that os adds, so the
// key, not a path under the root, is what our own PathError names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// errDirNotEmpty explains why a directory cannot be deleted or replaced.
var errDirNotEmpty = errors.New("directory is not empty: delete the entries under it first")

// Delete removes the nodes named by keys, whatever their type; a directory
// only when it is empty (Delete fails naming it otherwise; deeper keys of
// the same call are removed first, so a directory and all it holds go in
// one call). A key that is missing, or whose path crosses a symlink or a
// file, is not in the store and is ignored. Directories are never removed
// unasked: they are entries. The other keys are removed even when one
// fails. When Delete returns nil the removals are durable.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	return s.deleteKeys(ctx, keys, func(fd int, name, _ string) (bool, error) { return removeNode(fd, name) })
}

// deleteKeys removes keys, deepest first, each with remove (given its
// directory's descriptor, its name there and the key), which reports
// whether it removed the node; then it makes the removals durable.
func (s *Store) deleteKeys(ctx context.Context, keys []string, remove func(fd int, name, key string) (bool, error)) error {
	if err := s.writable("delete"); err != nil {
		return err
	}
	if err := checkKeys("delete", keys); err != nil {
		return err
	}
	order := slices.Clone(keys)
	slices.SortStableFunc(order, func(a, b string) int { return depth(b) - depth(a) })
	dirs := s.newDirCache(false)
	defer dirs.close()
	changed := map[string]bool{}
	var errs []error
	for _, k := range order {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		dir, name := backend.Split(k)
		fd, _, err := dirs.get(dir)
		if err != nil {
			if !absentErr(err) {
				errs = append(errs, &fs.PathError{Op: "delete", Path: k, Err: err})
			}
			continue
		}
		removed, err := remove(fd, name, k)
		switch {
		case err == nil:
			if removed {
				changed[dir] = true
			}
		case absentErr(err):
		default:
			errs = append(errs, &fs.PathError{Op: "delete", Path: k, Err: err})
		}
	}
	if err := s.syncDirs(dirs, sortedKeys(changed)); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("dirstore: %w", err)
	}
	return nil
}

// removeNode removes the node name in fd, whatever its type: a directory
// only when it is empty. It reports whether it removed one.
func removeNode(fd int, name string) (bool, error) {
	err := ignoringEINTR(func() error { return unix.Unlinkat(fd, name, 0) })
	if err == unix.EISDIR {
		err = ignoringEINTR(func() error { return unix.Unlinkat(fd, name, unix.AT_REMOVEDIR) })
		if err == unix.ENOTEMPTY || err == unix.EEXIST {
			err = fmt.Errorf("%w (%w)", errDirNotEmpty, err)
		}
	}
	return err == nil, err
}

func depth(d string) int {
	if d == "" {
		return 0
	}
	return strings.Count(d, "/") + 1
}

func sortedKeys(m map[string]bool) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// checkKeys validates every key before anything is touched; reserved keys
// are refused too, since they are never persisted.
func checkKeys(op string, keys []string) error {
	for _, k := range keys {
		if err := checkKey(op, k); err != nil {
			return err
		}
	}
	return nil
}

func checkKey(op, key string) error {
	if err := backend.CheckStoreKey(key); err != nil {
		return fmt.Errorf("dirstore: %s: %w", op, err)
	}
	return nil
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != syscall.EINTR {
			return err
		}
	}
}

// Stat returns the Info of key, whatever its node type, without reading
// its value. A missing key gives backend.ErrKeyNotFound.
func (s *Store) Stat(ctx context.Context, key string) (backend.Info, error) {
	if err := checkKey("stat", key); err != nil {
		return backend.Info{}, err
	}
	dirs := s.newDirCache(false)
	defer dirs.close()
	e, err := s.load(dirs, key, false)
	return e.Info, err
}
