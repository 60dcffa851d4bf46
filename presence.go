package memfs

import (
	"context"
	"os"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/status"
)

// presence is a mount's registration with a shared store (backend.Presence):
// the other mounts of the namespace list it in .memfs/status for as long as
// it lives.
type presence struct {
	p     backend.Presence
	leave func()
}

// register announces the mount at dir, when the store knows who uses it;
// nil otherwise. A failure is logged: the mount works without it.
func (f *FS) register(dir, agent string) *presence {
	p, ok := f.store.(backend.Presence)
	if !ok {
		return nil
	}
	host, _ := os.Hostname()
	// The registration lasts as long as its context: until close. The
	// store bounds the call itself by its own timeout.
	ctx, cancel := context.WithCancel(context.Background())
	leave, err := p.Register(ctx, backend.Peer{Agent: agent, Host: host, PID: os.Getpid(), Mount: dir})
	if err != nil {
		cancel()
		f.log.Warn("not registered with the store: other mounts will not list this one", "err", err)
		return &presence{p: p}
	}
	return &presence{p: p, leave: func() { leave(); cancel() }}
}

// close withdraws the registration.
func (r *presence) close() {
	if r != nil && r.leave != nil {
		r.leave()
	}
}

// peers is the peers part of .memfs/status (agent, host and mountpoint
// are quoted there when they hold anything but plain characters: a peer
// names itself, and its line must stay one line); nil for a store that
// keeps no presence.
func (r *presence) peers() *status.Peers {
	if r == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	peers, err := r.p.Peers(ctx)
	if err != nil {
		return &status.Peers{Unknown: true}
	}
	out := &status.Peers{List: make([]status.Peer, 0, len(peers))}
	for _, p := range peers {
		out.List = append(out.List, status.Peer{Agent: p.Agent, Host: p.Host, PID: p.PID, Mount: p.Mount, Since: p.Since})
	}
	return out
}
