package badgerstore

import (
	"context"
	"errors"
	"fmt"
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
	if len(expect) != len(entries) {
		return nil, fmt.Errorf("badgerstore: SaveIf: %d entries, %d versions", len(entries), len(expect))
	}
	if err := backend.ValidateEntries(entries); err != nil {
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
		// The metadata record alone says the version; the value is read
		// only for a conflict copy.
		item, err := txn.Get(metaKey(e.Key))
		if errors.Is(err, badger.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		var info backend.Info
		if err := item.Value(func(b []byte) error {
			var err error
			info, err = decodeMeta(e.Key, b)
			return err
		}); err != nil {
			return nil, nil, err
		}
		if backend.VersionOf(info) == want {
			continue
		}
		found, err := load(txn, e.Key)
		if err != nil {
			return nil, nil, err
		}
		found.Key = backend.ConflictKey(e.Key, time.Now())
		// The copy is a node of its own, not another name of the
		// version's hard-link group.
		found.Info.Link = ""
		copies = append(copies, found)
		conflicts[e.Key] = found.Key
	}
	return copies, conflicts, nil
}
