package badgerstore

import "path/filepath"

// LockPath is memfs's lock file of the store at dir: it holds the PID of
// the process that holds the store (see Open).
func LockPath(dir string) string { return filepath.Join(dir, lockName) }
