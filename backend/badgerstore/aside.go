package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/memfs/memfs/backend"
)

var _ backend.AsideMover = (*Store)(nil)

// asidePrefix is where MoveAside puts records: x/STAMP/m/KEY and
// x/STAMP/v/KEY, the metadata record and the value as stored. List and
// Walk read m/ alone, so they never show them.
const asidePrefix = "x/"

// MoveAside moves key's metadata record and value, as stored, under
// x/STAMP/ in one transaction; the key is then gone. A value the value
// log cannot give (lost to a truncated value log) is not moved: moving
// the key would drop what is left of it, so MoveAside fails and changes
// nothing.
func (s *Store) MoveAside(ctx context.Context, key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", fmt.Errorf("badgerstore: move aside: %w", err)
	}
	if err := s.use("move aside"); err != nil {
		return "", err
	}
	defer s.mu.RUnlock()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	aside := asidePrefix + backend.AsideStamp(time.Now()) + "/"
	err := s.db.Update(func(txn *badger.Txn) error {
		raw := map[string][]byte{}
		for _, k := range [][]byte{metaKey(key), valueKey(key)} {
			item, err := txn.Get(k)
			if errors.Is(err, badger.ErrKeyNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if raw[string(k)], err = item.ValueCopy(nil); err != nil {
				return fmt.Errorf("the value log cannot give its bytes (%v); moving the key would drop what is left of them, so it stays", err)
			}
		}
		m, ok := raw[string(metaKey(key))]
		if !ok {
			return backend.NotFound("move aside", key)
		}
		if info, err := decodeMeta(key, m); err == nil && int64(len(raw[string(valueKey(key))])) != info.Size {
			return fmt.Errorf("the value log gives %d of its %d bytes; moving the key would drop what is left of them, so it stays",
				len(raw[string(valueKey(key))]), info.Size)
		}
		for k, b := range raw {
			if err := txn.Set([]byte(aside+k), b); err != nil {
				return err
			}
			if err := txn.Delete([]byte(k)); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, backend.ErrKeyNotFound) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("badgerstore: move aside %s: %w", key, err)
	}
	return "badger keys " + aside + metaPrefix + key + " and " + aside + valuePrefix + key + " in " + s.dir, nil
}
