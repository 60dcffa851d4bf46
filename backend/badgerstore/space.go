package badgerstore

import (
	"context"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

var _ backend.Spacer = (*Store)(nil)

// Space reports the bytes badger's tables and value logs take (its own
// counters, refreshed by badger about once a minute), and the free space
// of the filesystem that holds the store less the reserve every write
// leaves (see room).
func (s *Store) Space(ctx context.Context) (backend.Space, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(s.dir, &st); err != nil {
		return backend.Space{}, fmt.Errorf("badgerstore: statfs %s: %w", s.dir, err)
	}
	lsm, vlog := s.db.Size()
	return backend.Space{Used: lsm + vlog, Avail: max(int64(st.Bavail)*st.Bsize-s.reserve, 0), Files: -1}, nil
}
