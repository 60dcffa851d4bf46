package session

// This file holds what the store has not seen yet: the pending part of
// the session's state, and the Pending view of it.

import (
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// pendingState is what the next flush sends (guarded by Context.mu).
// Every change takes a generation; a flush clears what it saved at the
// generation it saw, so a change made while it ran stays.
type pendingState struct {
	dirty   map[*file]struct{} // files with unflushed changes
	ddirty  map[*dir]struct{}  // directories with unflushed attribute changes
	removed map[string]uint64  // keys to delete from the store -> generation
	// gone holds stored keys whose file was removed, with who removed
	// it, until a flush deletes them (a delete event).
	gone map[string]*meta.WriterInfo
	gen  uint64 // last generation handed out
}

// nextGenLocked hands out a generation.
func (p *pendingState) nextGenLocked() uint64 {
	p.gen++
	return p.gen
}

// removeLocked schedules key's deletion from the store, at a new
// generation.
func (p *pendingState) removeLocked(key string) {
	p.removed[key] = p.nextGenLocked()
}

// Dirty reports whether key has changes the store has not seen.
func (p *Pending) Dirty(key string) bool {
	c := p.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, ok := c.mu.tree.files[key]
	return ok && f.gen != 0
}

// Removed reports whether key was removed in the session and the store
// has not been told yet.
func (p *Pending) Removed(key string) bool {
	c := p.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.mu.pending.removed[key]
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
	for f := range c.mu.pending.dirty {
		if !f.loaded {
			continue
		}
		for _, k := range f.names() { // every name of a node with hard links
			if !c.Local(k) {
				dirty = append(dirty, f.entryRLocked(k))
			}
		}
	}
	for k := range c.mu.pending.removed {
		if !c.Local(k) {
			removed = append(removed, k)
		}
	}
	return dirty, removed
}
