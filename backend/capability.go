package backend

import (
	"context"
	"errors"
	"io/fs"
	"time"
)

// A Store has a small core (List, Load, Save, Delete, Close). What only some
// stores can do is an optional capability, an interface of its own that a
// caller finds by type assertion, as io/fs does for ReadDirFS: SysStore,
// SysScanner, SysBatchSaver, Walker, Batcher, Versioned, Watcher, Spacer and
// KeyLimiter (key.go). A wrapper (errorstore) claims a
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

// SysScanner is a SysStore that reads the system records under a prefix
// with their data in one pass: one iteration (badger), one range request
// per page (etcd), one walk of the prefix's directory (dir), where
// ListSys and a LoadSys per record cost a lookup or a round trip each.
// Callers use ScanSys, which falls back to those on a store without it.
type SysScanner interface {
	SysStore
	// ScanSys returns the system records whose name starts with prefix,
	// sorted by name, each with its data in Value and Info.Size set. A
	// record that LoadSys would report damaged fails the scan with that
	// error (errors.Is(err, ErrCorrupt)).
	ScanSys(ctx context.Context, prefix string) ([]Entry, error)
}

// Batcher is a Store that saves and deletes in one atomic batch: a reader
// (and a crash) sees all of it or none of it. A session's flush is one
// Apply, so that a rename (a save of the new key, a delete of the old) is
// never half done. A store that cannot make a batch atomic (a directory
// store: one file at a time) does not claim Batcher, and its callers use
// Save and Delete.
type Batcher interface {
	// Apply saves b.Saves (as Save does) and deletes b.Deletes (as
	// Delete does) in one atomic, durable step, and fails without
	// writing anything when it cannot: the whole batch is checked
	// (ValidateBatch) before anything is written, and a batch larger
	// than the store can commit at once is refused with
	// ErrBatchTooLarge, never split (the store documents its limit). A save whose key is in b.Expect
	// expects that stored version, as Versioned.SaveIf does, with its
	// conflict copy in the same step; conflicts maps such a key to its
	// conflict key. A store that is not Versioned fails a batch with a
	// non-empty Expect with an error wrapping errors.ErrUnsupported.
	Apply(ctx context.Context, b Batch) (conflicts map[string]string, err error)
}

// Batch is the work of one Batcher.Apply.
type Batch struct {
	// Saves are saved as one Save call saves them (a key twice: the
	// later entry wins).
	Saves []Entry
	// Deletes are removed; keys the store does not hold are ignored. A
	// key may not be both saved and deleted (ErrSavedAndDeleted): the
	// batch has no order between them.
	Deletes []string
	// Expect maps the key of a save to the version it replaces (see
	// Versioned); a save whose key is not in it replaces whatever holds
	// the key. Nil for none.
	Expect map[string]Version
	// FailOnConflict changes what a mismatch does: instead of keeping
	// the version found beside the key, Apply writes nothing and returns
	// a *ConflictError naming every key whose stored version does not
	// match (Version.Matches) its entry in Expect or ExpectDeleted. A
	// save expecting a key present that another writer removed is not a
	// conflict (it is saved); a save expecting an absent key
	// (zero Version) that another writer created is.
	FailOnConflict bool
	// ExpectDeleted maps a key of Deletes to the version the delete
	// removes; checked only with FailOnConflict (a delete of a key
	// another writer changed since is a conflict; of a key already
	// gone is not). Nil for none.
	ExpectDeleted map[string]Version
}

// ErrBatchTooLarge is returned by Batcher.Apply for a batch larger than the
// store can make atomic (badger: one transaction); nothing was written.
// The caller may send the work as Save and Delete calls instead, which a
// store splits as it must.
var ErrBatchTooLarge = errors.New("batch too large to apply atomically")

// ErrSavedAndDeleted is returned by Batcher.Apply for a batch that both
// saves and deletes a key, in a *fs.PathError naming it.
var ErrSavedAndDeleted = errors.New("key both saved and deleted in one batch")

// ValidateBatch checks b as Apply must before it writes anything: every
// save as Save checks it (ValidateEntries), every deleted key as Delete
// checks it (CheckStoreKey), and no key both saved and deleted.
func ValidateBatch(b Batch) error {
	if err := ValidateEntries(b.Saves); err != nil {
		return err
	}
	saved := make(map[string]bool, len(b.Saves))
	for _, e := range b.Saves {
		saved[e.Key] = true
	}
	for _, k := range b.Deletes {
		if err := CheckStoreKey(k); err != nil {
			return err
		}
		if saved[k] {
			return &fs.PathError{Op: "apply", Path: k, Err: ErrSavedAndDeleted}
		}
	}
	return nil
}

// SysSwapper is a SysStore that several processes write at once (a shared
// store): it changes system records by compare-and-swap, so that writers
// of one record (the event log's head) never overwrite each other.
type SysSwapper interface {
	SysStore
	// SwapSys saves puts and deletes dels, in one atomic step, if the
	// system record guard holds exactly old (nil: guard is absent), and
	// reports ok. When guard holds anything else it writes nothing and
	// returns ok false and a nil error.
	SwapSys(ctx context.Context, guard string, old []byte, puts map[string][]byte, dels []string) (ok bool, err error)
}

// SysBatchSaver is a SysStore that saves many system records in one call
// for less than a SaveSys each (a directory store: far fewer fsyncs, run
// concurrently). The batch is not atomic: each record is saved whole or
// not at all, and a crash before the call returns may keep any subset of
// them. When it returns without error, every record is durable.
type SysBatchSaver interface {
	SysStore
	SaveSysBatch(ctx context.Context, recs map[string][]byte) error
}

// Peer is one process that has a store open, as Presence reports it.
type Peer struct {
	ID    string    // unique for the registration, chosen by the store
	Agent string    // the agent name the mount runs as
	Host  string    // the machine
	PID   int       // the process
	Mount string    // the mountpoint, "" for none
	Since time.Time // when it registered
}

// Presence is a store that many processes use at once and that knows who
// they are: each registers itself for as long as it lives (a lease: a
// process that dies without leaving is gone within seconds).
type Presence interface {
	// Register announces p until ctx is done, the store is closed or
	// the returned function is called. p.ID and p.Since are set by the
	// store.
	Register(ctx context.Context, p Peer) (leave func(), err error)
	// Peers returns the live registrations, sorted by ID.
	Peers(ctx context.Context) ([]Peer, error)
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

// BesideKeeper is a Store that other programs write (a directory store)
// and that can move a node one of them put under a name aside, to that
// name's conflict key, so that a directory a session saves there takes
// the name: the keep-beside rule for a change of a node's type (the
// directory keeps the name; nothing is deleted).
type BesideKeeper interface {
	// KeepBeside moves the node at key, unless it is a directory, to
	// ConflictKey(key, now) and returns that key; nothing at key, or a
	// directory, gives "" and no error.
	KeepBeside(ctx context.Context, key string) (string, error)
}

// Collector is a shared store that keeps data no key names any more (the
// chunks of overwritten and deleted large values) until it is collected:
// by hand (memfs gc), or by the one process that the mounts of the store
// elect (Lead), so that several mounts do not each scan the whole store.
type Collector interface {
	// Collect removes what no record, conflict copy or system record
	// names, and reports what it did. It never removes what a save in
	// progress is about to name (the store documents how).
	Collect(ctx context.Context) (Collected, error)
	// Lead blocks until this process is the store's collector or ctx is
	// done. It returns a context that ends when the process stops being
	// the collector (ctx done, resign called, or the election's lease
	// lost), and resign, which gives the place to the next candidate.
	Lead(ctx context.Context) (lead context.Context, resign func(), err error)
}

// Collected is what one Collector.Collect did.
type Collected struct {
	// Removed is how many pieces of data it deleted.
	Removed int
	// Swept is false when Collect only left the mark that a later
	// Collect, after Wait, sweeps from: nothing written since was
	// examined.
	Swept bool
	// Wait is how long the store keeps unnamed data before a Collect
	// may remove it.
	Wait time.Duration
}

// Spacer is a Store that can tell how much room it takes and how much it
// has left: df on a mount reports it.
type Spacer interface {
	// Space returns the store's usage and room. It is called at each
	// statfs(2) of a mount, so it answers from the store's own counters
	// or one system call, never a walk of the store.
	Space(ctx context.Context) (Space, error)
}

// Space is the room of a store (Spacer).
type Space struct {
	// Used is the bytes the store takes; -1 when it cannot tell without
	// a walk (a mount then counts the bytes of the values it indexes).
	Used int64
	// Avail is how many more bytes it can take: the free space of the
	// filesystem that holds it (less what the store keeps in reserve),
	// or what its quota leaves.
	Avail int64
	// Files is how many more nodes it can take; -1 when only its bytes
	// bound them.
	Files int64
}

// ReadAheader is a store whose round trip costs far more than the small
// values it returns (a network store). When a session loads a value it
// does not hold, it loads the values of the unloaded files beside it (same
// directory) in the same Load call, so that reading a directory's files
// costs a round trip or two, not one per file. ReadAhead bounds what one
// Load takes in beside the value asked for: at most keys files, bytes
// bytes of values in all, and no file larger than fileBytes.
type ReadAheader interface {
	ReadAhead() (keys int, bytes, fileBytes int64)
}
