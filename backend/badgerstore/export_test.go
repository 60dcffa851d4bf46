package badgerstore

import badger "github.com/dgraph-io/badger/v4"

// Commits returns how many write transactions s has committed since Open,
// for the tests of package badgerstore_test (a session's flush counted in
// transactions).
func Commits(s *Store) int64 { return s.txns.Load() }

// PutRawMeta replaces key's metadata record with b, as damage would.
func PutRawMeta(s *Store, key string, b []byte) error {
	return s.db.Update(func(txn *badger.Txn) error { return txn.Set(metaKey(key), b) })
}
