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
	link   string // the entry's hard-link group, "" for none
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
// same transaction. Nor is a hard-link group: the ops from the first name
// of a group to its last share a transaction (see units).
//
// Every commit is durable when it returns (SyncWrites; see the package
// documentation), so write needs no barrier of its own.
func (s *Store) write(ctx context.Context, ops []op) error {
	ends := units(ops)
	for len(ops) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := s.commitPrefix(ops, ends)
		if err != nil {
			return err
		}
		ops = ops[n:]
		for len(ends) > 0 && ends[0] <= n {
			ends = ends[1:]
		}
		for i := range ends {
			ends[i] -= n
		}
	}
	return nil
}

// units returns where ops may be cut between transactions: the ascending
// ends (exclusive) of the shortest runs of ops that each hold every op of
// any hard-link group they touch. Ops keep their order, so that of two ops
// of one key the later still wins.
func units(ops []op) []int {
	last := map[string]int{} // link -> index of its last op
	for i, o := range ops {
		if o.link != "" {
			last[o.link] = i
		}
	}
	var ends []int
	end := 0
	for i, o := range ops {
		if o.link != "" {
			end = max(end, last[o.link]+1)
		}
		if i+1 >= end {
			ends = append(ends, i+1)
		}
	}
	return ends
}

// commitPrefix commits the longest prefix of ops that fits in one
// transaction and ends at one of ends (see units), and returns its length.
func (s *Store) commitPrefix(ops []op, ends []int) (int, error) {
	txn := s.db.NewTransaction(true)
	defer func() { txn.Discard() }()
	n, partial, err := fill(txn, ops)
	if err != nil {
		return 0, err
	}
	cut := 0 // the last end at or before n
	for _, e := range ends {
		if e > n {
			break
		}
		cut = e
	}
	if cut == 0 {
		// Not with the default memtable; with one near the smallest that
		// Open accepts, a value just under the value threshold and its
		// metadata can together exceed the limit. A hard-link group whose
		// names' values together exceed it cannot be split either: the
		// names would disagree between transactions. Fail rather than
		// loop.
		if ops[0].link != "" {
			return 0, fmt.Errorf("%s: the names of hard-link group %q do not fit in a transaction: %w", ops[0].key, ops[0].link, badger.ErrTxnTooBig)
		}
		return 0, fmt.Errorf("%s: one key does not fit in a transaction: %w", ops[0].key, badger.ErrTxnTooBig)
	}
	if partial || cut < n {
		// ops[n] went in halfway, or ops[cut:n] are part of a group that
		// goes on past n. Building ops[:cut] again costs a few map
		// inserts per key: badger has written nothing yet.
		txn.Discard()
		txn = s.db.NewTransaction(true)
		m, _, err := fill(txn, ops[:cut])
		if err != nil {
			return 0, err
		}
		if m != cut {
			return 0, fmt.Errorf("%d keys fit in a transaction, then %d: %w", cut, m, badger.ErrTxnTooBig)
		}
		n = cut
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
