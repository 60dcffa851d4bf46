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

// LockExisting takes an exclusive lock on the lock file at path without
// creating it or writing into it: for a lock file an older memfs takes,
// which a newer one must exclude while it holds the store but must not
// make appear. A missing file is no lock (nil, nil). A holder makes it
// fail with an error wrapping backend.ErrStoreInUse that names the PID
// in the file; what names what is locked, as for Lock.
func LockExisting(path, what string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, syscall.ELOOP):
		return nil, fmt.Errorf("lock %s %w", path, backend.ErrSymlink)
	case err != nil:
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := flock(f, unix.LOCK_EX); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, InUse(what, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
