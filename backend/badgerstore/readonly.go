package badgerstore

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/lockfile"
)

// lock takes memfs's lock of the store at dir: exclusive, with our PID
// written, or, read-only, shared and unwritten (lockfile.Share).
func lock(dir string, readOnly bool) (*os.File, error) {
	if readOnly {
		return lockfile.Share(filepath.Join(dir, lockName), dir)
	}
	return lockfile.Lock(filepath.Join(dir, lockName), dir)
}

// writable fails op on a store opened read-only.
func (s *Store) writable(op string) error {
	if s.readOnly {
		return fmt.Errorf("badgerstore: %s in %s: %w", op, s.dir, backend.ErrReadOnly)
	}
	return nil
}
