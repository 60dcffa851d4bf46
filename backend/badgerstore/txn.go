package badgerstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// op is the change of one key: both its records set, or both deleted.
type op struct {
	key    string
	meta   []byte
	value  []byte
	remove bool
}

// addTo adds o's two writes to txn. When the second fails, partial is
// true: the first is in txn, and since a transaction cannot take a write
// back, txn must not be committed.
func (o op) addTo(txn *badger.Txn) (partial bool, err error) {
	vk, mk := valueKey(o.key), metaKey(o.key)
	if o.remove {
		err = txn.Delete(vk)
	} else {
		err = txn.Set(vk, o.value)
	}
	if err != nil {
		return false, err
	}
	if o.remove {
		err = txn.Delete(mk)
	} else {
		err = txn.Set(mk, o.meta)
	}
	return err != nil, err
}

// write commits ops in order, in as few transactions as badger allows:
// all in one when they fit, otherwise split wherever badger reports
// ErrTxnTooBig. An op is never split: both records of a key change in the
// same transaction.
//
// Every commit is durable when it returns (SyncWrites; see the package
// documentation), so write needs no barrier of its own.
func (s *Store) write(ctx context.Context, ops []op) error {
	for len(ops) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := s.commitPrefix(ops)
		if err != nil {
			return err
		}
		ops = ops[n:]
	}
	return nil
}

// commitPrefix commits the longest prefix of ops that fits in one
// transaction and returns its length.
func (s *Store) commitPrefix(ops []op) (int, error) {
	txn := s.db.NewTransaction(true)
	defer func() { txn.Discard() }()
	n, partial, err := fill(txn, ops)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		// Not with the default memtable; with one near the smallest that
		// Open accepts, a value just under the value threshold and its
		// metadata can together exceed the limit. Fail rather than loop.
		return 0, fmt.Errorf("%s: one key does not fit in a transaction: %w", ops[0].key, badger.ErrTxnTooBig)
	}
	if partial {
		// ops[n] went in halfway. Building ops[:n] again costs a few map
		// inserts per key: badger has written nothing yet.
		txn.Discard()
		txn = s.db.NewTransaction(true)
		m, _, err := fill(txn, ops[:n])
		if err != nil {
			return 0, err
		}
		if m != n {
			return 0, fmt.Errorf("%d keys fit in a transaction, then %d: %w", n, m, badger.ErrTxnTooBig)
		}
	}
	if err := txn.Commit(); err != nil {
		return 0, err
	}
	s.txns.Add(1)
	return n, nil
}

// fill adds ops to txn until one does not fit, and returns how many went in
// whole and whether the next went in partly.
func fill(txn *badger.Txn, ops []op) (n int, partial bool, err error) {
	for i, o := range ops {
		partial, err := o.addTo(txn)
		if errors.Is(err, badger.ErrTxnTooBig) {
			return i, partial, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("%s: %w", o.key, err)
		}
	}
	return len(ops), false, nil
}
