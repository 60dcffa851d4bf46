package backend

import (
	"errors"
	"io/fs"
)

// ErrKeyNotFound is returned (wrapped in a *fs.PathError) by Load when a key
// is not in the store. It satisfies errors.Is(err, fs.ErrNotExist).
var ErrKeyNotFound error = notFound{}

// ErrInvalidKey is returned for a key that breaks the rules of ValidateKey.
// Nothing is read or written when it is returned.
var ErrInvalidKey = errors.New("invalid key")

// ErrKeyTooLong is returned, together with ErrInvalidKey, for a key or a key
// segment that is longer than MaxKeyLen or MaxSegmentLen.
var ErrKeyTooLong = errors.New("key too long")

// ErrInvalidXAttr is returned for extended attributes a store cannot
// persist (see ValidateXAttrs).
var ErrInvalidXAttr = errors.New("invalid extended attribute")

// ErrStoreInUse is returned by a backend's Open when another process (or
// another Open in this process) holds the store.
var ErrStoreInUse = errors.New("store is in use")

type notFound struct{}

func (notFound) Error() string        { return "key not found" }
func (notFound) Is(target error) bool { return target == fs.ErrNotExist }

// NotFound returns the error Load reports for a missing key.
func NotFound(op, key string) error {
	return &fs.PathError{Op: op, Path: key, Err: ErrKeyNotFound}
}
