package dirstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/lockfile"
)

// memfs's own files in a dir store live in the records' directory
// (sysDir), which holds a .gitignore of "*": a `git add -A` in the store
// takes the keys and none of them. The root's own .gitignore is a key (the
// namespace maps 1:1), so memfs never writes it. Their names start with a
// dot, which no record's does (walkSys passes them over). The store's
// marker (backend.DirMarker) stays at the root, where every kind of store
// looks for it; it is written once and never changed.
const (
	// lockName carries the store's flock and the holder's PID. It is
	// never removed: unlinking a lock file lets a waiter lock the
	// orphaned inode while a newcomer locks a fresh one, and both win.
	lockName = sysDir + "/.lock"
	// JournalName is where memfs keeps a dir store's crash journal: in
	// the store, so that it moves with it.
	JournalName = sysDir + "/.journal"
	// ignoreName keeps the whole directory out of git.
	ignoreName = sysDir + "/.gitignore"
	ignoreText = "# memfs's own files: never committed\n*\n"

	// The layout before kept the lock and the journal at the root.
	oldLockName    = ".memfs.lock"
	oldJournalName = ".memfs-journal"
)

// lockOwn takes the store's lock, and the lock file of the layout before
// when there is one (without creating it or writing into it): a memfs
// from before, which locks only that file, is refused while we hold the
// store; on a store it never opened, it would not be (it knows no other
// lock). Read-only, both are shared and nothing is created. The files
// returned are to be closed together; either may be nil.
func lockOwn(abs string, readOnly bool) (lock, old *os.File, err error) {
	if readOnly {
		if lock, err = lockfile.Share(filepath.Join(abs, lockName), abs); err != nil {
			return nil, nil, err
		}
		if old, err = lockfile.Share(filepath.Join(abs, oldLockName), abs); err != nil {
			closeFiles(lock)
			return nil, nil, err
		}
		return lock, old, nil
	}
	if err := os.Mkdir(filepath.Join(abs, sysDir), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, nil, err
	}
	if lock, err = lockfile.Lock(filepath.Join(abs, lockName), abs); err != nil {
		return nil, nil, err
	}
	if old, err = lockfile.LockExisting(filepath.Join(abs, oldLockName), abs); err != nil {
		closeFiles(lock)
		return nil, nil, err
	}
	return lock, old, nil
}

func closeFiles(fs ...*os.File) error {
	var errs []error
	for _, f := range fs {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	return errors.Join(errs...)
}

// setUpOwn, under the lock, writes the records' directory's .gitignore
// when it is missing, and moves a journal the layout before left at the
// root to JournalName, before a session opens it: its records are
// replayed from there. When both hold records (a memfs from before ran
// on the store after this one crashed), it refuses rather than drop
// either.
func setUpOwn(abs string) error {
	if err := writeIgnore(abs); err != nil {
		return err
	}
	old, cur := filepath.Join(abs, oldJournalName), filepath.Join(abs, JournalName)
	ofi, err := os.Lstat(old)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !ofi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file: move it away", old)
	}
	cfi, err := os.Lstat(cur)
	switch {
	case err == nil && cfi.Size() > 0 && ofi.Size() > 0:
		return fmt.Errorf("%s and %s both hold journal records (a memfs from before opened the store after a crash): "+
			"replay %s with that memfs, or move it away, then open the store again", old, cur, old)
	case err == nil && cfi.Size() > 0:
		// An empty journal the layout before left: nothing in it.
		return os.Remove(old)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := os.Rename(old, cur); err != nil {
		return err
	}
	if err := syncPath(filepath.Join(abs, sysDir)); err != nil {
		return err
	}
	return syncPath(abs)
}

// writeIgnore writes ignoreName unless it exists: a temp file, fsynced,
// renamed into place (a crash leaves the temp, which Open sweeps).
func writeIgnore(abs string) error {
	p := filepath.Join(abs, ignoreName)
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	if err := backend.WriteOnce(p, filepath.Join(abs, sysDir, tempPrefix+"gitignore"), ignoreText); err != nil {
		return err
	}
	return syncPath(filepath.Join(abs, sysDir))
}

// syncPath fsyncs the directory at p.
func syncPath(p string) error {
	d, err := os.Open(p)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// LegacyJournal is the journal the layout before kept at the root, when
// the store holds one: Open moves it to JournalName, OpenReadOnly leaves
// it where it is, and a read-only session reads it from here
// (memfs.Options.Session.ReadOnly). "" when there is none.
func (s *Store) LegacyJournal() string {
	p := filepath.Join(s.dir, oldJournalName)
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
}
