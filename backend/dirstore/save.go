package dirstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

// strategy is how Save makes a batch durable.
type strategy int

const (
	// batched writes and fsyncs every temp file concurrently, renames them
	// all, then fsyncs each touched directory once, concurrently.
	batched strategy = iota
	// naive runs fsync(file), rename, fsync(dir) one file after another.
	// It exists for the benchmark that justifies batched.
	naive
	// batchedSyncfs replaces both concurrent fsync rounds by one syncfs(2)
	// each. Measured for comparison only (see the package doc).
	batchedSyncfs
)

// tempPrefix starts the name of every temp node; the name is reserved
// (backend.IsReserved), so one left by a crash is never mistaken for a key.
const tempPrefix = ".memfs-tmp-"

// workers bounds the goroutines, and so the open files and the threads
// blocked in fsync, of one batch. fsync mostly waits for the device, so the
// bound is well above the number of CPUs: with 2 CPUs, a batch of 1000
// files on ext4 still got faster with more goroutines than 8, by less and
// less past 32.
const workers = 32

// maxTempAttempts bounds the retries for creating one temp node under a
// random name that exists already, or for a key that keeps changing.
const maxTempAttempts = 8

// Save writes each entry by its node type (see the package doc), each to
// a temp node in its key's directory renamed over the key, so a reader sees
// the old node or the new one, never a mix; a directory is made in place
// and gets its attributes after the entries saved into it. Every entry is
// checked before anything is written. A batch is not atomic as a whole: if
// Save fails, some keys may have their new value and others their old one,
// and no temp node is left behind. The ctime cannot be set: Save writes
// the one each node (but a directory) got into the caller's entry.
func (s *Store) Save(ctx context.Context, entries ...backend.Entry) error {
	if err := s.writable("save"); err != nil {
		return err
	}
	if err := checkEntries(entries); err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	entries = lastPerKey(entries)
	if s.strategy == naive {
		// One entry at a time, but a hard-link group together: its
		// names are linked to one node within a batch.
		groups := map[string][]backend.Entry{}
		for _, e := range entries {
			if e.Info.Link != "" {
				groups[e.Info.Link] = append(groups[e.Info.Link], e)
			}
		}
		for i := range entries {
			one := entries[i : i+1]
			if l := entries[i].Info.Link; l != "" {
				if groups[l] == nil {
					continue
				}
				one, groups[l] = groups[l], nil
			}
			if err := s.saveBatch(ctx, one); err != nil {
				return err
			}
		}
		return nil
	}
	return s.saveBatch(ctx, entries)
}

// saveOne saves one entry (a system record: its key is not checked).
func (s *Store) saveOne(e *backend.Entry) error {
	return s.saveBatch(context.Background(), []backend.Entry{*e})
}

// checkEntries is backend.ValidateEntries, plus what Linux cannot keep:
// user.* attributes on a node that is neither a regular file nor a
// directory (the VFS refuses them with EPERM on every filesystem, and the
// kernel never hands a mount such an attribute either).
func checkEntries(entries []backend.Entry) error {
	if err := backend.ValidateEntries(entries); err != nil {
		return fmt.Errorf("dirstore: save: %w", err)
	}
	for i := range entries {
		e := &entries[i]
		if t := e.Info.Mode.Type(); len(e.Info.XAttrs) > 0 && t != 0 && t != fs.ModeDir {
			return saveErr(e.Key, fmt.Errorf("%w: Linux keeps user.* attributes on regular files and directories only, not on a %s",
				backend.ErrInvalidXAttr, backend.TypeName(e.Info.Mode)))
		}
	}
	return nil
}

// batch is one Save in progress.
type batch struct {
	s     *Store
	dirs  *dirCache
	items []item
	sync  bool // fsync each temp file and directory (not batchedSyncfs)
}

// item is one entry of a batch.
type item struct {
	e         *backend.Entry
	dir, name string // the key split
	dirfd     int    // its directory, from the batch's dirCache
	tmp       string // temp node in dirfd not yet renamed over name, or ""
	made      bool   // directories were created on its way
	changed   bool   // the directory's entries changed
	ino       uint64 // the inode of the node made (not a directory), for noteCTimes
	followers []int  // hard links to this entry's node (a group's first entry)
	follower  bool   // a hard link to another entry's node
}

func (s *Store) newBatch(entries []backend.Entry) *batch {
	b := &batch{s: s, dirs: s.newDirCache(true), items: make([]item, len(entries)), sync: s.strategy != batchedSyncfs}
	leaders := map[string]int{}
	for i := range entries {
		it := &b.items[i]
		it.e = &entries[i]
		it.dir, it.name = backend.Split(it.e.Key)
		it.dirfd = -1
		if l := it.e.Info.Link; l != "" {
			if first, ok := leaders[l]; ok {
				b.items[first].followers = append(b.items[first].followers, i)
				it.follower = true
			} else {
				leaders[l] = i
			}
		}
	}
	return b
}

func (b *batch) close() { b.dirs.close() }

// saveBatch waits twice where a file-by-file save waits twice per file:
// all data is durable before any rename, and all renames are durable
// before Save returns.
func (s *Store) saveBatch(ctx context.Context, entries []backend.Entry) error {
	b := s.newBatch(entries)
	defer b.close()
	var dirs, nodes, tasks []int
	for i := range b.items {
		switch {
		case entries[i].Info.Mode.IsDir():
			dirs = append(dirs, i)
		case b.items[i].follower:
			nodes = append(nodes, i)
		default:
			nodes = append(nodes, i)
			tasks = append(tasks, i)
		}
	}
	// Directories first, shallowest first: what is saved into them needs
	// them, and a node of another type in the way is replaced.
	for _, level := range b.byDepth(dirs, false) {
		if err := parallel(len(level), func(j int) error { return b.ensureDir(ctx, level[j]) }); err != nil {
			return err
		}
	}
	err := parallel(len(tasks), func(j int) error { return b.writeTemp(ctx, tasks[j]) })
	if err == nil && !b.sync {
		err = s.syncfs()
	}
	if err != nil {
		b.removeTemps()
		return err
	}
	// A rename over an existing file also frees the old file, which makes
	// it cost about as much as writing the new one (measured on ext4), a
	// sizeable part of a batch when done one after another; concurrently
	// it costs less. The keys are distinct now, so the order does not
	// matter.
	if err := parallel(len(nodes), func(j int) error { return b.place(nodes[j]) }); err != nil {
		b.removeTemps()
		return err
	}
	// Directories' attributes last, deepest first: saving into a
	// directory moves its mtime, and a mode without write permission would
	// stop a process that is not root from saving into it.
	var mu sync.Mutex
	synced := map[string]bool{}
	for _, level := range b.byDepth(dirs, true) {
		err := parallel(len(level), func(j int) error {
			if err := b.applyDir(level[j]); err != nil {
				return err
			}
			mu.Lock()
			synced[b.items[level[j]].e.Key] = b.sync
			mu.Unlock()
			return nil
		})
		if err != nil {
			return err
		}
	}
	b.noteCTimes()
	toSync := map[string]bool{}
	for i := range b.items {
		it := &b.items[i]
		if !it.changed && !it.made {
			continue
		}
		d := it.dir
		toSync[d] = true
		// A new directory is only durable once its own parent is synced.
		for it.made && d != "" {
			d, _ = backend.Split(d)
			toSync[d] = true
		}
	}
	for d := range synced {
		delete(toSync, d)
	}
	return s.syncDirs(b.dirs, sortedKeys(toSync))
}

// noteCTimes writes the change time each node the batch made has now
// into its entry (and a hard-link group's name, which is the node's): the kernel sets a node's ctime (the save, and every
// rename, moves it), so the store cannot keep the one given, and the
// caller's backend.VersionOf of what it saved must be the version the
// store holds. A name another program has taken since keeps the ctime
// given.
func (b *batch) noteCTimes() {
	for i := range b.items {
		it := &b.items[i]
		if it.ino == 0 || it.tmp != "" || it.dirfd < 0 {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(it.dirfd, it.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Ino == it.ino {
			it.e.Info.CTime = time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
			if it.e.Info.Link != "" {
				// The store names a group by its node (List gives this
				// name): the caller learns it, so that another program's
				// later change through one of the names is known as a
				// change of that node.
				it.e.Info.Link = linkName(st.Dev, st.Ino)
			}
		}
	}
}

// byDepth groups the items idx by the depth of their key, shallowest
// first, or deepest first with reverse.
func (b *batch) byDepth(idx []int, reverse bool) [][]int {
	m := map[int][]int{}
	for _, i := range idx {
		n := depth(b.items[i].e.Key)
		m[n] = append(m[n], i)
	}
	ds := slices.Sorted(maps.Keys(m))
	if reverse {
		slices.Reverse(ds)
	}
	out := make([][]int, len(ds))
	for j, d := range ds {
		out[j] = m[d]
	}
	return out
}

// lastPerKey drops every entry that a later entry for the same key
// supersedes: Save leaves the last one in place, as saving them in order
// would.
func lastPerKey(entries []backend.Entry) []backend.Entry {
	last := make(map[string]int, len(entries))
	for i := range entries {
		last[entries[i].Key] = i
	}
	if len(last) == len(entries) {
		return entries
	}
	out := make([]backend.Entry, 0, len(last))
	for i := range entries {
		if last[entries[i].Key] == i {
			out = append(out, entries[i])
		}
	}
	return out
}

// ensureDir makes the directory of item i if it is missing (makeDir), or
// keeps the one in place: a directory cannot be renamed over another one
// that holds entries, and saving its times waits for applyDir. A node of another type in the
// way is never replaced: the save fails with fs.ErrExist.
func (b *batch) ensureDir(ctx context.Context, i int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	it := &b.items[i]
	fd, made, err := b.dirs.get(it.dir)
	if err != nil {
		return saveErr(it.e.Key, err)
	}
	it.dirfd, it.made = fd, made
	for range maxTempAttempts {
		var st unix.Stat_t
		err := unix.Fstatat(fd, it.name, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case err == unix.ENOENT:
			err = b.makeDir(fd, it.name, it.e.Info)
			if err == unix.EEXIST {
				continue
			}
			if err != nil {
				return saveErr(it.e.Key, err)
			}
			it.changed = true
			return nil
		case err != nil:
			return saveErr(it.e.Key, err)
		case st.Mode&unix.S_IFMT == unix.S_IFDIR:
			return nil
		}
		// Another node holds the name: a file another program put there,
		// or one the caller deletes in the same flush (after this call).
		// A directory entry never destroys it.
		return saveErr(it.e.Key, fmt.Errorf("%w: a %s holds the directory's name (delete it first)",
			fs.ErrExist, backend.TypeName(backend.FileMode(st.Mode))))
	}
	return saveErr(it.e.Key, errChanging)
}

// makeDir makes directory name in dirfd with info's owner, mode and
// attributes before it has the name: made under a temp name (0700 while
// it has no owner yet), given them, and renamed into place, never over
// another node (EEXIST). A follower of the store (memfs's external-change
// watcher) never sees it with a mode of the save's own, which it would
// take for another writer's chmod (issue 26). A process that is not root
// keeps the owner's permission bits until applyDir, to save into it: a
// mode that only adds to the entry's, which the rule for a directory with
// unflushed changes (the most restrictive mode of both) leaves as it is.
func (b *batch) makeDir(dirfd int, name string, info backend.Info) error {
	tmp, err := tempName(func(n string) error { return unix.Mkdirat(dirfd, n, 0o700) })
	if err != nil {
		return err
	}
	err = b.giveDir(dirfd, tmp, info)
	if err == nil {
		err = unix.Renameat2(dirfd, tmp, dirfd, name, unix.RENAME_NOREPLACE)
	}
	if err != nil {
		unix.Unlinkat(dirfd, tmp, unix.AT_REMOVEDIR)
	}
	return err
}

// giveDir gives the new directory tmp in dirfd info's owner, mode and
// attributes (makeDir).
func (b *batch) giveDir(dirfd int, tmp string, info backend.Info) error {
	fd, err := openDirAt(dirfd, tmp)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := b.s.chown(func() error { return unix.Fchown(fd, int(info.UID), int(info.GID)) }); err != nil {
		return err
	}
	bits := chmodBits(info.Mode)
	if b.s.notRoot {
		bits |= 0o700
	}
	if err := ignoringEINTR(func() error { return unix.Fchmod(fd, bits) }); err != nil {
		return err
	}
	return replaceXAttrs(fd, info.XAttrs)
}

// errChanging reports a key another program kept changing under a save.
var errChanging = errors.New("kept changing under the save")

// applyDir gives the directory of item i its owner, mode, attributes
// (replacing the whole set) and times, then makes them durable.
func (b *batch) applyDir(i int) error {
	it := &b.items[i]
	e := it.e
	fd, _, err := b.dirs.get(e.Key)
	if err != nil {
		return saveErr(e.Key, err)
	}
	if err := b.s.chown(func() error { return unix.Fchown(fd, int(e.Info.UID), int(e.Info.GID)) }); err != nil {
		return saveErr(e.Key, err)
	}
	if err := ignoringEINTR(func() error { return unix.Fchmod(fd, chmodBits(e.Info.Mode)) }); err != nil {
		return saveErr(e.Key, err)
	}
	if err := replaceXAttrs(fd, e.Info.XAttrs); err != nil {
		return saveErr(e.Key, err)
	}
	ts := timespecs(e.Info)
	if err := unix.UtimesNanoAt(it.dirfd, it.name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return saveErr(e.Key, err)
	}
	if b.sync {
		if err := fsync(fd); err != nil {
			return saveErr(e.Key, err)
		}
	}
	return nil
}

// chmodBits is what chmod(2) takes for m: permissions, setuid, setgid,
// sticky.
func chmodBits(m fs.FileMode) uint32 {
	return backend.UnixMode(backend.PermBits(m)) & 0o7777
}

// chown runs fn, a chown of some kind. A process that is not root may only
// give a node to a group it belongs to; the contract asks for the owner "as
// far as the process may set" it, so EPERM is not an error then, and the
// node keeps the writer's owner.
func (s *Store) chown(fn func() error) error {
	err := ignoringEINTR(fn)
	if err == unix.EPERM && s.notRoot {
		return nil
	}
	return err
}

// tempName creates a temp node with create, under a fresh random name in
// the same directory, and returns the name.
func tempName(create func(name string) error) (string, error) {
	for attempt := 1; ; attempt++ {
		name := tempPrefix + strconv.FormatUint(rand.Uint64(), 36)
		err := create(name)
		if err == nil {
			return name, nil
		}
		if err != unix.EEXIST || attempt == maxTempAttempts {
			return "", err
		}
	}
}

// writeTemp writes item i's node to a temp name in its key's directory,
// creating the directory if needed, with every attribute, and makes the
// data durable; then it links the group's other names to it, each under a
// temp name of its own, so that all of them are one node once renamed. On
// error, what it made is left to removeTemps.
func (b *batch) writeTemp(ctx context.Context, i int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	it := &b.items[i]
	fd, made, err := b.dirs.get(it.dir)
	if err != nil {
		return saveErr(it.e.Key, err)
	}
	it.dirfd, it.made = fd, made
	it.tmp, err = b.s.makeNode(fd, it.e, b.sync)
	if err != nil {
		return saveErr(it.e.Key, err)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fd, it.tmp, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return saveErr(it.e.Key, err)
	}
	it.ino = st.Ino
	for _, f := range it.followers {
		ft := &b.items[f]
		ft.ino = it.ino
		ffd, fmade, err := b.dirs.get(ft.dir)
		if err != nil {
			return saveErr(ft.e.Key, err)
		}
		ft.dirfd, ft.made = ffd, fmade
		ft.tmp, err = tempName(func(n string) error { return unix.Linkat(fd, it.tmp, ffd, n, 0) })
		if err != nil {
			return saveErr(ft.e.Key, err)
		}
	}
	return nil
}

// makeNode creates e's node under a temp name in dirfd, with its owner,
// mode, attributes and times, and returns the name. A regular file's data
// is fsynced when sync is set; a symlink, fifo, socket or device has no
// data to sync (it cannot even be opened for fsync without following it or
// opening the device): the directory's fsync after the rename makes it
// durable, as journalling filesystems (ext4, xfs, btrfs) commit the inode
// with the entry. On error nothing is left behind.
func (s *Store) makeNode(dirfd int, e *backend.Entry, sync bool) (string, error) {
	var name string
	var err error
	typ := e.Info.Mode.Type()
	switch typ {
	case 0:
		var f *os.File
		name, err = tempName(func(n string) error {
			fd, err := openat(dirfd, n, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
			if err == nil {
				f = os.NewFile(uintptr(fd), n)
			}
			return err
		})
		if err != nil {
			return "", err
		}
		err = s.fill(f, dirfd, name, e, sync)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			unix.Unlinkat(dirfd, name, 0)
			return "", unwrapPath(err)
		}
		return name, nil
	case fs.ModeSymlink:
		name, err = tempName(func(n string) error { return unix.Symlinkat(string(e.Value), dirfd, n) })
	default:
		mode := backend.UnixMode(e.Info.Mode)&unix.S_IFMT | 0o600
		name, err = tempName(func(n string) error { return unix.Mknodat(dirfd, n, mode, int(e.Info.Rdev)) })
	}
	if err != nil {
		return "", err
	}
	err = s.chown(func() error {
		return unix.Fchownat(dirfd, name, int(e.Info.UID), int(e.Info.GID), unix.AT_SYMLINK_NOFOLLOW)
	})
	// A symlink has no mode of its own. The node is pinned with O_PATH
	// and never followed: fchmodat would follow a symlink another
	// program put in the temp node's place.
	if err == nil && typ != fs.ModeSymlink {
		err = chmodNoFollow(dirfd, name, chmodBits(e.Info.Mode), backend.UnixMode(e.Info.Mode)&unix.S_IFMT)
	}
	if err == nil {
		err = unix.UtimesNanoAt(dirfd, name, timespecs(e.Info), unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		unix.Unlinkat(dirfd, name, 0)
		return "", err
	}
	return name, nil
}

// fill writes e's value and metadata to f, the temp file called name in
// dirfd.
func (s *Store) fill(f *os.File, dirfd int, name string, e *backend.Entry, sync bool) error {
	if _, err := f.Write(e.Value); err != nil {
		return err
	}
	if err := setXAttrs(f, e.Info.XAttrs); err != nil {
		return err
	}
	// Owner before mode: chown clears set-id bits.
	if err := s.chown(func() error { return unix.Fchown(int(f.Fd()), int(e.Info.UID), int(e.Info.GID)) }); err != nil {
		return err
	}
	if err := ignoringEINTR(func() error { return unix.Fchmod(int(f.Fd()), chmodBits(e.Info.Mode)) }); err != nil {
		return err
	}
	if err := unix.UtimesNanoAt(dirfd, name, timespecs(e.Info), unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if sync {
		return fsync(int(f.Fd()))
	}
	return nil
}

// place renames item i's temp node over its key. A directory in the way is
// replaced only when empty (see replaceDir).
func (b *batch) place(i int) error {
	it := &b.items[i]
	err := ignoringEINTR(func() error { return unix.Renameat(it.dirfd, it.tmp, it.dirfd, it.name) })
	if err == unix.EISDIR || err == unix.ENOTEMPTY || err == unix.EEXIST {
		err = replaceDir(it.dirfd, it.tmp, it.name)
	}
	if err != nil {
		return saveErr(it.e.Key, err)
	}
	it.tmp = ""
	it.changed = true
	return nil
}

// replaceDir puts the node tmp in place of the directory name, both in
// dirfd, if that directory is empty: the two are swapped atomically
// (RENAME_EXCHANGE), and the directory, under tmp now, removed; one that
// holds entries is swapped back, and the save fails.
func replaceDir(dirfd int, tmp, name string) error {
	if err := unix.Renameat2(dirfd, tmp, dirfd, name, unix.RENAME_EXCHANGE); err != nil {
		return err
	}
	err := ignoringEINTR(func() error { return unix.Unlinkat(dirfd, tmp, unix.AT_REMOVEDIR) })
	if err == nil {
		return nil
	}
	if xerr := unix.Renameat2(dirfd, tmp, dirfd, name, unix.RENAME_EXCHANGE); xerr != nil {
		return fmt.Errorf("put back the directory it replaced: %w", xerr)
	}
	if err == unix.ENOTEMPTY || err == unix.EEXIST {
		return fmt.Errorf("a %w (%w)", errDirNotEmpty, err)
	}
	return err
}

func (b *batch) removeTemps() {
	for i := range b.items {
		it := &b.items[i]
		if it.tmp != "" {
			unix.Unlinkat(it.dirfd, it.tmp, 0)
			it.tmp = ""
		}
	}
}

// syncDirs fsyncs the directories, concurrently, through the descriptors
// the operation opened (all of them are in dirs): each directory's entries
// become durable whatever the others' state. A directory removed meanwhile
// is synced harmlessly.
func (s *Store) syncDirs(dirs *dirCache, list []string) error {
	if len(list) == 0 {
		return nil
	}
	if s.strategy == batchedSyncfs {
		return s.syncfs()
	}
	return parallel(len(list), func(i int) error {
		fd, ok := dirs.cached(list[i])
		if !ok {
			return nil // never opened: nothing of ours changed in it
		}
		if err := fsync(fd); err != nil {
			return &fs.PathError{Op: "fsync", Path: list[i], Err: err}
		}
		return nil
	})
}

// fsyncs counts the fsync calls of saves, for the tests that bound them.
var fsyncs atomic.Int64

// fsync flushes the file fd to disk.
func fsync(fd int) error {
	fsyncs.Add(1)
	return ignoringEINTR(func() error { return unix.Fsync(fd) })
}

// syncfs flushes the whole filesystem that holds the root.
func (s *Store) syncfs() error {
	err := ignoringEINTR(func() error { return unix.Syncfs(s.lockFD) })
	if err != nil {
		return &fs.PathError{Op: "syncfs", Path: s.dir, Err: err}
	}
	return nil
}

func saveErr(key string, err error) error {
	return &fs.PathError{Op: "save", Path: key, Err: unwrapPath(err)}
}

// parallel calls fn(i) for every i in [0, n) on up to workers goroutines.
// After a failure no new call starts; it returns the error of the lowest
// index that failed.
func parallel(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(n, workers) {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					errs[i] = err
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	return firstErr(errs)
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// chmodNoFollow sets the mode of name in dirfd, which must be a node of
// type typ (S_IF*), through an O_PATH descriptor: never through a symlink.
func chmodNoFollow(dirfd int, name string, mode uint32, typ uint32) error {
	fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != typ {
		return fmt.Errorf("%s: a %s took the place of the node being made", name, backend.TypeName(backend.FileMode(st.Mode)))
	}
	return ignoringEINTR(func() error {
		return unix.Fchmodat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), mode, 0)
	})
}
