package etcdstore

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/memfs/memfs/backend"
)

// Watch reports every change of a record under the namespace (another
// client's and this store's own), from the revision of the last List or
// Walk (or from now, before any), until ctx is done or s is closed; then
// it closes the channel. The client resumes a broken watch where it
// stopped; when the changes it would resume from have been compacted away,
// Watch sends Change{Lost: true} and goes on from the oldest revision
// etcd still has.
func (s *Store) Watch(ctx context.Context) (<-chan backend.Change, error) {
	if err := s.begin(ctx, "watch"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	next := s.listRev + 1
	if s.listRev == 0 {
		next = 0 // from now
	}
	s.mu.Unlock()
	if next == 0 {
		resp, err := s.get(ctx, s.prefix+"probe", clientv3.WithCountOnly())
		if err != nil {
			return nil, mapErr("watch", err, ctx)
		}
		next = resp.Header.Revision + 1
	}
	out := make(chan backend.Change)
	wctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.life, cancel)
	s.workers.Add(1)
	go func() {
		defer s.workers.Done()
		defer close(out)
		defer stop()
		defer cancel()
		s.watch(wctx, next, out)
	}()
	return out, nil
}

// watch follows m/ from revision next until ctx is done.
func (s *Store) watch(ctx context.Context, next int64, out chan<- backend.Change) {
	dir := s.prefix + "m/"
	send := func(c backend.Change) bool {
		select {
		case out <- c:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for ctx.Err() == nil {
		wch := s.cli.Watch(clientv3.WithRequireLeader(ctx), dir, clientv3.WithPrefix(), clientv3.WithRev(next))
		for resp := range wch {
			if resp.CompactRevision != 0 {
				// The history from next on is gone: the reader
				// must compare everything.
				if !send(backend.Change{Lost: true}) {
					return
				}
				next = resp.CompactRevision
				break
			}
			if resp.Err() != nil {
				break
			}
			for _, ev := range resp.Events {
				key := string(ev.Kv.Key[len(dir):])
				next = ev.Kv.ModRevision + 1
				if backend.CheckStoreKey(key) != nil {
					continue
				}
				if !send(backend.Change{Key: key}) {
					return
				}
			}
		}
		// The channel closed: the context ended, the leader was lost,
		// or the history was compacted. Watch again from where it stopped.
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// String names the store for messages: its endpoints and namespace,
// never its credentials.
func (s *Store) String() string {
	return fmt.Sprintf("etcd %v namespace %s", s.cfg.Endpoints, s.cfg.Namespace)
}
