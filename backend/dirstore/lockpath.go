package dirstore

import "path/filepath"

// LockPath is the lock file of the store at root: it holds the PID of the
// process that holds the store (see Open).
func LockPath(root string) string { return filepath.Join(root, lockName) }
