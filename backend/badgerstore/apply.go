package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/memfs/memfs/backend"
)

var _ backend.Batcher = (*Store)(nil)

// Apply saves b.Saves and deletes b.Deletes in one badger transaction
// (backend.Batcher): the conflict copies of the saves in b.Expect (read in
// the same transaction, see SaveIf), the saves and the deletes commit
// together or not at all. The batch is checked whole (backend.ValidateBatch,
// value sizes) before anything is written. A batch that does not fit in one
// transaction (see Transactions in the package documentation) is refused
// with backend.ErrBatchTooLarge and nothing written: Apply never splits,
// since a split batch is not atomic; Save and Delete do split.
//
// With b.FailOnConflict the versions b.Expect and b.ExpectDeleted name
// are read in the same transaction before anything is added to it, and a
// mismatch fails the batch with a *backend.ConflictError and nothing
// written. A badger store does not number its writes: Info.Rev stays 0,
// and versions compare by size and modification time.
func (s *Store) Apply(ctx context.Context, b backend.Batch) (map[string]string, error) {
	if err := s.writable("apply"); err != nil {
		return nil, err
	}
	if err := s.KeyLimit().ValidateBatch(b); err != nil {
		return nil, fmt.Errorf("badgerstore: apply: %w", err)
	}
	if err := checkValueSizes("apply", b.Saves); err != nil {
		return nil, err
	}
	if err := s.use("apply"); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("badgerstore: apply: %w", err)
	}
	if len(b.Saves) == 0 && len(b.Deletes) == 0 {
		return map[string]string{}, nil
	}
	if err := s.roomFor("apply", b.Saves); err != nil {
		return nil, err
	}
	now := time.Now()
	ops := saveOps(b.Saves, now)
	for _, k := range b.Deletes {
		ops = append(ops, op{key: k, remove: true})
	}
	if s.surelyTooLarge(ops) {
		// Refused before any read: a flush too big for one transaction
		// (2,000 notes of 2 KiB) is saved by its caller another way, and
		// must not pay for filling a transaction first.
		return nil, fmt.Errorf("badgerstore: apply: %d saves and %d deletes are more than one transaction holds: %w",
			len(b.Saves), len(b.Deletes), backend.ErrBatchTooLarge)
	}
	txn := s.db.NewTransaction(true)
	defer txn.Discard()
	// Reads in a write transaction see the store as it was when the
	// transaction began, plus its own writes, of which there are none yet.
	if b.FailOnConflict {
		if err := checkBatch(txn, b); err != nil {
			return nil, fmt.Errorf("badgerstore: apply: %w", err)
		}
	}
	copies, conflicts, err := conflictCopies(txn, b.Saves, func(i int) (backend.Version, bool) {
		v, ok := b.Expect[b.Saves[i].Key]
		return v, ok
	})
	if err != nil {
		return nil, fmt.Errorf("badgerstore: apply: %w", err)
	}
	if len(copies) > 0 {
		ops = append(saveOps(copies, now), ops...)
	}
	n, _, err := fill(txn, ops)
	if err != nil {
		return nil, fmt.Errorf("badgerstore: apply: %w", err)
	}
	if n < len(ops) {
		return nil, fmt.Errorf("badgerstore: apply: %d saves and %d deletes do not fit in one transaction (%d keys did): %w",
			len(b.Saves)+len(copies), len(b.Deletes), n, backend.ErrBatchTooLarge)
	}
	if err := txn.Commit(); err != nil {
		if errors.Is(err, badger.ErrTxnTooBig) {
			err = fmt.Errorf("%w: %w", backend.ErrBatchTooLarge, err)
		}
		return nil, fmt.Errorf("badgerstore: apply: %w", err)
	}
	s.txns.Add(1)
	return conflicts, nil
}

// surelyTooLarge reports whether ops cannot fit in one transaction, by
// badger's own reckoning of a write (key, value below the value threshold
// or a 12-byte pointer, 2 bytes of meta; a delete has no value) against
// its limits. It never refuses what badger would take: a batch it lets
// through may still fail in fill.
func (s *Store) surelyTooLarge(ops []op) bool {
	threshold := s.db.Opts().ValueThreshold
	var size, count int64
	for _, o := range ops {
		size += int64(len(valueKey(o.key))+len(metaKey(o.key))) + 4
		count += 2
		if o.remove {
			continue
		}
		size += int64(len(o.meta))
		if v := int64(len(o.value)); v < threshold {
			size += v
		} else {
			size += 12
		}
	}
	return size >= s.db.MaxBatchSize() || count >= s.db.MaxBatchCount()
}
