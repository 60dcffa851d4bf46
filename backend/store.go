// Package backend defines the persistence interface under memfs: a Store holds
// a namespace of keys, each a node of a file tree (a regular file, a
// directory, a symlink, a fifo, a socket or a device node) with its value and
// every attribute stat(2) reports.
//
// # Keys
//
// A key is a clean, relative, slash-separated path such as "memory/global.md".
// [ValidateKey] is the single place where the rules are checked; every Store
// method calls it on every key it is given, and every caller that accepts a
// key from outside (the session, the FUSE layer, the CLI) calls it too. No
// key holds a control character ([IsControl]): every name memfs prints is
// one line that cannot drive a terminal.
// Dotfiles are ordinary keys. Only memfs's own names are reserved
// ([IsReserved]): they are never passed to, or returned by, a Store.
//
// # Nodes
//
// Info.Mode carries the node type and every bit of ModeMask. A regular
// file's value is its content; a symlink's value is its target (never
// followed by a store); directories, fifos, sockets and device nodes have
// no value. A directory is an entry of its own: an empty directory and a
// directory's attributes survive. A key under a directory no entry names
// (a store written before directories were entries) implies it, with the
// attributes the reader chooses. Entries that share a non-empty Info.Link
// are the names of one node (hard links): each name is listed and loaded
// with the node's value and attributes, and a save that changes the node
// carries every name of the group in one call ([ValidateEntry] states the
// rest).
//
// # Capabilities
//
// [Store] is the core every backend has: List, Load, Save, Delete, Close.
// What only some stores can do is an optional interface found by type
// assertion, as io/fs does: [SysStore] (system records), [Walker],
// [Versioned] (conditional saves), [Batcher] (saves and deletes in one
// atomic step) and [Watcher] (a change feed). A caller asks for the
// smallest interface it needs.
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
	Size  int64     // length of the value in bytes
	MTime time.Time // last modification time of the value
	// ATime is the last access time; zero means MTime.
	ATime time.Time
	// CTime is the last change of the node (value or attributes); zero
	// in a Save means the time of the save.
	CTime time.Time
	// Mode is the node type and permissions: every bit of ModeMask
	// (0644 for an ordinary note).
	Mode fs.FileMode
	UID  uint32 // owner
	GID  uint32 // group
	// Rdev is the device number of a device node (unix.Mkdev), else 0.
	Rdev uint64
	// Link names the hard-link group of the entry: entries with the same
	// non-empty Link are one node under several names. "" for a node with
	// one name. A store that names groups itself (a directory store: by
	// the node's inode) writes its name of a saved group into the
	// caller's entries, as List and Load will give it.
	Link string
	// XAttrs holds the entry's extended attributes, all in the "user."
	// namespace (see ValidateXAttrs), or nil when it has none.
	XAttrs map[string][]byte
	// Rev is the store's revision of the entry (a number that grows with
	// every write to the store), set by List and Load of a store that
	// numbers its writes (etcd, memstore), 0 elsewhere. Save, SaveIf and
	// Apply of such a store write the revision of the save into the
	// caller's entries; a value given to them is ignored.
	Rev int64
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
	// List returns every key in the store with its Info, sorted by key,
	// without reading any value. A missing or empty store gives an
	// empty list and no error.
	List(ctx context.Context) ([]Entry, error)

	// Load returns the entries for keys, in the same order, values
	// included. If any key is missing, Load fails with an error that
	// satisfies errors.Is(err, ErrKeyNotFound) and names that key.
	Load(ctx context.Context, keys ...string) ([]Entry, error)

	// Save persists entries: value and every field of Info (the owner as
	// far as the process may set one). Info.Size is taken from the value.
	// A zero MTime or CTime is stored as the time of the save. An entry
	// ValidateEntry refuses fails the call before anything is written.
	// An entry whose key holds a node of another type replaces it; a
	// directory that still holds keys may be refused (a directory store
	// cannot replace it), so a caller deletes what is under it first. When Save returns
	// nil, the entries are durable. Each entry is written atomically: a
	// reader sees the old value or the new one, never a mix. Whether the
	// batch as a whole is atomic is up to the backend, which documents it
	// (Batcher.Apply always is).
	Save(ctx context.Context, entries ...Entry) error

	// Delete removes keys. Keys that are not in the store are ignored.
	// When Delete returns nil, the removals are durable.
	Delete(ctx context.Context, keys ...string) error

	// Close releases the store (its lock, files and memory). A closed
	// store must not be used.
	Close() error
}
