package backend

import "context"

// A Store has a small core (List, Load, Save, Delete, Close). What only some
// stores can do is an optional capability, an interface of its own that a
// caller finds by type assertion, as io/fs does for ReadDirFS: SysStore,
// Walker, Batcher, Versioned and Watcher. A wrapper (errorstore) claims a
// capability only when the store it wraps has it. The conformance suite
// (storetest) checks every capability a store claims.

// SysStore is a Store that also keeps system records: memfs's own data (the
// event log, the search index), apart from keys. They are never listed by
// List and never clash with a key of the same name. Names follow the key
// rules.
type SysStore interface {
	Store
	// SaveSys atomically and durably replaces the system record name
	// with data.
	SaveSys(ctx context.Context, name string, data []byte) error
	// LoadSys returns the system record name; a missing record gives an
	// error satisfying errors.Is(err, ErrKeyNotFound).
	LoadSys(ctx context.Context, name string) ([]byte, error)
	// ListSys returns the system records whose name starts with prefix,
	// sorted by name, with Info.Size set and no value.
	ListSys(ctx context.Context, prefix string) ([]Entry, error)
	// DeleteSys removes system records; missing names are ignored.
	DeleteSys(ctx context.Context, names ...string) error
}

// Batcher is a Store that saves and deletes in one atomic batch: a reader
// (and a crash) sees all of it or none of it. A flush is one Apply, so
// that a rename (a save of the new key, a delete of the old) is never
// half done.
type Batcher interface {
	// Apply saves saves (as Save does, every entry checked before
	// anything is written) and deletes deletes (as Delete does) in one
	// atomic, durable step. A key may not be in both.
	Apply(ctx context.Context, saves []Entry, deletes []string) error
}

// Change is one entry of a Watcher's feed.
type Change struct {
	// Key may have been created, written, removed, or had its attributes
	// changed by another writer; the reader compares with what it holds.
	Key string
	// Lost reports that the store could not follow every change (an
	// overflowed queue): the reader compares every key. Key is "".
	Lost bool
}

// Watcher is a Store that reports the changes other writers make to it (a
// program editing a directory store, another machine on a shared store).
type Watcher interface {
	// Watch reports changes on the channel it returns until ctx is done
	// or the store is closed, then closes it. A store's own saves and
	// deletes may be reported too.
	Watch(ctx context.Context) (<-chan Change, error)
}
