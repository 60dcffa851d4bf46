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
func Share(path, what string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, syscall.ELOOP):
		return nil, fmt.Errorf("lock %s %w", path, backend.ErrSymlink)
	case err != nil:
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := flock(f, unix.LOCK_SH); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, InUse(what, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
