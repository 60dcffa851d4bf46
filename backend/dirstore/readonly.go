package dirstore

import (
	"fmt"

	"github.com/memfs/memfs/backend"
)

// OpenReadOnly opens the store kept in dir for reading only, and changes
// nothing in dir: it creates neither dir nor memfs's files in it (no
// lock, marker or journal appears in a plain directory), sweeps no temp
// node a crashed writer left, and every write (Save, SaveIf, Delete,
// SaveSys, DeleteSys) fails with an error wrapping backend.ErrReadOnly.
// It shares the lock file with other readers when there is one: a memfs
// that holds the store for writing makes it fail with an error wrapping
// backend.ErrStoreInUse, and a writer that comes later fails while it is
// open. A dir that does not exist is an error.
func OpenReadOnly(dir string) (*Store, error) {
	return open(dir, options{readOnly: true})
}

// writable fails op on a store opened read-only.
func (s *Store) writable(op string) error {
	if s.readOnly {
		return fmt.Errorf("dirstore: %s in %s: %w", op, s.dir, backend.ErrReadOnly)
	}
	return nil
}
