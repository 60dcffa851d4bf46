package lockfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

// Share takes a shared lock on the lock file at path, for a reader that
// must change nothing: the file is opened read-only and neither created
// nor written (the PID in it stays the last writer's). Readers share it;
// a holder of Lock excludes them, and they exclude a Lock, which then
// fails with ErrStoreInUse. A missing file is no lock (nil, nil): no
// memfs ever wrote there, and a reader creates nothing; a writer that
// arrives meanwhile is not excluded (a plain directory is written by other
// programs all the same). what names what is locked, as for Lock.
func Share(path, what string) (*os.File, error) { return lockExisting(path, what, unix.LOCK_SH) }

// LockExisting takes an exclusive lock on the lock file at path without
// creating it or writing into it: for a lock file an older memfs takes,
// which a newer one must exclude while it holds the store but must not
// make appear. A missing file is no lock (nil, nil). A holder makes it
// fail with an error wrapping backend.ErrStoreInUse that names the PID
// in the file; what names what is locked, as for Lock.
func LockExisting(path, what string) (*os.File, error) {
	return lockExisting(path, what, unix.LOCK_EX)
}

// lockExisting flocks (how) the lock file at path, opened read-only
// without following a symlink; a missing one is no lock.
func lockExisting(path, what string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, syscall.ELOOP):
		return nil, fmt.Errorf("lock %s %w", path, backend.ErrSymlink)
	case err != nil:
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := flock(f, how); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, InUse(what, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
