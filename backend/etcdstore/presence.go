package etcdstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/memfs/memfs/backend"
)

// leaseTTL is how long a registration outlives its process, in seconds.
const leaseTTL = 10

// presence is a store's registrations, all on one lease that the store
// keeps alive; when the lease is lost (etcd was unreachable for longer
// than its TTL) a new one is granted and every live registration is put
// back on it.
type presence struct {
	mu    sync.Mutex // guards the fields below
	lease clientv3.LeaseID
	regs  map[string]backend.Peer // live registrations by ID
	wake  chan struct{}           // cap 1: a registration was added
}

// Register announces p (as p/<id>, JSON) until ctx is done, s is closed or
// leave is called.
func (s *Store) Register(ctx context.Context, p backend.Peer) (func(), error) {
	if err := s.begin(ctx, "register"); err != nil {
		return nil, err
	}
	var id [12]byte
	rand.Read(id[:])
	p.ID = hex.EncodeToString(id[:])
	p.Since = time.Now().UTC().Round(0)
	pr, lease, err := s.lease(ctx)
	if err != nil {
		return nil, mapErr("register", err, ctx)
	}
	if err := s.putPeer(ctx, p, lease); err != nil {
		return nil, mapErr("register", err, ctx)
	}
	pr.mu.Lock()
	pr.regs[p.ID] = p
	pr.mu.Unlock()

	var once sync.Once
	leave := func() {
		once.Do(func() {
			pr.mu.Lock()
			delete(pr.regs, p.ID)
			pr.mu.Unlock()
			dctx, cancel := context.WithTimeout(context.Background(), s.cfg.requestTimeout())
			defer cancel()
			s.cli.Delete(dctx, s.peer(p.ID)) // best effort: the lease ends it anyway
		})
	}
	stop := context.AfterFunc(ctx, leave)
	return func() { stop(); leave() }, nil
}

func (s *Store) putPeer(ctx context.Context, p backend.Peer, lease clientv3.LeaseID) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	rctx, cancel := s.req(ctx)
	defer cancel()
	_, err = s.cli.Put(rctx, s.peer(p.ID), string(b), clientv3.WithLease(lease))
	return err
}

// lease returns the store's presence and its lease (which the
// registrations and the intents of saves in progress are on), granting it
// and starting to keep it alive when there is none.
func (s *Store) lease(ctx context.Context) (*presence, clientv3.LeaseID, error) {
	s.mu.Lock()
	pr := s.presence
	if pr == nil {
		pr = &presence{regs: map[string]backend.Peer{}, wake: make(chan struct{}, 1)}
		s.presence = pr
		s.workers.Add(1)
		go func() {
			defer s.workers.Done()
			s.keepPresence(pr)
		}()
	}
	s.mu.Unlock()
	lease, err := s.ensureLease(ctx, pr)
	return pr, lease, err
}

// ensureLease returns the store's lease, granting one (and starting to
// keep it alive) when there is none.
func (s *Store) ensureLease(ctx context.Context, pr *presence) (clientv3.LeaseID, error) {
	pr.mu.Lock()
	lease := pr.lease
	pr.mu.Unlock()
	if lease != 0 {
		return lease, nil
	}
	rctx, cancel := s.req(ctx)
	defer cancel()
	g, err := s.cli.Grant(rctx, leaseTTL)
	if err != nil {
		return 0, err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.lease != 0 { // another Register granted one meanwhile
		rctx2, cancel2 := s.req(context.Background())
		defer cancel2()
		s.cli.Revoke(rctx2, g.ID)
		return pr.lease, nil
	}
	pr.lease = g.ID
	select {
	case pr.wake <- struct{}{}:
	default:
	}
	return g.ID, nil
}

// keepPresence keeps the lease alive until the store closes; when the
// keep-alive ends while the store lives (the lease expired), it grants a
// new lease and puts every registration back.
func (s *Store) keepPresence(pr *presence) {
	for s.life.Err() == nil {
		pr.mu.Lock()
		lease := pr.lease
		pr.mu.Unlock()
		if lease == 0 {
			select {
			case <-pr.wake:
				continue
			case <-s.life.Done():
				return
			}
		}
		ka, err := s.cli.KeepAlive(s.life, lease)
		if err == nil {
			for range ka { // drain the answers until the keep-alive ends
			}
		}
		if s.life.Err() != nil {
			return
		}
		// The lease is gone (expired while etcd was away): a new one,
		// and every registration put back on it.
		pr.mu.Lock()
		if pr.lease == lease {
			pr.lease = 0
		}
		pr.mu.Unlock()
		for s.life.Err() == nil {
			if err := s.restorePresence(pr); err == nil {
				break
			}
			select {
			case <-s.life.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}
}

func (s *Store) restorePresence(pr *presence) error {
	lease, err := s.ensureLease(s.life, pr)
	if err != nil {
		return err
	}
	pr.mu.Lock()
	regs := make([]backend.Peer, 0, len(pr.regs))
	for _, p := range pr.regs {
		regs = append(regs, p)
	}
	pr.mu.Unlock()
	for _, p := range regs {
		if err := s.putPeer(s.life, p, lease); err != nil {
			return err
		}
	}
	return nil
}

// revoke ends the store's lease (Close): its registrations go at once.
func (pr *presence) revoke(s *Store) {
	pr.mu.Lock()
	lease := pr.lease
	pr.mu.Unlock()
	if lease == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.requestTimeout())
	defer cancel()
	s.cli.Revoke(ctx, lease)
}

// Peers returns the live registrations, sorted by ID.
func (s *Store) Peers(ctx context.Context) ([]backend.Peer, error) {
	if err := s.begin(ctx, "peers"); err != nil {
		return nil, err
	}
	var out []backend.Peer
	_, err := s.rangeEach(ctx, s.prefix+"p/", 1024, false, func(kv *mvccpb.KeyValue) error {
		var p backend.Peer
		if json.Unmarshal(kv.Value, &p) == nil && p.ID != "" {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, mapErr("peers", err, ctx)
	}
	slices.SortFunc(out, func(a, b backend.Peer) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}
