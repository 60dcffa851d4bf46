package etcdstore

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/memfs/memfs/backend"
)

var _ backend.AsideMover = (*Store)(nil)

// asideDir is where MoveAside puts records: x/STAMP/{m,v}/KEY, the record
// and the inline value exactly as stored. The chunks a record there names
// are kept by Collect as a record under m/ keeps them.
const asideDir = "x/"

// MoveAside moves key's record and inline value, as stored, to
// x/STAMP/m/KEY and x/STAMP/v/KEY in one transaction that holds only if
// neither changed since they were read; the key is then gone.
func (s *Store) MoveAside(ctx context.Context, key string) (string, error) {
	if err := backend.CheckStoreKey(key); err != nil {
		return "", fmt.Errorf("etcdstore: move aside: %w", err)
	}
	if err := s.begin(ctx, "move aside"); err != nil {
		return "", err
	}
	resp, err := s.txn(ctx, nil, []clientv3.Op{clientv3.OpGet(s.meta(key)), clientv3.OpGet(s.value(key))})
	if err != nil {
		return "", mapErr("move aside", err, ctx)
	}
	m := resp.Responses[0].GetResponseRange().Kvs
	v := resp.Responses[1].GetResponseRange().Kvs
	if len(m) == 0 && len(v) == 0 {
		return "", backend.NotFound("move aside", key)
	}
	aside := s.prefix + asideDir + backend.AsideStamp(time.Now()) + "/"
	var cmps []clientv3.Cmp
	var ops []clientv3.Op
	for _, p := range []struct {
		key, sub string
		kvs      int
	}{{s.meta(key), "m/", len(m)}, {s.value(key), "v/", len(v)}} {
		if p.kvs == 0 {
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(p.key), "=", 0))
			continue
		}
		kv := m[0]
		if p.sub == "v/" {
			kv = v[0]
		}
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(p.key), "=", kv.ModRevision))
		ops = append(ops, clientv3.OpPut(aside+p.sub+key, string(kv.Value)), clientv3.OpDelete(p.key))
	}
	done, err := s.txn(ctx, cmps, ops)
	if err != nil {
		return "", mapErr("move aside", err, ctx)
	}
	if !done.Succeeded {
		return "", fmt.Errorf("etcdstore: move aside %s: another writer changed it meanwhile; nothing was moved", key)
	}
	return "etcd keys " + aside + "m/" + key + " and " + aside + "v/" + key, nil
}
