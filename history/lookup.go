package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"

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

// Own returns the versions recorded under key itself, oldest first: those
// of Versions without the versions of the names key was renamed from.
func (s *Store) Own(ctx context.Context, key string) ([]Version, error) {
	if err := backend.ValidateKey(key); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return s.keyVersions(ctx, key)
}

// SameState reports whether a and b leave their key in one state: the
// same value (address and size) with the same mode, owner, mtime, link
// group and user.memfs.* attributes. The seq, op, writer and the change
// and access times are not compared.
func SameState(a, b *Version) bool {
	return a.Addr == b.Addr && a.Size == b.Size && a.Mode == b.Mode && a.UID == b.UID && a.GID == b.GID &&
		a.Rdev == b.Rdev && a.Link == b.Link && a.MTime == b.MTime && !a.Redacted && !b.Redacted &&
		maps.EqualFunc(a.XAttrs, b.XAttrs, bytes.Equal)
}
