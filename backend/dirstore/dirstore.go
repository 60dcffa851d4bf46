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
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/lockfile"
)

// lockName is the hidden file in the root that carries the store's flock and
// the holder's PID. It is never removed: unlinking a lock file lets a waiter
// lock the orphaned inode while a newcomer locks a fresh one, and both win.
const lockName = ".memfs.lock"

// JournalName is where memfs keeps a dir store's crash journal: in the
// root, under a hidden name that List never shows, so that it moves with
// the store.
const JournalName = ".memfs-journal"

// formatVersion is the layout this package writes and reads: one file per
// key, attributes as user.* xattrs, records under .memfs-sys.
const formatVersion = 1

// Store is a backend.Store kept in a plain directory. It is safe for
// concurrent use by multiple goroutines.
type Store struct {
	dir      string   // absolute path of the root, for messages and Root
	root     *os.Root // every filesystem access goes through it
	lock     *os.File // holds the exclusive flock until Close
	lockFD   int      // lock's descriptor, for syncfs (strategy batchedSyncfs)
	strategy strategy // how Save and Delete make a batch durable
	notRoot  bool     // the process may not give files away (chown EPERM is expected)

	skippedMu sync.Mutex // guards skipped
	skipped   []string   // what the last List could not take for a key

	closeOnce sync.Once
	closeErr  error // result of the first Close
}

var _ backend.Store = (*Store)(nil)

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
	// The root itself cannot be made through the root.
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("dirstore: %w", err)
	}
	// os.Root follows a symlink that stays inside the root, and ignores
	// O_NOFOLLOW: memfs's own files are checked by name first.
	if err := backend.RefuseSymlinks(abs, lockName, sysDir, JournalName, backend.DirMarker); err != nil {
		return nil, fmt.Errorf("dirstore: %w", err)
	}
	lock, err := lockfile.Lock(filepath.Join(abs, lockName), abs)
	if err != nil {
		return nil, fmt.Errorf("dirstore: %w", err)
	}
	if err := backend.WriteMarker(abs, backend.DirMarker, "dir", formatVersion); err != nil {
		lock.Close()
		return nil, fmt.Errorf("dirstore: %w", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("dirstore: %w", err)
	}
	s := &Store{
		dir:      abs,
		root:     root,
		lock:     lock,
		lockFD:   int(lock.Fd()),
		strategy: o.strategy,
		notRoot:  os.Geteuid() != 0,
	}
	s.sweepTemps()
	return s, nil
}

// sweepTemps removes the temp files a crashed writer left behind. Only a
// holder of the lock writes temp files, and we hold it now, so every temp
// file found is garbage. Failures are harmless: List never shows temps.
func (s *Store) sweepTemps() {
	fs.WalkDir(s.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p != "." && p != sysDir && backend.IsReserved(p) {
			return fs.SkipDir // temps live only in key and record directories
		}
		if d.Type().IsRegular() && strings.HasPrefix(d.Name(), tempPrefix) {
			s.root.Remove(p)
		}
		return nil
	})
}

// Skipped returns the paths the last List found but could not take for
// keys: names that are not valid UTF-8 (a directory of them is skipped
// whole), or too long. Their bytes are as found, so a caller that prints
// them should quote them.
func (s *Store) Skipped() []string {
	s.skippedMu.Lock()
	defer s.skippedMu.Unlock()
	return slices.Clone(s.skipped)
}

// Root returns the absolute path of the store's directory.
func (s *Store) Root() string { return s.dir }

// Close releases the lock and the root. Calling it again does nothing and
// returns the first call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = errors.Join(s.lock.Close(), s.root.Close())
		if s.closeErr != nil {
			s.closeErr = fmt.Errorf("dirstore: close %s: %w", s.dir, s.closeErr)
		}
	})
	return s.closeErr
}

// List walks the root. Only regular files count: symlinks are not followed
// (fs.WalkDir never does), and fifos, devices and sockets are not keys. Hidden
// names are skipped whole, which also hides the lock file, temp files left by a
// crash, and whatever tools (.git, editors) keep in the directory. A name that
// is not a valid key (invalid UTF-8, for example) cannot be reported and is
// skipped.
func (s *Store) List(ctx context.Context) ([]backend.Entry, error) {
	var out []backend.Entry
	var skipped []string
	defer func() {
		s.skippedMu.Lock()
		s.skipped = skipped
		s.skippedMu.Unlock()
	}()
	dirs := dirCache{s: s}
	defer dirs.close()
	err := fs.WalkDir(s.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// A directory that vanished or became a file while we walked
			// holds no keys; the root itself vanishing gives an empty store.
			if absentErr(err) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if backend.IsReserved(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !utf8.ValidString(d.Name()) {
			// No key can name it (a git pull or unzip of another
			// system's names): reported, never a reason to fail.
			skipped = append(skipped, p)
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if backend.ValidateKey(p) != nil {
			skipped = append(skipped, p)
			return nil
		}
		// Files opened through an os.Root read their entries with an eager
		// lstatat, so Info costs no further system call.
		fi, err := d.Info()
		if err != nil {
			if absentErr(err) {
				return nil
			}
			return err
		}
		info := infoOf(fi)
		if info.XAttrs, err = dirs.xattrs(p); err != nil {
			if absentErr(err) {
				return nil
			}
			return err
		}
		out = append(out, backend.Entry{Key: p, Info: info})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dirstore: list %s: %w", s.dir, err)
	}
	// Walk order is per directory, which is not key order: "a-b" sorts
	// before "a/b".
	slices.SortFunc(out, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// maxLoadAttempts bounds how often Load retries a key whose file is replaced
// between its lstat and its open (a concurrent Save renames over it).
const maxLoadAttempts = 8

// errUnstable reports a key that kept changing under Load.
var errUnstable = errors.New("file kept changing while it was read")

// Load reads the files named by keys. A key whose path is missing, crosses a
// file or a symlink that leaves the root, or names anything but a regular file
// is not found.
func (s *Store) Load(ctx context.Context, keys ...string) ([]backend.Entry, error) {
	if err := checkKeys("load", keys); err != nil {
		return nil, err
	}
	out := make([]backend.Entry, len(keys))
	for i, k := range keys {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e, err := s.load(k)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func (s *Store) load(key string) (backend.Entry, error) {
	for range maxLoadAttempts {
		// Lstat first, so that a symlink is refused rather than followed
		// (os.Root follows links that stay inside it) and a fifo or device is
		// never opened.
		before, err := s.root.Lstat(key)
		if err != nil {
			return backend.Entry{}, s.loadErr(key, err)
		}
		if !before.Mode().IsRegular() {
			return backend.Entry{}, backend.NotFound("load", key)
		}
		// O_NONBLOCK: if a fifo replaces the file after the Lstat, open
		// must not hang; it has no effect on a regular file.
		f, err := s.root.OpenFile(key, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return backend.Entry{}, s.loadErr(key, err)
		}
		e, same, err := readOpened(f, key, before)
		f.Close()
		if err != nil {
			return backend.Entry{}, &fs.PathError{Op: "load", Path: key, Err: unwrapPath(err)}
		}
		if same {
			return e, nil
		}
	}
	return backend.Entry{}, &fs.PathError{Op: "load", Path: key, Err: errUnstable}
}

// readOpened reads f if it is still the regular file that before described;
// same reports whether it was.
func readOpened(f *os.File, key string, before fs.FileInfo) (e backend.Entry, same bool, err error) {
	fi, err := f.Stat()
	if err != nil {
		return e, false, err
	}
	if !fi.Mode().IsRegular() || !os.SameFile(before, fi) {
		return e, false, nil
	}
	// The size is a hint: another writer may change the file as we read.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(f); err != nil {
		return e, false, err
	}
	info := infoOf(fi)
	info.Size = int64(buf.Len())
	if info.XAttrs, err = fileXAttrs(f); err != nil {
		return e, false, err
	}
	return backend.Entry{Key: key, Info: info, Value: buf.Bytes()}, true, nil
}

func (s *Store) loadErr(key string, err error) error {
	if s.absent(key, err) {
		return backend.NotFound("load", key)
	}
	return &fs.PathError{Op: "load", Path: key, Err: unwrapPath(err)}
}

// absent reports whether err, from an operation on key, means that key is not
// in the store.
func (s *Store) absent(key string, err error) bool {
	return absentErr(err) || s.crossesLink(key)
}

// crossesLink reports whether some directory on key's path is not a
// directory. os.Root refuses a symlink that leads out of the root, and gives
// up on a loop, with errors that have no sentinel to test; asking for each
// parent by Lstat tells those cases apart without matching error text. Such
// a key is not in the store: List never walks through a symlink.
func (s *Store) crossesLink(key string) bool {
	for i := range len(key) {
		if key[i] != '/' {
			continue
		}
		fi, err := s.root.Lstat(key[:i])
		if err != nil {
			return absentErr(err)
		}
		if !fi.IsDir() {
			return true
		}
	}
	return false
}

// absentErr reports a missing path, or a path with a file where a directory
// should be (os.Root reports "a/b" with "a" a file as ENOTDIR).
func absentErr(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
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

// Delete removes the files named by keys, then every directory the removals
// left empty, up to but not including the root. A key that is missing, or
// names something other than a regular file, is not in the store and is
// ignored. When Delete returns nil the removals are durable.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	if err := checkKeys("delete", keys); err != nil {
		return err
	}
	emptied := map[string]bool{} // parents of removed files
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		fi, err := s.root.Lstat(k)
		if err == nil && !fi.Mode().IsRegular() {
			continue
		}
		if err == nil {
			err = s.root.Remove(k)
		}
		if err != nil {
			if s.absent(k, err) {
				continue
			}
			return &fs.PathError{Op: "delete", Path: k, Err: unwrapPath(err)}
		}
		dir, _ := backend.Split(k)
		emptied[dir] = true
	}
	if len(emptied) == 0 {
		return nil
	}
	dirty := s.prune(emptied)
	if err := s.syncDirs(dirty); err != nil {
		return fmt.Errorf("dirstore: delete: %w", err)
	}
	return nil
}

// prune removes the directories in emptied that are empty, and then their
// parents as they empty, deepest first, never the root. It returns the
// directories whose entries changed and must be synced. Pruning is tidying:
// directories are implied by keys, so a directory that cannot be removed
// (not empty, gone already, busy) simply stays.
func (s *Store) prune(emptied map[string]bool) []string {
	byDepth := map[int][]string{}
	maxDepth := 0
	for d := range emptied {
		n := depth(d)
		byDepth[n] = append(byDepth[n], d)
		maxDepth = max(maxDepth, n)
	}
	dirty := map[string]bool{}
	for n := maxDepth; n > 0; n-- {
		for _, d := range byDepth[n] {
			if !s.rmdir(d) {
				dirty[d] = true
				continue
			}
			delete(dirty, d)
			p, _ := backend.Split(d)
			if !emptied[p] {
				emptied[p] = true
				byDepth[n-1] = append(byDepth[n-1], p)
			}
			dirty[p] = true
		}
	}
	if emptied[""] {
		dirty[""] = true
	}
	return sortedKeys(dirty)
}

// rmdir removes the directory d if it is empty. Root.Remove would not do:
// it tries unlink(2) first, so if a concurrent Delete has pruned d already
// and a Save has put a file under that name, it would delete the file. So
// the parent is opened through the root and the one-segment name removed
// with AT_REMOVEDIR, which removes nothing but an empty directory; a single
// segment relative to a descriptor from the root cannot leave it.
func (s *Store) rmdir(d string) bool {
	p, name := backend.Split(d)
	f, err := s.root.Open(dirName(p))
	if err != nil {
		return false
	}
	defer f.Close()
	err = ignoringEINTR(func() error { return unix.Unlinkat(int(f.Fd()), name, unix.AT_REMOVEDIR) })
	return err == nil
}

func depth(d string) int {
	if d == "" {
		return 0
	}
	return strings.Count(d, "/") + 1
}

// dirName turns a directory key ("" for the root) into a name for os.Root.
func dirName(d string) string {
	if d == "" {
		return "."
	}
	return d
}

func sortedKeys(m map[string]bool) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// checkKeys validates every key before anything is touched; hidden keys are
// refused too, since they are never persisted.
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

func infoOf(fi fs.FileInfo) backend.Info {
	info := backend.Info{Size: fi.Size(), MTime: fi.ModTime(), Mode: fi.Mode().Perm()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		info.UID, info.GID = st.Uid, st.Gid
	}
	return info
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != syscall.EINTR {
			return err
		}
	}
}

// Stat returns the Info of key without reading its value. A missing key,
// or one that is not a regular file, gives backend.ErrKeyNotFound.
func (s *Store) Stat(ctx context.Context, key string) (backend.Info, error) {
	if err := checkKey("stat", key); err != nil {
		return backend.Info{}, err
	}
	fi, err := s.root.Lstat(key)
	if err != nil {
		return backend.Info{}, s.loadErr(key, err)
	}
	if !fi.Mode().IsRegular() {
		return backend.Info{}, backend.NotFound("stat", key)
	}
	return infoOf(fi), nil
}
