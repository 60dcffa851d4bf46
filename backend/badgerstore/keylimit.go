package badgerstore

import "github.com/memfs/memfs/backend"

// maxMemfsKeyLen is the longest memfs key the store holds: badger refuses a record
// name over 65,000 bytes (badger v4, txn.go: maxKeySize), and the longest
// name memfs makes of a key is its copy moved aside, "x/STAMP/m/KEY".
const maxMemfsKeyLen = 65000 - len(asidePrefix) - len("20060102T150405.000000000Z") - len("/m/")

var _ backend.KeyLimiter = (*Store)(nil)

// KeyLimit is badger's key size limit less memfs's record prefix
// (backend.KeyLimiter). Save, SaveIf and Apply refuse a longer key with
// backend.ErrKeyTooLong, naming the limit.
func (s *Store) KeyLimit() backend.KeyLimit {
	return backend.KeyLimit{Max: maxMemfsKeyLen, Store: "badger", Why: "badger's key size limit of 65000 bytes, less memfs's record prefix"}
}
