package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/memfs/memfs/backend"
)

var _ backend.Versioned = (*Store)(nil)

// SaveIf is Save with each entry expecting its key's stored version (see
// backend.Versioned): the size and modification time in the key's
// metadata record. A version found that is not the expected one is copied
// to its conflict key in the same transactions as the save. Only one
// process opens a badger store, so a conflict means a session that did not
// see a change of its own store; the check is what a shared store will
// need everywhere.
func (s *Store) SaveIf(ctx context.Context, entries []backend.Entry, expect []backend.Version) (map[string]string, error) {
	if err := s.writable("save"); err != nil {
		return nil, err
	}
	if len(expect) != len(entries) {
		return nil, fmt.Errorf("badgerstore: SaveIf: %d entries, %d versions", len(entries), len(expect))
	}
	if err := s.KeyLimit().ValidateEntries(entries); err != nil {
		return nil, fmt.Errorf("badgerstore: save: %w", err)
	}
	if err := s.use("save"); err != nil {
		return nil, err
	}
	var copies []backend.Entry
	var conflicts map[string]string
	err := s.db.View(func(txn *badger.Txn) error {
		var err error
		copies, conflicts, err = conflictCopies(txn, entries, func(i int) (backend.Version, bool) { return expect[i], true })
		return err
	})
	s.mu.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("badgerstore: save: %w", err)
	}
	if err := s.Save(ctx, append(copies, entries...)...); err != nil {
		return nil, err
	}
	return conflicts, nil
}

// conflictCopies reads, in txn, the version stored under the key of each
// entry i for which expect(i) gives the version it expects, and returns a
// copy of each one found that is not the one expected, under its conflict
// key, with the map from key to conflict key. A key absent (or removed by
// another writer) is simply saved: no copy.
func conflictCopies(txn *badger.Txn, entries []backend.Entry, expect func(i int) (backend.Version, bool)) ([]backend.Entry, map[string]string, error) {
	var copies []backend.Entry
	conflicts := map[string]string{}
	for i, e := range entries {
		want, check := expect(i)
		if !check {
			continue
		}
		if _, done := conflicts[e.Key]; done {
			continue // a key twice in the batch: its found version is kept once
		}
		v, ok, err := storedVersion(txn, e.Key)
		if err != nil {
			return nil, nil, err
		}
		if !ok || want.Matches(v) {
			continue
		}
		found, err := load(txn, e.Key)
		if err != nil {
			return nil, nil, err
		}
		found.Key = backend.ConflictKeyWithin(e.Key, "", time.Now(), maxMemfsKeyLen)
		// The copy is a node of its own, not another name of the
		// version's hard-link group.
		found.Info.Link = ""
		copies = append(copies, found)
		conflicts[e.Key] = found.Key
	}
	return copies, conflicts, nil
}

// storedVersion reads, in txn, the version of key and whether the store
// holds it. The metadata record alone says the version; the value is not
// read.
func storedVersion(txn *badger.Txn, key string) (backend.Version, bool, error) {
	item, err := txn.Get(metaKey(key))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return backend.Version{}, false, nil
	}
	if err != nil {
		return backend.Version{}, false, err
	}
	var info backend.Info
	if err := item.Value(func(b []byte) error {
		var err error
		info, err = decodeMeta(key, b)
		return err
	}); err != nil {
		return backend.Version{}, false, err
	}
	return backend.VersionOf(info), true, nil
}

// checkBatch is the check of Batch.FailOnConflict, read in txn: a
// *backend.ConflictError naming every key of b whose stored version does
// not match what b expects, sorted by key, or nil. A key absent is no
// conflict, but where a save expects it absent: a save expecting a key
// that is gone is saved, a delete of a key that is gone does nothing.
func checkBatch(txn *badger.Txn, b backend.Batch) error {
	var found []backend.Conflict
	seen := map[string]bool{}
	check := func(key string, want backend.Version, del bool) error {
		if seen[key] {
			return nil
		}
		seen[key] = true
		v, ok, err := storedVersion(txn, key)
		if err != nil || !ok || want.Matches(v) {
			return err
		}
		found = append(found, backend.Conflict{Key: key, Found: v, Delete: del})
		return nil
	}
	for _, e := range b.Saves {
		if want, ok := b.Expect[e.Key]; ok {
			if err := check(e.Key, want, false); err != nil {
				return err
			}
		}
	}
	for _, k := range b.Deletes {
		if want, ok := b.ExpectDeleted[k]; ok {
			if err := check(k, want, true); err != nil {
				return err
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b backend.Conflict) int { return strings.Compare(a.Key, b.Key) })
	return &backend.ConflictError{Conflicts: found}
}
