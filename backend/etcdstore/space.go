package etcdstore

import (
	"context"
	"fmt"

	"github.com/memfs/memfs/backend"
)

var _ backend.Spacer = (*Store)(nil)

// DefaultQuota is etcd's own default backend quota (--quota-backend-bytes
// unset: 2 GiB). Servers before 3.6 do not report their quota; Space then
// takes this one, and says so in Space's doc, as df cannot.
const DefaultQuota = 2 << 30

// Space reports the etcd database's size and what its quota leaves, from
// one Status call to the first endpoint. The database is the whole
// server's: other namespaces and other programs' keys count in Used, as
// they count against the quota. A server that does not report its quota
// (etcd before 3.6) is taken to have etcd's default (DefaultQuota).
func (s *Store) Space(ctx context.Context) (backend.Space, error) {
	ep := s.cli.Endpoints()
	if len(ep) == 0 {
		return backend.Space{}, fmt.Errorf("etcdstore: status: %w", backend.ErrUnavailable)
	}
	st, err := s.cli.Status(ctx, ep[0])
	if err != nil {
		return backend.Space{}, fmt.Errorf("etcdstore: status of %s: %w: %w", ep[0], backend.ErrUnavailable, err)
	}
	quota := st.DbSizeQuota
	if quota <= 0 {
		quota = DefaultQuota
	}
	return backend.Space{Used: st.DbSize, Avail: max(quota-st.DbSize, 0), Files: -1}, nil
}
