package backend

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrKeyNotFound is returned (wrapped in a *fs.PathError) by Load when a key
// is not in the store. It satisfies errors.Is(err, fs.ErrNotExist).
var ErrKeyNotFound error = notFound{}

// ErrInvalidKey is returned for a key that breaks the rules of ValidateKey.
// Nothing is read or written when it is returned.
var ErrInvalidKey = errors.New("invalid key")

// ErrKeyTooLong is returned, together with ErrInvalidKey, for a key or a key
// segment that is longer than MaxSegmentLen or than the key limit of the
// store (KeyLimit).
var ErrKeyTooLong = errors.New("key too long")

// ErrInvalidXAttr is returned for extended attributes a store cannot
// persist (see ValidateXAttrs).
var ErrInvalidXAttr = errors.New("invalid extended attribute")

// ErrStoreInUse is returned by a backend's Open when another process (or
// another Open in this process) holds the store.
var ErrStoreInUse = errors.New("store is in use")

// ErrReadOnly is returned (wrapped) by every write to a store opened
// read-only (dirstore.OpenReadOnly, badgerstore.Options.ReadOnly): the
// commands that only read open the store so, and change nothing in it.
var ErrReadOnly = errors.New("store opened read-only")

// ErrUnavailable is returned (wrapped) by a store that cannot reach its
// server within its timeout (a shared store while etcd is down): nothing
// was written, and the call may succeed later. A session keeps its
// changes dirty and journaled until it does.
var ErrUnavailable = errors.New("store unavailable")

type notFound struct{}

func (notFound) Error() string        { return "key not found" }
func (notFound) Is(target error) bool { return target == fs.ErrNotExist }

// NotFound returns the error Load reports for a missing key.
func NotFound(op, key string) error {
	return &fs.PathError{Op: op, Path: key, Err: ErrKeyNotFound}
}

// ErrCorrupt is returned when a store's data is damaged: a value whose
// length disagrees with its metadata, a record that does not parse. The
// damaged entry is reported, never read as empty; the others stay readable.
var ErrCorrupt = errors.New("damaged store data")

// ErrSymlink is returned when a file or directory that memfs keeps in a
// store's directory (its lock, journal, system records, a database file) is
// a symbolic link. memfs never follows one there: a store that arrives by
// git pull, rsync or unzip can carry a link to a file outside it.
var ErrSymlink = errors.New("is a symbolic link; memfs never follows a link in a store directory (replace it with the real file, or remove it)")

// RefuseSymlinks returns an error wrapping ErrSymlink, naming the path, for
// the first of names in dir that is a symbolic link. With no names, every
// entry of dir is checked. Missing names are fine.
func RefuseSymlinks(dir string, names ...string) error {
	if len(names) == 0 {
		ents, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for _, e := range ents {
			if e.Type()&fs.ModeSymlink != 0 {
				return fmt.Errorf("%s %w", filepath.Join(dir, e.Name()), ErrSymlink)
			}
		}
		return nil
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		fi, err := os.Lstat(p)
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s %w", p, ErrSymlink)
		}
	}
	return nil
}
