package badgerstore

// Commits returns how many write transactions s has committed since Open,
// for the tests of package badgerstore_test (a session's flush counted in
// transactions).
func Commits(s *Store) int64 { return s.txns.Load() }
