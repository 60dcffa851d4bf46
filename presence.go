package memfs

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
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

// status is the peers part of .memfs/status: "peers: N", then one
// "peer: AGENT@HOST pid PID MOUNT since TIME" line each. Agent, host and
// mountpoint are quoted when they hold anything but plain characters: a
// peer names itself, and its line must stay one line.
func (r *presence) status() string {
	if r == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	peers, err := r.p.Peers(ctx)
	if err != nil {
		return "peers: unknown (the store did not answer)\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "peers: %d\n", len(peers))
	for _, p := range peers {
		agent := p.Agent
		if agent == "" {
			agent = "-"
		}
		fmt.Fprintf(&b, "peer: %s@%s pid %d %s since %s\n", plain(agent), plain(p.Host), p.PID, plain(p.Mount),
			p.Since.UTC().Format(time.RFC3339))
	}
	return b.String()
}

// plain is s as it is when it holds only printable, space-free
// characters, else quoted.
func plain(s string) string {
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == '"' || r == '\\' || !(r < 0x80 || r >= 0xa0) {
			return fmt.Sprintf("%q", s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}
