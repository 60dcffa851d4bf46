package dirstore

import (
	"context"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

var _ backend.Spacer = (*Store)(nil)

// Space reports the free space and inodes of the filesystem that holds
// the store, for an unprivileged writer (statfs f_bavail, f_favail). The
// store's own usage would take a walk of the tree: Used is -1.
func (s *Store) Space(ctx context.Context) (backend.Space, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(s.rfd, &st); err != nil {
		return backend.Space{}, fmt.Errorf("dirstore: statfs %s: %w", s.dir, err)
	}
	return backend.Space{Used: -1, Avail: int64(st.Bavail) * st.Bsize, Files: int64(st.Ffree)}, nil
}
