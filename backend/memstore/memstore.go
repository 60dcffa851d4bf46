// Package memstore is a backend.Store kept in memory: the reference
// implementation of the Store contract, with every capability
// (backend.SysStore, backend.Walker, backend.Versioned, backend.Batcher,
// backend.Watcher: Other writes the contents as another writer would, and
// Watch reports it), and a test double for the packages above the
// backend, a shared store's among them: it numbers its writes (Info.Rev),
// and is a backend.SysSwapper and a backend.Presence.
//
//	s := memstore.New()
//	defer s.Close()
//	err := s.Save(ctx, backend.Entry{Key: "memory/a.md", Value: []byte("a"), Info: backend.Info{Mode: 0o644}})
//
// Nothing is persisted: the contents live as long as a Store that holds
// them. Reopen hands them to a new Store once the first is closed, as a
// process opens its store again after closing it.
//
// # Nodes
//
// Every node type is kept exactly: mode (node type, setuid, setgid,
// sticky, permissions), owner, device number, the three times to the
// nanosecond, the hard-link group and the extended attributes. A
// directory is an entry of its own and implies nothing about the keys
// under it; deleting a key leaves its directory's entry, and deleting a
// directory entry leaves the keys under it. Save takes Size from the
// value, stores a zero MTime or CTime as the time of the Save and a zero
// ATime as the MTime. A non-directory never replaces a directory entry
// that still holds keys (the contract allows the refusal, and a directory
// store must refuse): the Save fails with an error naming the key that
// matches syscall.ENOTEMPTY. A key under a file is kept, as in badgerstore
// (the contract leaves it open).
//
// Entries that share a non-empty Info.Link are one node: its names share
// one value and one Info, so a save of any name changes what every name
// reports, and deleting a name leaves the others whole. Within one batch
// the last entry of a group wins.
//
// # Errors
//
// Save and SaveIf check the whole batch with backend.ValidateEntries, Apply
// with backend.ValidateBatch, and Load and Delete every key, before
// anything is read or written. A missing
// key gives backend.NotFound. After Close every method but Close fails
// with an error wrapping fs.ErrClosed; Close itself may be called again.
//
// # Atomicity
//
// A Save, SaveIf, Delete or Apply is atomic as a whole: the batch is
// checked, then applied under one lock that no reader shares, so a reader
// sees all of it or none of it, and a refused batch changes nothing. A
// batch has no size limit beyond memory.
//
// # Revisions
//
// The contents number their writes of keys, as etcd numbers its
// transactions: every Save, SaveIf, Apply or Delete call, and every write
// of an Other, that changes keys takes the next revision, one for the
// whole call, and every entry it saves (conflict copies included) has it
// as Info.Rev; Save, SaveIf and Apply write it into the caller's entries.
// A Delete of keys the store does not hold, and an empty batch, change
// nothing and take none. Writes of system records are not numbered. The
// counter belongs to the contents, so the Stores Reopen makes go on from
// where the last one stopped.
//
// # Shared-store capabilities
//
// SwapSys is a compare-and-swap of system records under the one lock.
// Register keeps a registration in memory until it is left, its context
// is done or its Store closes (Other.Register: until left or done); IDs
// are "mem-" and a counter, so Peers lists them in the order they
// registered.
//
// # Concurrency
//
// A Store is safe for concurrent use by multiple goroutines. One
// sync.RWMutex, shared with the Stores Reopen makes over the same contents,
// guards everything: readers (List, Walk, Load, LoadSys, ListSys) share it,
// writers hold it alone (Other's too). Each Watch runs one goroutine, which
// ends when its context is done or its Store closes; a writer queues a
// change for it (an unbounded queue under the watch's own mutex, taken
// after the store's) and never waits for the reader. Values and attributes
// are copied on the way in and on the way out, so neither side's later
// change to a slice or map reaches the other.
package memstore

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memfs/memfs/backend"
)

var (
	_ backend.Store      = (*Store)(nil)
	_ backend.SysStore   = (*Store)(nil)
	_ backend.SysScanner = (*Store)(nil)
	_ backend.Walker     = (*Store)(nil)
	_ backend.Versioned  = (*Store)(nil)
	_ backend.Batcher    = (*Store)(nil)
)

// Store is an in-memory backend.Store. Make one with New.
type Store struct {
	c *contents // immutable; shared with the Stores Reopen makes
}

// contents is what a Store holds, kept apart from the Store so that Reopen
// can hand it to another.
type contents struct {
	mu     sync.RWMutex     // guards the fields below
	holder *Store           // the Store in use; nil once it is closed
	keys   map[string]*node // every key; the names of a hard-link group share a node
	links  map[string]*node // Info.Link -> the node of that group
	sys    map[string][]byte
	// rev is the revision of the last write of keys (see Revisions).
	rev int64
	// peers are the live Presence registrations, by ID; lastPeer
	// numbers them.
	peers    map[string]*registration
	lastPeer int64
	// watchers are the live Watches of every Store over the contents.
	watchers map[*watcher]bool
}

// node is one node of the tree, under one or (a hard-link group) several
// keys.
type node struct {
	info  backend.Info // Size is len(value); XAttrs owned by the store
	value []byte       // owned by the store
	names int          // keys that name the node
}

// New returns an empty Store.
func New() *Store {
	s := &Store{c: &contents{
		keys:  map[string]*node{},
		links: map[string]*node{},
		sys:   map[string][]byte{},
	}}
	s.c.holder = s
	return s
}

// Reopen returns a new Store over the contents of s, as a process opens
// its store again after closing it. While a Store over the contents is
// open, Reopen fails with an error wrapping backend.ErrStoreInUse.
func (s *Store) Reopen() (*Store, error) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if s.c.holder != nil {
		return nil, fmt.Errorf("memstore: in use by process %d: %w", os.Getpid(), backend.ErrStoreInUse)
	}
	n := &Store{c: s.c}
	s.c.holder = n
	return n, nil
}

// Close closes s. Closing a closed Store does nothing.
func (s *Store) Close() error {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if s.c.holder == s {
		s.c.holder = nil
		s.c.closeWatchersLocked(s)
		s.c.leaveAllLocked(s)
	}
	return nil
}

// usableLocked reports an error unless s is open. The caller holds s.c.mu.
func (s *Store) usableLocked(op string) error {
	if s.c.holder != s {
		return fmt.Errorf("memstore: %s: %w", op, fs.ErrClosed)
	}
	return nil
}

// rlock takes the lock shared for op and checks s is open; on nil the
// caller must unlock.
func (s *Store) rlock(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.c.mu.RLock()
	if err := s.usableLocked(op); err != nil {
		s.c.mu.RUnlock()
		return err
	}
	return nil
}

// lock is rlock, exclusive.
func (s *Store) lock(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.c.mu.Lock()
	if err := s.usableLocked(op); err != nil {
		s.c.mu.Unlock()
		return err
	}
	return nil
}

// infoOut is a copy of n's Info the caller owns.
func (n *node) infoOut() backend.Info {
	i := n.info
	i.XAttrs = backend.CloneXAttrs(n.info.XAttrs)
	return i
}

// List returns every key with its Info, sorted by key.
func (s *Store) List(ctx context.Context) ([]backend.Entry, error) {
	if err := s.rlock(ctx, "list"); err != nil {
		return nil, err
	}
	defer s.c.mu.RUnlock()
	out := make([]backend.Entry, 0, len(s.c.keys))
	for k, n := range s.c.keys {
		out = append(out, backend.Entry{Key: k, Info: n.infoOut()})
	}
	slices.SortFunc(out, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Walk reports what List returns in batches of at most backend.WalkBatch,
// in key order. The listing is taken at once; fn runs without the lock, so
// it may call s.
func (s *Store) Walk(ctx context.Context, fn func(batch []backend.Entry) error) error {
	listed, err := s.List(ctx)
	if err != nil {
		return err
	}
	return backend.WalkListed(ctx, listed, fn)
}

// Load returns the entries for keys, in order, values included.
func (s *Store) Load(ctx context.Context, keys ...string) ([]backend.Entry, error) {
	if err := checkKeys(keys); err != nil {
		return nil, fmt.Errorf("memstore: load: %w", err)
	}
	if err := s.rlock(ctx, "load"); err != nil {
		return nil, err
	}
	defer s.c.mu.RUnlock()
	out := make([]backend.Entry, len(keys))
	for i, k := range keys {
		n, ok := s.c.keys[k]
		if !ok {
			return nil, backend.NotFound("load", k)
		}
		out[i] = backend.Entry{Key: k, Info: n.infoOut(), Value: bytes.Clone(n.value)}
	}
	return out, nil
}

// Save stores entries, the whole batch atomically.
func (s *Store) Save(ctx context.Context, entries ...backend.Entry) error {
	if err := backend.ValidateEntries(entries); err != nil {
		return fmt.Errorf("memstore: save: %w", err)
	}
	if err := s.lock(ctx, "save"); err != nil {
		return err
	}
	defer s.c.mu.Unlock()
	if err := s.c.checkDirsLocked(entries, nil); err != nil {
		return err
	}
	if len(entries) > 0 {
		s.c.saveLocked(entries, now(), s.c.bumpLocked())
		writeRev(entries, s.c.rev)
	}
	return nil
}

// bumpLocked numbers a write of keys: the revision it returns is the
// store's new one. The caller holds c.mu.
func (c *contents) bumpLocked() int64 {
	c.rev++
	return c.rev
}

// writeRev writes rev into the caller's entries, as backend.Info.Rev
// promises.
func writeRev(entries []backend.Entry, rev int64) {
	for i := range entries {
		entries[i].Info.Rev = rev
	}
}

// SaveIf is Save with each entry expecting its key's stored version (see
// backend.Versioned). A version found that is not the expected one is
// moved to its conflict key as a node of its own (never another name of
// its hard-link group, which the save may change), in the same atomic step
// as the save. A conflict comes from an Other's write, or from a caller
// that lost track of its own writes.
func (s *Store) SaveIf(ctx context.Context, entries []backend.Entry, expect []backend.Version) (map[string]string, error) {
	if len(expect) != len(entries) {
		return nil, fmt.Errorf("memstore: SaveIf: %d entries, %d versions", len(entries), len(expect))
	}
	if err := backend.ValidateEntries(entries); err != nil {
		return nil, fmt.Errorf("memstore: save: %w", err)
	}
	if err := s.lock(ctx, "save"); err != nil {
		return nil, err
	}
	defer s.c.mu.Unlock()
	return s.c.applyLocked(entries, func(i int) (backend.Version, bool) { return expect[i], true }, nil)
}

// Apply saves b.Saves and deletes b.Deletes in one atomic step
// (backend.Batcher): the batch is checked, then applied under the lock no
// reader shares. A save whose key is in b.Expect is conditional, as in
// SaveIf; with b.FailOnConflict a version found that does not match
// b.Expect or b.ExpectDeleted fails the batch with a
// *backend.ConflictError and nothing written. A memory store has no size
// limit of its own on a batch.
func (s *Store) Apply(ctx context.Context, b backend.Batch) (map[string]string, error) {
	if err := backend.ValidateBatch(b); err != nil {
		return nil, fmt.Errorf("memstore: apply: %w", err)
	}
	if err := s.lock(ctx, "apply"); err != nil {
		return nil, err
	}
	defer s.c.mu.Unlock()
	if b.FailOnConflict {
		if err := s.c.checkBatchLocked(b); err != nil {
			return nil, err
		}
	}
	return s.c.applyLocked(b.Saves, func(i int) (backend.Version, bool) {
		v, ok := b.Expect[b.Saves[i].Key]
		return v, ok
	}, b.Deletes)
}

// applyLocked deletes deletes and saves entries, each entry i for which
// expect(i) gives a version expecting it (a version found that is not the
// one expected is kept under its conflict key), or changes nothing and
// fails. The caller has checked the batch and holds c.mu.
func (c *contents) applyLocked(entries []backend.Entry, expect func(i int) (backend.Version, bool), deletes []string) (map[string]string, error) {
	t := now()
	var copies []backend.Entry
	conflicts := map[string]string{}
	for i, e := range entries {
		want, check := expect(i)
		n, ok := c.keys[e.Key]
		if !check || !ok || want.Matches(backend.VersionOf(n.info)) {
			continue // unconditional, absent (or removed), or the version expected: just save
		}
		if _, done := conflicts[e.Key]; done {
			continue // a key twice in the batch: its found version is kept once
		}
		cp := backend.Entry{Key: backend.ConflictKey(e.Key, t), Info: n.infoOut(), Value: n.value}
		cp.Info.Link = ""
		if err := backend.ValidateEntry(&cp); err != nil {
			return nil, fmt.Errorf("memstore: save: conflict copy of %q: %w", e.Key, err)
		}
		copies = append(copies, cp)
		conflicts[e.Key] = cp.Key
	}
	all := append(copies, entries...)
	gone := make(map[string]bool, len(deletes))
	for _, k := range deletes {
		gone[k] = true
	}
	if err := c.checkDirsLocked(all, gone); err != nil {
		return nil, err
	}
	if len(all) == 0 && !c.holdsAnyLocked(deletes) {
		return conflicts, nil // changes nothing: no revision
	}
	rev := c.bumpLocked()
	c.deleteLocked(deletes)
	c.saveLocked(all, t, rev)
	writeRev(entries, rev)
	return conflicts, nil
}

// checkBatchLocked is the check of Batch.FailOnConflict: a
// *backend.ConflictError naming every key of b whose stored version does
// not match what b expects, sorted by key, or nil. The caller holds c.mu.
func (c *contents) checkBatchLocked(b backend.Batch) error {
	var found []backend.Conflict
	seen := map[string]bool{}
	for _, e := range b.Saves {
		want, ok := b.Expect[e.Key]
		if !ok || seen[e.Key] {
			continue
		}
		seen[e.Key] = true
		n, present := c.keys[e.Key]
		if !present {
			continue // absent as expected, or removed by another writer: saved
		}
		if v := backend.VersionOf(n.info); !want.Matches(v) {
			found = append(found, backend.Conflict{Key: e.Key, Found: v})
		}
	}
	for _, k := range b.Deletes {
		want, ok := b.ExpectDeleted[k]
		n, present := c.keys[k]
		if !ok || !present || seen[k] {
			continue // unconditional, or already gone: not a conflict
		}
		seen[k] = true
		if v := backend.VersionOf(n.info); !want.Matches(v) {
			found = append(found, backend.Conflict{Key: k, Found: v, Delete: true})
		}
	}
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b backend.Conflict) int { return strings.Compare(a.Key, b.Key) })
	return fmt.Errorf("memstore: apply: %w", &backend.ConflictError{Conflicts: found})
}

// holdsAnyLocked reports whether any of keys is in the store. The caller
// holds c.mu.
func (c *contents) holdsAnyLocked(keys []string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { _, ok := c.keys[k]; return ok })
}

// now is the time a Save stores for a zero MTime or CTime, without the
// monotonic reading (which only a time from time.Now has).
func now() time.Time { return time.Now().Round(0) }

// checkDirsLocked refuses a batch in which a non-directory would replace a
// directory entry that holds keys, in the store (but for the keys in gone,
// deleted by the same batch) or in the batch.
func (c *contents) checkDirsLocked(entries []backend.Entry, gone map[string]bool) error {
	last := make(map[string]int, len(entries))
	for i, e := range entries {
		last[e.Key] = i
	}
	for i, e := range entries {
		old, ok := c.keys[e.Key]
		if last[e.Key] != i || !ok || !old.info.Mode.IsDir() || e.Info.Mode.IsDir() {
			continue
		}
		prefix := e.Key + "/"
		held := slices.ContainsFunc(entries, func(o backend.Entry) bool { return strings.HasPrefix(o.Key, prefix) })
		for k := range c.keys {
			held = held || (strings.HasPrefix(k, prefix) && !gone[k])
		}
		if held {
			return &fs.PathError{Op: "save", Path: e.Key, Err: fmt.Errorf("a directory that still holds keys (delete them first): %w", syscall.ENOTEMPTY)}
		}
	}
	return nil
}

// saveLocked applies entries, which have been checked, at time t, as
// revision rev.
func (c *contents) saveLocked(entries []backend.Entry, t time.Time, rev int64) {
	for _, e := range entries {
		info := backend.SavedInfo(e, t)
		info.Rev = rev
		info.XAttrs = backend.CloneXAttrs(e.Info.XAttrs)
		value := bytes.Clone(e.Value)

		n := c.links[info.Link]
		if info.Link == "" || n == nil {
			n = &node{}
			if info.Link != "" {
				c.links[info.Link] = n
			}
		}
		n.info, n.value = info, value
		if old := c.keys[e.Key]; old != n {
			c.releaseLocked(old)
			n.names++
			c.keys[e.Key] = n
		}
	}
}

// releaseLocked drops one name of n (nil for none).
func (c *contents) releaseLocked(n *node) {
	if n == nil {
		return
	}
	n.names--
	if n.names == 0 && n.info.Link != "" && c.links[n.info.Link] == n {
		delete(c.links, n.info.Link)
	}
}

// Delete removes keys; keys that are not in the store are ignored.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	if err := checkKeys(keys); err != nil {
		return fmt.Errorf("memstore: delete: %w", err)
	}
	if err := s.lock(ctx, "delete"); err != nil {
		return err
	}
	defer s.c.mu.Unlock()
	if s.c.holdsAnyLocked(keys) {
		s.c.bumpLocked()
		s.c.deleteLocked(keys)
	}
	return nil
}

// deleteLocked removes keys; keys that are not in the store are ignored.
func (c *contents) deleteLocked(keys []string) {
	for _, k := range keys {
		if n, ok := c.keys[k]; ok {
			delete(c.keys, k)
			c.releaseLocked(n)
		}
	}
}

func checkKeys(keys []string) error {
	for _, k := range keys {
		if err := backend.CheckStoreKey(k); err != nil {
			return err
		}
	}
	return nil
}

// SaveSys replaces the system record name with a copy of data.
func (s *Store) SaveSys(ctx context.Context, name string, data []byte) error {
	if err := backend.ValidateKey(name); err != nil {
		return fmt.Errorf("memstore: savesys: %w", err)
	}
	if err := s.lock(ctx, "savesys"); err != nil {
		return err
	}
	defer s.c.mu.Unlock()
	s.c.sys[name] = append([]byte{}, data...)
	return nil
}

// LoadSys returns a copy of the system record name.
func (s *Store) LoadSys(ctx context.Context, name string) ([]byte, error) {
	if err := backend.ValidateKey(name); err != nil {
		return nil, fmt.Errorf("memstore: loadsys: %w", err)
	}
	if err := s.rlock(ctx, "loadsys"); err != nil {
		return nil, err
	}
	defer s.c.mu.RUnlock()
	d, ok := s.c.sys[name]
	if !ok {
		return nil, backend.NotFound("loadsys", name)
	}
	return append([]byte{}, d...), nil
}

// ListSys returns the system records whose name starts with prefix,
// sorted, with their sizes.
func (s *Store) ListSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	if err := s.rlock(ctx, "listsys"); err != nil {
		return nil, err
	}
	defer s.c.mu.RUnlock()
	var out []backend.Entry
	for name, d := range s.c.sys {
		if strings.HasPrefix(name, prefix) {
			out = append(out, backend.Entry{Key: name, Info: backend.Info{Size: int64(len(d))}})
		}
	}
	slices.SortFunc(out, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// ScanSys returns copies of the system records whose name starts with
// prefix, sorted (backend.SysScanner).
func (s *Store) ScanSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	if err := s.rlock(ctx, "scansys"); err != nil {
		return nil, err
	}
	defer s.c.mu.RUnlock()
	out := []backend.Entry{}
	for name, d := range s.c.sys {
		if strings.HasPrefix(name, prefix) {
			out = append(out, backend.Entry{Key: name, Info: backend.Info{Size: int64(len(d))}, Value: append([]byte{}, d...)})
		}
	}
	slices.SortFunc(out, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// DeleteSys removes system records; missing names are ignored.
func (s *Store) DeleteSys(ctx context.Context, names ...string) error {
	for _, n := range names {
		if err := backend.ValidateKey(n); err != nil {
			return fmt.Errorf("memstore: deletesys: %w", err)
		}
	}
	if err := s.lock(ctx, "deletesys"); err != nil {
		return err
	}
	defer s.c.mu.Unlock()
	for _, n := range names {
		delete(s.c.sys, n)
	}
	return nil
}
