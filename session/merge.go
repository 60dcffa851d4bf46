package session

import (
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/merge3"
)

// mergeText is the three-way merge of the Merge policy (internal/merge3,
// line by line; concurrent appends give theirs' lines, then ours): ok
// false (an overlap, a binary value) keeps both.
func mergeText(base, ours, theirs []byte) (merged []byte, ok bool) {
	return merge3.Merge(base, ours, theirs)
}

// premerged is a text merge made before the session's lock is taken
// (premerge), for mergeLocked to use if the file and its base are still
// what it merged: the merge of two large values takes long (~0.5 s for
// two of 1 MiB), and under the lock every request of the mount would
// wait for it.
type premerged struct {
	f          *file
	ver        uint32
	base, ours []byte
	merged     []byte
	ok         bool
}

// premerge merges theirs, another writer's version of a file with
// unflushed changes, into the session's under the Merge policy, holding
// the lock only to take the two values and the base (shared: a later
// write copies them). nil when there is nothing to merge ahead.
func (c *Context) premerge(theirs backend.Entry) *premerged {
	if c.opts.OnConflict != Merge || !theirs.Info.Mode.IsRegular() {
		return nil
	}
	c.mu.RLock()
	f, ok := c.mu.tree.files[theirs.Key]
	if !ok || f.gen == 0 || !f.loaded || !f.mode.IsRegular() {
		c.mu.RUnlock()
		return nil
	}
	base, ok := c.mu.conflict.mergeBase[f]
	if !ok {
		c.mu.RUnlock()
		return nil // mergeLocked finds another base, or none
	}
	p := &premerged{f: f, ver: f.ver, base: base.value, ours: f.shareRLocked()}
	c.mu.RUnlock()
	mergeHook()
	p.merged, p.ok = mergeText(p.base, p.ours, theirs.Value)
	return p
}

// of is the premerge's result, if it was made of f's value and base as
// they are (done).
func (p *premerged) of(f *file, base []byte) (merged []byte, ok, done bool) {
	if p == nil || p.f != f || p.ver != f.ver || !same(p.base, base) || !same(p.ours, f.data) {
		return nil, false, false
	}
	return p.merged, p.ok, true
}

// same reports whether a and b are one slice (the same array and length).
func same(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// mergeHook is called before premerge's text merge (tests hold it there).
var mergeHook = func() {}
