package etcdstore

import "github.com/memfs/memfs/backend"

// maxKeyLen is the longest key the store holds. etcd has no key size limit
// of its own, but one request carries at most --max-request-bytes (1.5 MiB
// by default), and a save names its key in up to eight records of one
// transaction (m/ and v/, compared and written, and a conflict copy's):
// 32 KiB keys leave most of a transaction to values.
const maxKeyLen = 32 << 10

var _ backend.KeyLimiter = (*Store)(nil)

// KeyLimit is the longest key a transaction carries with room for values
// (backend.KeyLimiter). Save, SaveIf and Apply refuse a longer key with
// backend.ErrKeyTooLong, naming the limit.
func (s *Store) KeyLimit() backend.KeyLimit {
	return backend.KeyLimit{Max: maxKeyLen, Store: "etcd", Why: "a key is named up to 8 times in one transaction, and etcd's --max-request-bytes is 1.5 MiB by default"}
}
