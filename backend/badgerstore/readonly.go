package badgerstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/lockfile"
)

// ErrNeedsRecovery is returned (wrapped) by a read-only Open of a store
// that badger opens only after repairing it: a memtable log with a torn
// or damaged tail, which a writable open truncates to its last intact
// entry. A read-only open changes nothing, so it refuses instead.
var ErrNeedsRecovery = errors.New("the store needs a repair that a read-only open does not make")

// lock takes memfs's lock of the store at dir: exclusive, with our PID
// written, or, read-only, shared and unwritten (lockfile.Share).
func lock(dir string, readOnly bool) (*os.File, error) {
	if readOnly {
		return lockfile.Share(filepath.Join(dir, lockName), dir)
	}
	return lockfile.Lock(filepath.Join(dir, lockName), dir)
}

// readOnlyOpenError explains why badger could not open dir read-only.
// Badger formats its causes into its messages (badger.ErrTruncateNeeded
// cannot be found with errors.Is), so the cause is told from the
// directory: a memtable log left there (badger removes it at a clean
// close) is one that a writable open replays and cuts to its last intact
// entry, which read-only badger refuses to do.
func readOnlyOpenError(dir string, err error) error {
	if leftoverLogSize(dir) > 0 {
		return fmt.Errorf("badgerstore: %s was not closed cleanly (a memfs or badger process ended without closing it): %w; nothing was changed "+
			"(badger: %v)\n  the next memfs mount, or a command that writes, recovers it (cutting the unfinished end of its memtable log); copy the directory aside first to keep those bytes",
			dir, ErrNeedsRecovery, err)
	}
	return fmt.Errorf("badgerstore: open %s read-only: %w", dir, err)
}

// writable fails op on a store opened read-only.
func (s *Store) writable(op string) error {
	if s.readOnly {
		return fmt.Errorf("badgerstore: %s in %s: %w", op, s.dir, backend.ErrReadOnly)
	}
	return nil
}
