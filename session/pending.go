package session

import "github.com/memfs/memfs/backend"

// This file answers what the store has not seen yet: the Pending view.

// Dirty reports whether key has changes the store has not seen.
func (p *Pending) Dirty(key string) bool {
	c := p.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, ok := c.files[key]
	return ok && f.gen != 0
}

// Removed reports whether key was removed in the session and the store
// has not been told yet.
func (p *Pending) Removed(key string) bool {
	c := p.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.removed[key]
	return ok
}

// Unflushed returns the session's unflushed changes: every dirty,
// non-hidden file with its Info and loaded value (which the caller must not
// modify; not redacted), and the keys removed since the last flush. It
// takes the read lock only (see Entry).
func (p *Pending) Unflushed() (dirty []backend.Entry, removed []string) {
	c := p.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	for f := range c.dirty {
		if !f.loaded {
			continue
		}
		for _, k := range f.names() { // every name of a node with hard links
			if !c.Local(k) {
				dirty = append(dirty, f.entryRLocked(k))
			}
		}
	}
	for k := range c.removed {
		if !c.Local(k) {
			removed = append(removed, k)
		}
	}
	return dirty, removed
}
