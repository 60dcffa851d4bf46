package badgerstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/internal/lockfile"
)

const (
	lockName       = "memfs.lock" // ours: flocked by Open, holds the PID
	badgerLockName = "LOCK"       // badger's own directory lock, also with a PID
)

// JournalName is where memfs keeps a badger store's crash journal: in the
// store's directory, beside badger's files.
const JournalName = "memfs.journal"

// checkBadgerLock reports backend.ErrStoreInUse when another program (not
// a memfs, which would hold our lock first) has badger open on dir.
// Badger's own refusal cannot be recognised: it formats the flock errno
// into its message with %+v, so errors.Is finds nothing. Testing its lock
// file the same way badger does gives the errno, and the holder's PID,
// which badger writes there too. A program that takes the lock between this
// probe and badger.Open still makes Open fail, only with badger's message.
func checkBadgerLock(dir string) error {
	name := filepath.Join(dir, badgerLockName)
	f, err := os.OpenFile(name, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil // a new store
	}
	if err != nil {
		return fmt.Errorf("badgerstore: %w", err)
	}
	defer f.Close() // releases the probe's lock
	if err := lockfile.Flock(f); errors.Is(err, unix.EWOULDBLOCK) {
		return fmt.Errorf("badgerstore: %w", lockfile.InUse(dir, name))
	}
	return nil // any other failure: let badger.Open report it
}
