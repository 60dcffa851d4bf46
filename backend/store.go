// Package backend defines the persistence interface under memfs: a Store holds
// a flat namespace of keys, each with a raw byte value and the file metadata a
// mount needs (size, modification time, mode, owner).
//
// # Keys
//
// A key is a clean, relative, slash-separated path such as "memory/global.md".
// [ValidateKey] is the single place where the rules are checked; every Store
// method calls it on every key it is given, and every caller that accepts a
// key from outside (the session, the FUSE layer, the CLI) calls it too. A key
// whose segment starts with "." is hidden ([IsHidden]): hidden keys live only
// in a session and are never passed to, or returned by, a Store.
//
// # Errors
//
// A missing key is reported by Load with an error e for which
// errors.Is(e, ErrKeyNotFound) holds (and so errors.Is(e, fs.ErrNotExist)),
// in a *fs.PathError naming the key. An invalid key gives ErrInvalidKey, and
// additionally ErrKeyTooLong when only its length is at fault. A store that
// another process holds gives ErrStoreInUse. Each backend translates its
// driver's errors into these at its boundary; callers never match error text.
//
// # Concurrency
//
// A Store is safe for concurrent use by multiple goroutines. Implementations
// must not retain the caller's slices: Save copies or writes out what it is
// given before it returns, and Load returns values the caller owns.
package backend

import (
	"context"
	"io/fs"
	"time"
)

// Info is the metadata of one key, as a mount reports it through stat(2).
type Info struct {
	Size  int64       // length of the value in bytes
	MTime time.Time   // last modification time of the value
	Mode  fs.FileMode // permission bits only (0644 for an ordinary note)
	UID   uint32      // owner
	GID   uint32      // group
	// XAttrs holds the entry's extended attributes, all in the "user."
	// namespace (see ValidateXAttrs), or nil when it has none.
	XAttrs map[string][]byte
}

// Entry is one key with its metadata and, where the operation carries one,
// its value. In the result of List, Value is nil.
type Entry struct {
	Key   string
	Info  Info
	Value []byte
}

// Store is the persistence contract every backend fulfils. The conformance
// suite in package storetest checks each statement below.
type Store interface {
	// List returns every non-hidden key in the store with its Info, sorted
	// by key, without reading any value. A missing or empty store gives an
	// empty list and no error.
	List(ctx context.Context) ([]Entry, error)

	// Load returns the entries for keys, in the same order, values
	// included. If any key is missing, Load fails with an error that
	// satisfies errors.Is(err, ErrKeyNotFound) and names that key.
	Load(ctx context.Context, keys ...string) ([]Entry, error)

	// Save persists entries: value, Info.Mode, Info.MTime and owner (as far
	// as the process may set an owner). Info.Size is taken from the value.
	// A zero MTime is stored as the time of the save. When Save returns
	// nil, the entries are durable. Each entry is written atomically: a
	// reader sees the old value or the new one, never a mix. Whether the
	// batch as a whole is atomic is up to the backend, which documents it.
	Save(ctx context.Context, entries ...Entry) error

	// Delete removes keys. Keys that are not in the store are ignored.
	// When Delete returns nil, the removals are durable.
	Delete(ctx context.Context, keys ...string) error

	// SaveSys atomically and durably replaces the system record name with
	// data. System records are memfs's own data (the event log, indexes):
	// they live apart from keys, are never listed by List and never clash
	// with a key of the same name. Names follow the key rules.
	SaveSys(ctx context.Context, name string, data []byte) error

	// LoadSys returns the system record name; a missing record gives an
	// error satisfying errors.Is(err, ErrKeyNotFound).
	LoadSys(ctx context.Context, name string) ([]byte, error)

	// ListSys returns the system records whose name starts with prefix,
	// sorted by name, with Info.Size set and no value.
	ListSys(ctx context.Context, prefix string) ([]Entry, error)

	// DeleteSys removes system records; missing names are ignored.
	DeleteSys(ctx context.Context, names ...string) error

	// Close releases the store (its lock, files and memory). A closed
	// store must not be used.
	Close() error
}
