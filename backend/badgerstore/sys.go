package badgerstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/memfs/memfs/backend"
)

// System records live under their own prefixes, like keys: "sm/"+name holds
// the record's size (8 bytes), "sv/"+name its bytes, both set in one
// transaction. ListSys reads the size records only, so listing the chunks
// of a long event log reads none of them.
const (
	sysMetaPrefix  = "sm/"
	sysValuePrefix = "sv/"
)

func checkSys(op, name string) error {
	if err := backend.ValidateKey(name); err != nil {
		return fmt.Errorf("badgerstore: %s: %w", op, err)
	}
	return nil
}

// SaveSys replaces the record in one durable transaction.
func (s *Store) SaveSys(ctx context.Context, name string, data []byte) error {
	if err := s.writable("save a system record"); err != nil {
		return err
	}
	if err := checkSys("save", name); err != nil {
		return err
	}
	if len(data) > MaxValueSize {
		return &fs.PathError{Op: "save", Path: name, Err: fmt.Errorf("record of %d bytes is over the limit of %d", len(data), MaxValueSize)}
	}
	if err := s.use("save"); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.room("save", name, int64(len(name)+len(data))+128); err != nil {
		return err
	}
	s.sysMu.Lock()
	defer s.sysMu.Unlock()
	err := s.db.Update(func(txn *badger.Txn) error {
		if err := txn.Set([]byte(sysValuePrefix+name), data); err != nil {
			return err
		}
		return txn.Set([]byte(sysMetaPrefix+name), binary.BigEndian.AppendUint64(nil, uint64(len(data))))
	})
	if err != nil {
		return &fs.PathError{Op: "save", Path: name, Err: err}
	}
	s.txns.Add(1)
	return nil
}

// LoadSys returns a copy of the record.
func (s *Store) LoadSys(ctx context.Context, name string) ([]byte, error) {
	if err := checkSys("load", name); err != nil {
		return nil, err
	}
	if err := s.use("load"); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	var out []byte
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(sysValuePrefix + name))
		if err != nil {
			return err
		}
		out, err = valueCopy(item)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, backend.NotFound("load", name)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "load", Path: name, Err: err}
	}
	if out == nil {
		out = []byte{}
	}
	return out, nil
}

// ListSys iterates the size records under prefix.
func (s *Store) ListSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	if err := s.use("list"); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := []backend.Entry{}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(sysMetaPrefix + prefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			name := strings.TrimPrefix(string(item.Key()), sysMetaPrefix)
			var size int64
			err := item.Value(func(b []byte) error {
				if len(b) != 8 {
					return fmt.Errorf("system record %s: size record of %d bytes", name, len(b))
				}
				size = int64(binary.BigEndian.Uint64(b))
				return nil
			})
			if err != nil {
				return err
			}
			out = append(out, backend.Entry{Key: name, Info: backend.Info{Size: size}})
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("badgerstore: list system records: %w", err)
	}
	return out, nil
}

// DeleteSys removes records in one durable transaction.
func (s *Store) DeleteSys(ctx context.Context, names ...string) error {
	if err := s.writable("delete a system record"); err != nil {
		return err
	}
	for _, n := range names {
		if err := checkSys("delete", n); err != nil {
			return err
		}
	}
	if err := s.use("delete"); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	s.sysMu.Lock()
	defer s.sysMu.Unlock()
	err := s.db.Update(func(txn *badger.Txn) error {
		for _, n := range names {
			if err := txn.Delete([]byte(sysValuePrefix + n)); err != nil {
				return err
			}
			if err := txn.Delete([]byte(sysMetaPrefix + n)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("badgerstore: delete system records: %w", err)
	}
	s.txns.Add(1)
	return nil
}

var _ backend.SysSwapper = (*Store)(nil)

// SwapSys saves puts and deletes dels if the record guard holds exactly
// old (nil: absent), all in one durable transaction, and reports whether
// it did (backend.SysSwapper). A name both put and deleted is refused
// with an error wrapping backend.ErrSavedAndDeleted.
func (s *Store) SwapSys(ctx context.Context, guard string, old []byte, puts map[string][]byte, dels []string) (bool, error) {
	if err := s.writable("swap system records"); err != nil {
		return false, err
	}
	if err := checkSys("swap", guard); err != nil {
		return false, err
	}
	var need int64 = 128
	for n, d := range puts {
		if err := checkSys("swap", n); err != nil {
			return false, err
		}
		if len(d) > MaxValueSize {
			return false, &fs.PathError{Op: "swap", Path: n, Err: fmt.Errorf("record of %d bytes is over the limit of %d", len(d), MaxValueSize)}
		}
		need += int64(len(n)+len(d)) + 128
	}
	for _, n := range dels {
		if err := checkSys("swap", n); err != nil {
			return false, err
		}
		if _, ok := puts[n]; ok {
			return false, &fs.PathError{Op: "swap", Path: n, Err: backend.ErrSavedAndDeleted}
		}
	}
	if err := s.use("swap"); err != nil {
		return false, err
	}
	defer s.mu.RUnlock()
	if err := s.room("swap", guard, need); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.sysMu.Lock()
	defer s.sysMu.Unlock()
	swapped := false
	err := s.db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(sysValuePrefix + guard))
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
			if old != nil {
				return nil
			}
		case err != nil:
			return err
		default:
			cur, err := valueCopy(item)
			if err != nil {
				return err
			}
			if old == nil || !bytes.Equal(cur, old) {
				return nil
			}
		}
		for _, n := range dels {
			if err := txn.Delete([]byte(sysValuePrefix + n)); err != nil {
				return err
			}
			if err := txn.Delete([]byte(sysMetaPrefix + n)); err != nil {
				return err
			}
		}
		for n, d := range puts {
			if err := txn.Set([]byte(sysValuePrefix+n), d); err != nil {
				return err
			}
			if err := txn.Set([]byte(sysMetaPrefix+n), binary.BigEndian.AppendUint64(nil, uint64(len(d)))); err != nil {
				return err
			}
		}
		swapped = true
		return nil
	})
	if err != nil {
		return false, &fs.PathError{Op: "swap", Path: guard, Err: err}
	}
	if swapped {
		s.txns.Add(1)
	}
	return swapped, nil
}

var _ backend.SysScanner = (*Store)(nil)

// ScanSys iterates the records' bytes under prefix in one read
// transaction (backend.SysScanner).
func (s *Store) ScanSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	if err := s.use("scan"); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := []backend.Entry{}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(sysValuePrefix + prefix), PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			name := strings.TrimPrefix(string(item.Key()), sysValuePrefix)
			b, err := valueCopy(item)
			if err != nil {
				return &fs.PathError{Op: "scan", Path: name, Err: err}
			}
			if b == nil {
				b = []byte{}
			}
			out = append(out, backend.Entry{Key: name, Info: backend.Info{Size: int64(len(b))}, Value: b})
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("badgerstore: scan system records: %w", err)
	}
	return out, nil
}
