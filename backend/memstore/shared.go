package memstore

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/memfs/memfs/backend"
)

var (
	_ backend.SysSwapper = (*Store)(nil)
	_ backend.Presence   = (*Store)(nil)
)

// Rev returns the revision of the last write of keys (0 before the
// first).
func (s *Store) Rev() int64 {
	s.c.mu.RLock()
	defer s.c.mu.RUnlock()
	return s.c.rev
}

// SwapSys saves puts and deletes dels, in one atomic step, if the system
// record guard holds exactly old (nil: guard is absent; an empty non-nil
// old: guard is present and empty), and reports whether it did
// (backend.SysSwapper). A name both put and deleted is refused with an
// error wrapping backend.ErrSavedAndDeleted.
func (s *Store) SwapSys(ctx context.Context, guard string, old []byte, puts map[string][]byte, dels []string) (bool, error) {
	names := append([]string{guard}, dels...)
	for n := range puts {
		names = append(names, n)
	}
	for _, n := range names {
		if err := backend.ValidateKey(n); err != nil {
			return false, fmt.Errorf("memstore: swapsys: %w", err)
		}
	}
	for _, n := range dels {
		if _, ok := puts[n]; ok {
			return false, &fs.PathError{Op: "swapsys", Path: n, Err: backend.ErrSavedAndDeleted}
		}
	}
	if err := s.lock(ctx, "swapsys"); err != nil {
		return false, err
	}
	defer s.c.mu.Unlock()
	cur, ok := s.c.sys[guard]
	if ok != (old != nil) || !bytes.Equal(cur, old) {
		return false, nil
	}
	for _, n := range dels {
		delete(s.c.sys, n)
	}
	for n, d := range puts {
		s.c.sys[n] = append([]byte{}, d...)
	}
	return true, nil
}

// registration is one Register: the peer, and how it ends.
type registration struct {
	peer  backend.Peer
	owner *Store // nil for an Other's
	// stop releases the watch of the registration's context.
	stop func() bool
}

// Register announces p until ctx is done, the Store is closed or leave is
// called (backend.Presence). IDs are "mem-" and a number that grows with
// each registration over the contents, so Peers lists them in the order
// they registered.
func (s *Store) Register(ctx context.Context, p backend.Peer) (leave func(), err error) {
	if err := s.lock(ctx, "register"); err != nil {
		return nil, err
	}
	defer s.c.mu.Unlock()
	return s.c.registerLocked(ctx, p, s), nil
}

// Register announces p as another process that has the contents open
// would, until ctx is done or leave is called.
func (o *Other) Register(ctx context.Context, p backend.Peer) (leave func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o.c.mu.Lock()
	defer o.c.mu.Unlock()
	return o.c.registerLocked(ctx, p, nil), nil
}

// registerLocked adds p, owned by owner, until ctx is done or the
// returned function is called. The caller holds c.mu.
func (c *contents) registerLocked(ctx context.Context, p backend.Peer, owner *Store) func() {
	c.lastPeer++
	p.ID = fmt.Sprintf("mem-%012d", c.lastPeer)
	p.Since = now()
	if c.peers == nil {
		c.peers = map[string]*registration{}
	}
	r := &registration{peer: p, owner: owner}
	c.peers[p.ID] = r
	leave := func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.leaveLocked(p.ID)
	}
	// AfterFunc runs leave on a goroutine of its own, never under c.mu.
	r.stop = context.AfterFunc(ctx, leave)
	return leave
}

// leaveLocked removes the registration id, if it is still there. The
// caller holds c.mu.
func (c *contents) leaveLocked(id string) {
	if r, ok := c.peers[id]; ok {
		delete(c.peers, id)
		r.stop()
	}
}

// leaveAllLocked removes the registrations of s (it is closing). The
// caller holds c.mu.
func (c *contents) leaveAllLocked(s *Store) {
	for id, r := range c.peers {
		if r.owner == s {
			c.leaveLocked(id)
		}
	}
}

// Peers returns the live registrations over the contents, sorted by ID.
func (s *Store) Peers(ctx context.Context) ([]backend.Peer, error) {
	if err := s.rlock(ctx, "peers"); err != nil {
		return nil, err
	}
	defer s.c.mu.RUnlock()
	out := make([]backend.Peer, 0, len(s.c.peers))
	for _, r := range s.c.peers {
		out = append(out, r.peer)
	}
	slices.SortFunc(out, func(a, b backend.Peer) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}
