package session

import (
	"bytes"
	"errors"

	"github.com/memfs/memfs/backend"
)

// A save that failed without a conflict (a network store's request timed
// out) may have been applied all the same: an etcd client whose deadline
// runs out while the server commits the transaction reports an error for
// a write the store holds. The entries stay dirty and the next flush
// sends them again, expecting the version the failed save expected; it
// then meets the session's own write as a version it did not expect.
// Taken for another writer's, it was merged into ours a second time (the
// lines of an append log twice in the store) or kept beside as a
// conflict copy of our own file.
//
// So a failed flush keeps what it sent of each key (an attempt) until the
// store shows the key's outcome: a later save of the key succeeds (the
// attempt was not applied, and never will be: its expected version is
// gone), or a conflict shows the key's stored version. That version is
// the session's own when it is an attempt, node and bytes; the flush then
// expects it, merges nothing and reports no conflict. When it is another
// writer's, that writer may have built it on an attempt it loaded (the
// other mount's merge): under the Merge policy, the newest attempt whose
// changed lines the other writer's version holds is the merge's base, so
// that the lines it wrote are not merged in again.

// attempt is what a failed flush sent of a key (see above).
type attempt struct {
	f     *file // the file the flush saved under the key
	st    stamp // the node it sent (pendingStampOf)
	value mergeBase
}

// attemptsKept bounds the attempts kept per key: a store down for long
// fails every flush, and each attempt holds a value.
const attemptsKept = 8

// keepAttemptsLocked records, for each entry of p the store refused
// without a conflict (failed), what the flush sent: it may be in the
// store all the same.
func (c *Context) keepAttemptsLocked(p *flushPlan, failed map[string]error) {
	for i, s := range p.saved {
		e := p.entries[i]
		err, bad := failed[e.Key]
		if !bad || s.alias || errors.Is(err, backend.ErrConflict) {
			continue
		}
		if c.mu.conflict.attempts == nil {
			c.mu.conflict.attempts = make(map[string][]attempt)
		}
		a := attempt{f: s.f, st: pendingStampOf(e.Info),
			value: mergeBase{value: e.Value, xattrs: toXAttrList(e.Info.XAttrs), mode: e.Info.Mode}}
		as := c.mu.conflict.attempts[e.Key]
		if len(as) == attemptsKept {
			as = append(as[:0:0], as[1:]...)
		}
		c.mu.conflict.attempts[e.Key] = append(as, a)
	}
}

// ownAttemptLocked settles the attempts of cf's key with theirs, the
// version the store holds, which a save or delete did not expect, and
// reports whether theirs is one of them, the session's own write: the
// next round then expects it, and there is nothing to resolve. f is the
// session's file under the key (have). The key's attempts are forgotten
// either way: the store has moved past the version they expected.
func (c *Context) ownAttemptLocked(cf backend.Conflict, f *file, have bool, theirs backend.Entry) bool {
	as := c.mu.conflict.attempts[cf.Key]
	if len(as) == 0 {
		return false
	}
	delete(c.mu.conflict.attempts, cf.Key)
	v := backend.VersionOf(theirs.Info)
	for i := len(as) - 1; i >= 0; i-- {
		a := as[i]
		if !bytes.Equal(a.value.value, theirs.Value) || !c.sameNode(a.st, stampOf(theirs.Info)) {
			continue
		}
		switch {
		case !have:
			if cf.Delete {
				c.mu.conflict.bases[cf.Key] = v // the delete removes our own version
			}
		case f.gen != 0:
			c.setExpectLocked(f, cf.Key, v)
			if a.f == f {
				c.keepMergeBaseLocked(f, theirs.Value, toXAttrList(theirs.Info.XAttrs), theirs.Info.Mode)
			}
		}
		return true
	}
	if have && f.gen != 0 && !cf.Delete && c.mu.conflict.mergeBase != nil && theirs.Info.Mode.IsRegular() {
		base := c.mu.conflict.mergeBase[f]
		for i := len(as) - 1; i >= 0; i-- {
			if as[i].f == f && holdsChangeOf(base.value, as[i].value.value, theirs.Value) {
				c.mu.conflict.mergeBase[f] = as[i].value
				break
			}
		}
	}
	return false
}

// holdsChangeOf reports whether theirs holds the change from base to
// ours, counted in lines: every line ours added at least as often as
// ours has it, every line ours removed at most as often; false for a
// change of no line.
func holdsChangeOf(base, ours, theirs []byte) bool {
	count := func(b []byte) map[string]int {
		m := make(map[string]int)
		for len(b) > 0 {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				i = len(b) - 1
			}
			m[string(b[:i+1])]++
			b = b[i+1:]
		}
		return m
	}
	nb, no, nt := count(base), count(ours), count(theirs)
	changed := false
	for l, n := range no {
		if n > nb[l] {
			changed = true
			if nt[l] < n {
				return false
			}
		}
	}
	for l, n := range nb {
		if no[l] < n {
			changed = true
			if nt[l] > no[l] {
				return false
			}
		}
	}
	return changed
}
