package history

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/memfs/memfs/backend"
)

// Version returns the version of key at seq as recorded under key (a
// version from before a rename is recorded under the old name: see
// Versions): one load, for a reader that knows the seq (a lookup of
// .memfs/history/KEY/SEQ), where Versions loads every version of the key.
// None gives an error satisfying errors.Is(err, fs.ErrNotExist).
func (s *Store) Version(ctx context.Context, key string, seq uint64) (Version, error) {
	var v Version
	if err := backend.ValidateKey(key); err != nil {
		return v, fmt.Errorf("history: %w", err)
	}
	err := s.loadVersion(ctx, versionName(key, seq), &v)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return Version{}, &fs.PathError{Op: "version", Path: key, Err: fs.ErrNotExist}
	}
	if err != nil {
		return Version{}, err
	}
	return v, nil
}
