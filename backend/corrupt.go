package backend

import (
	"context"
	"time"
)

// CorruptError is the Err (inside a *fs.PathError naming the record) of a
// system record that a store holds but cannot decode: Raw is the record
// as stored, so that a caller can keep a copy of it before replacing it,
// and (on a backend.SysSwapper) state it as the old value of a swap
// (SwapSys compares a record that does not decode by its stored bytes).
// It satisfies errors.Is(err, ErrCorrupt).
type CorruptError struct {
	Raw    []byte // the record as stored; the caller must not modify it
	Reason string // what does not decode
}

func (e *CorruptError) Error() string { return ErrCorrupt.Error() + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// AsideMover is a Store that can move a damaged key out of the way
// without deleting anything: its records, exactly as stored, go to a place
// of the store that no listing shows, and the key is gone from the
// namespace (a new value may be written under it). memfs fsck --repair
// uses it; it is never called on a key that reads.
type AsideMover interface {
	// MoveAside moves key's records aside and returns where they are
	// now, in words a person can follow (a path, a key prefix). A key
	// that is not stored gives an error wrapping ErrKeyNotFound.
	MoveAside(ctx context.Context, key string) (where string, err error)
}

// AsideName is the name under which a store keeps what MoveAside moved,
// at time now: DamagedDir/STAMP/KEY, a reserved name (see IsReserved).
func AsideName(key string, now time.Time) string {
	return DamagedDir + "/" + AsideStamp(now) + "/" + key
}

// AsideStamp is the name of one MoveAside, from its time: moves never
// share a place.
func AsideStamp(now time.Time) string { return now.UTC().Format("20060102T150405.000000000Z") }

// DamagedDir is the reserved top-level name of what MoveAside moved.
const DamagedDir = ".memfs-damaged"
