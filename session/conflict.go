package session

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/merge3"
	"github.com/memfs/memfs/meta"
)

// conflictState is what the conflict policy needs (guarded by
// Context.mu).
type conflictState struct {
	// bases holds the store versions of keys whose file was removed or
	// replaced in the session, until a flush deletes or saves them.
	bases map[string]backend.Version
	// events are the conflict events of resolutions whose flush has
	// not succeeded yet (a policy's).
	events []Event
	// mergeBase holds, under the Merge policy, the value (and attributes
	// and mode) the store held when each loaded regular file was read or
	// last saved: the base of a three-way merge. Clean files share it
	// with their value.
	mergeBase map[*file]mergeBase
	// watchCopies maps a key to the conflict copy External.Apply last
	// made of it, until a flush that saves the key settles it (settle.go).
	watchCopies map[string]watchCopy
	// replaced holds, under the Merge policy, the merge base of a file
	// removed from the key it was stored under (an editor's rename of a
	// temp file over it: sed -i, atomic saves), with the store version
	// it was the base of: the base of a merge of the file that takes the
	// key next, whose save expects that version. A flush that saves or
	// deletes the key forgets it.
	replaced map[string]replacedBase
	// attempts holds, per key, what failed flushes sent whose outcome
	// the store has not shown yet (attempt.go).
	attempts map[string][]attempt
}

// replacedBase is the merge base of a replaced file (conflictState.replaced).
type replacedBase struct {
	version backend.Version // the store version the file was loaded from or saved as
	base    mergeBase
}

// keepReplacedLocked records the merge base of f, stored under from, as it
// leaves that key (removeNameLocked); Merge policy only.
func (c *Context) keepReplacedLocked(f *file, from string) {
	if mb, ok := c.mu.conflict.mergeBase[f]; ok && from != "" {
		if c.mu.conflict.replaced == nil {
			c.mu.conflict.replaced = make(map[string]replacedBase)
		}
		c.mu.conflict.replaced[from] = replacedBase{version: f.base, base: mb}
	}
}

// takeEventsLocked returns the conflict events kept for the flush that
// succeeds, and forgets them.
func (cs *conflictState) takeEventsLocked() []Event {
	evs := cs.events
	cs.events = nil
	return evs
}

// Conflicts on a shared store, under a ConflictPolicy (Options.OnConflict).
//
// A flush under a policy is one Apply with Batch.FailOnConflict: every
// save states the version it replaces (the version the file was loaded
// from or last saved as; absent for a new file), every delete the version
// it removes. When another writer changed any of those keys, the store
// writes nothing and names them (*backend.ConflictError); the session
// loads the other writer's version of each ("theirs"), resolves it by the
// policy, and flushes again. Conflict resolution changes only the session;
// the store learns the outcome from the next round. A round that meets
// conflicts again goes round again: conflictHotRounds of them at once,
// then with a growing, jittered pause, and past conflictRounds the flush
// falls back to KeepBeside (the store keeps theirs beside ours), so that
// a writer that never stops cannot keep a flush from ending, and nothing
// is lost.
//
// Each conflict is logged (key and policy, never a value) and reported as
// an Event of op EventConflict with the next successful flush's events,
// and to watchers as a Change of op OpConflict.

// The outcomes of a conflict (Event.Outcome).
const (
	OutcomeKeptBoth    = "kept-both"   // theirs has the name, ours is under Event.CopyKey
	OutcomeMerged      = "merged"      // the name holds the merge of both
	OutcomeOverwritten = "overwritten" // last writer wins: ours replaced theirs
	OutcomeRestored    = "restored"    // a key we removed came back with theirs
	OutcomeDeleted     = "deleted"     // last writer wins: our removal deleted theirs
	OutcomeKeptBeside  = "kept-beside" // fallback: the store kept theirs under Event.CopyKey
	// OutcomeMetadata: theirs changed the metadata alone (a chmod,
	// chown or setxattr); ours keeps its value and takes theirs by
	// External.MergeMeta's rule (the most restrictive mode wins).
	OutcomeMetadata = "merged-metadata"
)

const (
	// conflictHotRounds rounds that met conflicts run back to back;
	// the rounds after them pause first.
	conflictHotRounds = 32
	// conflictRounds is the last round resolved by the policy; the next
	// one keeps theirs beside (KeepBeside).
	conflictRounds = 48
	// conflictPauseMax bounds the pause between late rounds.
	conflictPauseMax = 200 * time.Millisecond
)

// flushPolicy is Flush under a conflict policy. The caller holds flushMu.
func (c *Context) flushPolicy(ctx context.Context) error {
	for round := 1; ; round++ {
		err := c.flushOnce(ctx, true)
		conflicts := conflictsOf(err)
		if len(conflicts) == 0 {
			return err
		}
		if round > conflictRounds {
			c.log.Warn("flush: another writer kept changing the keys being flushed; this flush keeps its versions beside them (keep-beside)",
				"rounds", round-1, "policy", c.opts.OnConflict.String(), "keys", len(conflicts))
			return c.flushOnce(ctx, false)
		}
		if err := c.resolveConflicts(ctx, conflicts); err != nil {
			return err
		}
		if round >= conflictHotRounds {
			d := min(time.Millisecond<<(round-conflictHotRounds+1), conflictPauseMax)
			d = d/2 + rand.N(d/2+1)
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return wrapf("flush: %w", ctx.Err())
			case <-t.C:
			}
		}
	}
}

// conflictsOf returns the conflicts err reports: those of a
// *backend.ConflictError (a flush applied as one batch), or of every one
// a *FlushError holds (a flush applied in parts, some of which met
// conflicts while the others were saved); nil when err is no conflict, or
// when the flush failed for any other reason too.
func conflictsOf(err error) []backend.Conflict {
	var fe *FlushError
	if errors.As(err, &fe) {
		var out []backend.Conflict
		seen := make(map[string]bool)
		for _, e := range fe.Failed {
			var ce *backend.ConflictError
			if !errors.As(e, &ce) {
				return nil // another failure: reported as it is
			}
			for _, cf := range ce.Conflicts {
				if !seen[cf.Key] {
					seen[cf.Key] = true
					out = append(out, cf)
				}
			}
		}
		slices.SortFunc(out, func(a, b backend.Conflict) int { return strings.Compare(a.Key, b.Key) })
		return out
	}
	var ce *backend.ConflictError
	if errors.As(err, &ce) {
		return ce.Conflicts
	}
	return nil
}

// resolved is what resolving one conflict did, for the log, the event and
// the watchers.
type resolved struct {
	key, copyKey, outcome string
	theirs                backend.Entry
	journal               []string // keys whose session value changed
	created               bool     // theirs now has the key in the session
	attrs                 bool     // a directory's attributes changed (theirs merged in)
	dir                   bool     // theirs is a directory, for ApplyDir after the lock
	why                   string   // why a merge fell back to keep-both; "" for none
}

// resolveConflicts loads theirs of every conflict and resolves each by the
// policy (see the file comment). Store I/O runs without the lock.
func (c *Context) resolveConflicts(ctx context.Context, conflicts []backend.Conflict) error {
	var done []resolved
	for _, cf := range conflicts {
		got, err := c.store.Load(ctx, cf.Key)
		if isNotExist(err) {
			continue // gone again: the next round meets no conflict there
		}
		if err != nil {
			return wrapf("flush: load %s after a conflict: %w", cf.Key, err)
		}
		theirs := got[0]
		if theirs.Info.Mode.IsRegular() {
			if theirs, _, err = c.External().Ingest(theirs); err != nil {
				return wrapf("flush: conflict: %w", err)
			}
		}
		pre := c.premerge(theirs) // before the lock: the slow part of a merge
		c.mu.Lock()
		r, ok := c.resolveLocked(cf, theirs, pre)
		c.mu.Unlock()
		if ok {
			done = append(done, r)
		} else if r.attrs {
			// Their change of a directory's attributes, merged in with
			// no conflict to tell of: behind the kernel all the same.
			c.emit(Change{Op: OpAttr, Key: r.key, Origin: OriginExternal})
		}
	}
	for _, r := range done {
		if r.why != "" {
			c.log.Warn("flush: another writer changed a key being flushed; resolved by the conflict policy",
				"key", r.key, "policy", c.opts.OnConflict.String(), "outcome", r.outcome, "copy", r.copyKey, "why", r.why)
		} else {
			c.log.Warn("flush: another writer changed a key being flushed; resolved by the conflict policy",
				"key", r.key, "policy", c.opts.OnConflict.String(), "outcome", r.outcome, "copy", r.copyKey)
		}
		if r.dir {
			if err := c.External().ApplyDir(r.key, r.theirs.Info); err != nil {
				c.log.Error("flush: conflict: the other writer's directory cannot take its key in the session", "key", r.key, "err", err)
			}
		}
		switch {
		case r.outcome == OutcomeKeptBoth:
			c.emit(Change{Op: OpRename, Key: r.copyKey, OldKey: r.key, Origin: OriginSelf}) // ours moved, behind the kernel
		case r.copyKey != "":
			c.emit(Change{Op: OpCreate, Key: r.copyKey, Origin: OriginExternal}) // theirs beside
		}
		if r.created {
			// Theirs took the name behind the kernel's back.
			c.emit(Change{Op: OpCreate, Key: r.key, Origin: OriginExternal})
		}
		if r.outcome == OutcomeMerged {
			c.emit(Change{Op: OpContent, Key: r.key, Origin: OriginExternal})
		}
		if r.outcome == OutcomeMetadata {
			c.emit(Change{Op: OpAttr, Key: r.key, Origin: OriginExternal})
		}
		c.emit(Change{Op: OpConflict, Key: r.key, OldKey: r.copyKey, Origin: OriginExternal})
		for _, k := range r.journal {
			dropped := ""
			if r.outcome == OutcomeKeptBoth {
				// Ours moved: the records of the key hold it no longer,
				// and a replay must not put it back there.
				dropped = r.key
			}
			if err := c.journalKeyDropping(k, dropped); err != nil {
				c.log.Error("journal append after a conflict failed", "key", k, "err", err)
			}
		}
	}
	return nil
}

// resolveLocked resolves one conflict with theirs, the stored version, and
// reports what it did (false: nothing to resolve any more).
// pre is the text merge done before the lock, if any (premerge).
func (c *Context) resolveLocked(cf backend.Conflict, theirs backend.Entry, pre *premerged) (resolved, bool) {
	key := cf.Key
	r := resolved{key: key, theirs: theirs}
	v := backend.VersionOf(theirs.Info)
	f, have := c.mu.tree.files[key]
	if c.ownAttemptLocked(cf, f, have, theirs) {
		return r, false // our own write: no other writer's to resolve
	}
	if d, ok := c.mu.tree.dirs[key]; ok && !cf.Delete {
		return c.resolveDirLocked(d, theirs, r)
	}
	switch {
	case cf.Delete:
		if have {
			return r, false // made again since: a save next round
		}
		if c.opts.OnConflict == LastWriterWins {
			c.mu.conflict.bases[key] = v
			r.outcome = OutcomeDeleted
			break
		}
		r.outcome = OutcomeRestored
		if c.showTheirsLocked(&r) {
			delete(c.mu.pending.gone, key)
			break
		}
		// A directory (shown after the lock), a special file (indexed
		// at the next mount), or a file the session cannot show: the
		// session deletes nothing of it.
		delete(c.mu.pending.removed, key)
		delete(c.mu.pending.gone, key)
		delete(c.mu.conflict.bases, key)
	case !have || f.gen == 0:
		return r, false // no longer ours to save
	case c.holdsOursLocked(f, key, theirs):
		// What the store holds is what this save writes (a replayed
		// journal record a killed flush had saved, or both sides
		// merged to one value): nothing to merge, and what the store
		// holds is the base of the next merge, as after mergeLocked.
		c.setExpectLocked(f, key, v)
		c.keepMergeBaseLocked(f, theirs.Value, toXAttrList(theirs.Info.XAttrs), theirs.Info.Mode)
		return r, false
	case c.mergeMetaLocked(f, key, theirs.Info):
		r.outcome, r.journal = OutcomeMetadata, []string{key}
	case f.link != nil && len(f.link.names) > 1 && !theirs.Info.Mode.IsRegular():
		// Their directory or symlink cannot be kept beside as a file:
		// it takes the name, our node keeps its other names, and a
		// copy of ours (a node of its own) is kept beside.
		r.copyKey = c.copyOursLocked(f, key)
		c.showTheirsLocked(&r)
		r.outcome = OutcomeKeptBoth
		if r.copyKey != "" {
			r.journal = []string{r.copyKey}
		}
		c.conflictEventLocked(r)
		return r, true
	case f.link != nil && len(f.link.names) > 1:
		// A node with several names moves as a whole or not at all:
		// theirs is kept beside it, ours takes the name.
		ck := c.freeConflictKeyLocked(key, "")
		theirs.Key, theirs.Info.Link = ck, "" // a node of its own
		if _, _, err := c.loadCleanLocked(theirs); err != nil {
			c.setExpectLocked(f, key, v) // overwritten: logged and reported
			r.outcome = OutcomeOverwritten
			break
		}
		// The store holds nothing of it under ck: save it there.
		nf := c.mu.tree.files[ck]
		nf.from, nf.base = "", backend.Version{}
		nf.changed = true
		c.markDirtyLocked(nf)
		c.setExpectLocked(f, key, v)
		r.copyKey, r.outcome, r.journal = ck, OutcomeKeptBeside, []string{ck}
	case c.opts.OnConflict == LastWriterWins:
		c.setExpectLocked(f, key, v)
		r.outcome = OutcomeOverwritten
	default:
		if c.opts.OnConflict == Merge {
			if r.why = c.mergeLocked(f, theirs, pre); r.why == "" {
				r.outcome, r.journal = OutcomeMerged, []string{key}
				break
			}
		}
		r.copyKey = c.moveOursLocked(f, key)
		c.showTheirsLocked(&r)
		r.outcome, r.journal = OutcomeKeptBoth, []string{r.copyKey}
	}
	c.conflictEventLocked(r)
	return r, true
}

// resolveDirLocked resolves a conflict of the session's directory d with
// theirs, the store's version of its key. Another writer changed the
// directory's record since the session saw it (a chmod, a chown, an
// attribute; or it made the directory too): theirs merges in, and the
// next save expects it. Another writer put a file or symlink there (the
// directory removed and the name reused): it is kept beside, a node of
// its own under a conflict key that the next save stores, and the
// directory's save replaces it knowingly.
// It reports whether there was a conflict to tell of: a merge of
// attributes both sides changed is one; another writer's entries coming
// and going in it (its record changed, not its attributes) is none.
func (c *Context) resolveDirLocked(d *dir, theirs backend.Entry, r resolved) (resolved, bool) {
	key := d.key
	if theirs.Info.Mode.IsDir() {
		before := d.attrs()
		both := c.mergeDirLocked(d, theirs.Info)
		r.attrs = d.attrs() != before
		if !both {
			return r, false
		}
		r.outcome = OutcomeMetadata
		c.conflictEventLocked(r)
		return r, true
	}
	v := backend.VersionOf(theirs.Info)
	ck := c.freeConflictKeyLocked(key, "")
	theirs.Key, theirs.Info.Link = ck, ""
	if _, _, err := c.loadCleanLocked(theirs); err != nil {
		// Their node cannot be shown: the save replaces it (logged and
		// reported as overwritten).
		c.mu.conflict.bases[key] = v
		r.outcome = OutcomeOverwritten
		c.conflictEventLocked(r)
		return r, true
	}
	nf := c.mu.tree.files[ck]
	nf.from, nf.base = "", backend.Version{}
	nf.changed = true
	c.markDirtyLocked(nf)
	c.mu.conflict.bases[key] = v
	r.copyKey, r.outcome, r.journal = ck, OutcomeKeptBeside, []string{ck}
	c.conflictEventLocked(r)
	return r, true
}

// holdsOursLocked reports whether theirs, the store's version of key, is
// what a save of f would write: the same node, bytes and attributes, as
// sealed and derived for the store.
func (c *Context) holdsOursLocked(f *file, key string, theirs backend.Entry) bool {
	if !f.loaded || f.mode.Type() != theirs.Info.Mode.Type() {
		return false
	}
	sealed, _ := c.seal(f.entryRLocked(key))
	es := []backend.Entry{sealed}
	c.deriveAttrs(es)
	ours := es[0]
	return bytes.Equal(ours.Value, theirs.Value) && c.sameNode(pendingStampOf(ours.Info), stampOf(theirs.Info))
}

// showTheirsLocked gives r.theirs r.key in the session, where nothing
// holds it now, and reports whether it did: a file or symlink loaded
// clean (r.created), a directory marked for External.ApplyDir once the
// lock is released (r.dir); a fifo, socket or device is indexed at the
// next mount.
func (c *Context) showTheirsLocked(r *resolved) bool {
	switch mode := r.theirs.Info.Mode; {
	case mode.IsDir():
		r.dir = true
	case mode.IsRegular(), mode.Type() == fs.ModeSymlink:
		theirs := r.theirs
		theirs.Info.Link = "" // never one with the node ours was
		if _, _, err := c.loadCleanLocked(theirs); err != nil {
			c.log.Error("flush: conflict: the other writer's version cannot take its key in the session; left in the store", "key", r.key, "err", err)
			return false
		}
		r.created = true
		return true
	}
	return false
}

// setExpectLocked makes v the version the next save of f under key
// expects (see expectLocked).
func (c *Context) setExpectLocked(f *file, key string, v backend.Version) {
	if f.from == key {
		f.base = v
		return
	}
	c.mu.conflict.bases[key] = v
}

// moveOursLocked moves f, dirty, from key to a new conflict key of the
// agent's (ConflictKeyBy), as a rename moves a file: its open handles
// follow it. The store holds nothing under that key yet: the next flush
// saves it there as a new file. It returns the conflict key.
func (c *Context) moveOursLocked(f *file, key string) string {
	ck := c.freeConflictKeyLocked(key, c.opts.Agent)
	delete(c.mu.tree.files, key)
	f.key = ck
	if f.link != nil {
		// The node's name moves too (its last, when the others were
		// detached before): a flush saves every name of a node.
		if i := slices.Index(f.link.names, key); i >= 0 {
			f.link.names[i] = ck
		}
	}
	c.mu.tree.files[ck] = f
	if parent, ok := c.mu.tree.dirs[parentOf(key)]; ok {
		_, name := backend.Split(ck)
		parent.children[name] = struct{}{}
		c.touchDirLocked(parent, c.now().UnixNano())
	}
	if f.from == key {
		// The store's copy under key is theirs now, and stays.
		f.from, f.base = "", backend.Version{}
	}
	delete(c.mu.conflict.mergeBase, f)
	f.changed = true
	f.jfull = true
	c.markDirtyLocked(f)
	return ck
}

// copyOursLocked takes the name key from f, a node with other names,
// and keeps a copy of f (a node of its own, unflushed) under key's
// conflict copy, whose key it returns: the store's node under key is
// another writer's now.
func (c *Context) copyOursLocked(f *file, key string) string {
	ck := c.freeConflictKeyLocked(key, c.opts.Agent)
	ours := backend.Entry{Key: ck, Value: f.shareRLocked(), Info: backend.Info{Mode: f.mode, UID: f.uid, GID: f.gid,
		MTime: time.Unix(0, f.mtime), XAttrs: f.xattrs.toMap()}}
	c.detachNameLocked(f, key)
	nf, _, err := c.loadCleanLocked(ours)
	if err != nil {
		c.log.Error("flush: conflict: no copy of ours beside the other writer's node; ours keeps its other names", "key", key, "err", err)
		return ""
	}
	nf.from, nf.base = "", backend.Version{}
	nf.changed, nf.jfull = true, true
	c.markDirtyLocked(nf)
	return ck
}

// freeConflictKeyLocked returns key's conflict copy by agent, now
// (conflictKey), or a copy of that name when the session has it already.
func (c *Context) freeConflictKeyLocked(key, agent string) string {
	ck := c.conflictKey(key, agent, c.now())
	for i := 1; ; i++ {
		_, f := c.mu.tree.files[ck]
		_, d := c.mu.tree.dirs[ck]
		if !f && !d {
			return ck
		}
		ck = c.conflictKey(ck, "", c.now().Add(time.Duration(i)))
	}
}

// conflictKey is key's conflict copy by agent at t (backend.ConflictKeyBy),
// its name shortened to fit the store's key limit (ConflictKeyWithin).
func (c *Context) conflictKey(key, agent string, t time.Time) string {
	return backend.ConflictKeyWithin(key, agent, t, backend.KeyLimitOf(c.store).Max)
}

// loadCleanLocked makes e, the store's version of e.Key, the session's
// value of it, clean (the store holds exactly this), as External.Apply and
// a conflict's resolution do; it returns the file and whether it was
// created. A name of a node with hard links becomes a node of its own,
// unless e names that node's group (Info.Link): then, and when e names a
// group the session has under other names (another writer's hard link),
// e is that node, and its value and attributes show under every name.
func (c *Context) loadCleanLocked(e backend.Entry) (*file, bool, error) {
	old, had := c.mu.tree.files[e.Key]
	if had && old.link != nil && len(old.link.names) > 1 && old.link.id != e.Info.Link {
		c.detachNameLocked(old, e.Key)
		had = false
	}
	var f *file
	created := false
	_, isDir := c.mu.tree.dirs[e.Key]
	if e.Info.Link != "" && !isDir && (!had || old.link == nil || old.link.id != e.Info.Link) {
		// A name of a node the session has under other names (another
		// program's hard link): the name joins that node.
		if f = c.joinGroupLocked(e.Key, e.Info.Link); f != nil {
			created = !had
		}
	}
	if f == nil {
		var err error
		if f, created, err = c.createLocked("external", e.Key, e.Info.Mode, e.Info.UID, e.Info.GID, false); err != nil {
			return nil, false, err
		}
	}
	if e.Info.Link != "" && f.link == nil {
		f.link = &linkGroup{id: e.Info.Link, names: []string{e.Key}}
	}
	f.data, f.loaded, f.size = e.Value, true, int64(len(e.Value))
	f.shared.Store(false)
	f.mode, f.uid, f.gid = e.Info.Mode&backend.ModeMask, e.Info.UID, e.Info.GID
	f.mtime = e.Info.MTime.UnixNano()
	f.atime, f.ctime = timeOr(e.Info.ATime, e.Info.MTime), timeOr(e.Info.CTime, e.Info.MTime)
	f.xattrs = toXAttrList(backend.CloneXAttrs(e.Info.XAttrs))
	f.ver++
	f.gen = 0 // the store holds exactly this
	f.from, f.changed, f.by = e.Key, false, nil
	f.jlen, f.jfull = f.size, false
	f.base = backend.VersionOf(e.Info)
	delete(c.mu.conflict.bases, e.Key)
	delete(c.mu.conflict.replaced, e.Key)
	delete(c.mu.conflict.attempts, e.Key)
	delete(c.mu.pending.removed, e.Key)
	delete(c.mu.pending.dirty, f)
	c.keepMergeBaseLocked(f, f.shareRLocked(), f.xattrs, f.mode)
	c.mu.echo.addLocked(e.Key, stampOf(e.Info))
	return f, created, nil
}

// mergeBase is the store's version of a file that the session's changes
// were made on, for a three-way merge (the Merge policy).
type mergeBase struct {
	value  []byte
	xattrs xattrList // never modified in place
	mode   fs.FileMode
}

// keepMergeBaseLocked records value, attributes and mode, which the store
// holds for f, as the base of a merge of f's next changes (the Merge
// policy only). value must be shared (shareRLocked) or the store's own.
func (c *Context) keepMergeBaseLocked(f *file, value []byte, x xattrList, mode fs.FileMode) {
	if c.mu.conflict.mergeBase != nil && f.mode.IsRegular() {
		c.mu.conflict.mergeBase[f] = mergeBase{value: value, xattrs: x, mode: mode}
	}
}

// mergeLocked merges theirs into f, dirty under theirs' key, and returns
// "" when it could, else why not: a regular text file whose base the
// session knows (the file's own, or that of the file it replaced by a
// rename over the key: an editor's atomic save), or that both created (no
// base), with attributes and permissions that do not conflict (the
// attributes memfs maintains, such as the writer, stay ours). f becomes
// the merge (its open handles read it), and its next save expects theirs.
// The text merge is pre's when it was made of what f and its base still
// are.
func (c *Context) mergeLocked(f *file, theirs backend.Entry, pre *premerged) (why string) {
	if !f.mode.IsRegular() || !f.loaded || !theirs.Info.Mode.IsRegular() {
		return "not a regular file on both sides"
	}
	base, ok := c.mu.conflict.mergeBase[f]
	if !ok {
		expect := c.expectLocked(f, nil)
		rb, replaced := c.mu.conflict.replaced[theirs.Key]
		switch {
		case replaced && rb.version == expect && !expect.IsZero():
			base = rb.base // renamed over the file whose base this is
		case !expect.IsZero():
			return "the version this save replaces is no longer known (not loaded by this mount, or lost in a crash)"
		default:
			// Both created it: no base; permissions count as agreed.
			base = mergeBase{mode: f.mode}
			if backend.PermBits(f.mode) != backend.PermBits(theirs.Info.Mode) {
				base.mode = theirs.Info.Mode
			}
		}
	}
	x, ok := merge3.MergeXAttrs(userAttrs(base.xattrs.toMap()), userAttrs(f.xattrs.toMap()), userAttrs(theirs.Info.XAttrs))
	if !ok {
		return "both changed the same extended attribute"
	}
	perm, ok := merge3.MergeMode(uint32(backend.PermBits(base.mode)), uint32(backend.PermBits(f.mode)), uint32(backend.PermBits(theirs.Info.Mode)))
	if !ok {
		return "both changed the permissions"
	}
	merged, ok, done := pre.of(f, base.value)
	if !done {
		merged, ok = mergeText(base.value, f.data, theirs.Value)
	}
	if !ok {
		return "the changes overlap, or the file is not text"
	}
	for _, kv := range f.xattrs {
		if meta.ReadOnly(kv.name) {
			x[kv.name] = kv.value
		}
	}
	f.xattrs = toXAttrList(x)
	f.mode = f.mode&^backend.PermBits(f.mode) | fs.FileMode(perm)
	f.data = merged
	f.shared.Store(false)
	f.size = int64(len(merged))
	f.mtime = c.now().UnixNano()
	f.ver++
	f.changed = true
	f.jfull = true
	c.markDirtyLocked(f)
	c.setExpectLocked(f, theirs.Key, backend.VersionOf(theirs.Info))
	c.mu.conflict.mergeBase[f] = mergeBase{value: theirs.Value, xattrs: toXAttrList(theirs.Info.XAttrs), mode: theirs.Info.Mode}
	delete(c.mu.conflict.replaced, theirs.Key)
	return ""
}

// userAttrs is m without the attributes memfs maintains (meta.ReadOnly):
// a writer or creation time always differs between two writers and is
// never merged.
func userAttrs(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		if !meta.ReadOnly(k) {
			out[k] = v
		}
	}
	return out
}

// conflictEventLocked queues the event of r for the next successful
// flush.
func (c *Context) conflictEventLocked(r resolved) {
	if c.opts.Events == nil {
		return
	}
	var w meta.WriterInfo
	if c.opts.Self != nil {
		w = *c.opts.Self
	}
	ev := Event{Op: EventConflict, Key: r.key, CopyKey: r.copyKey, Policy: c.opts.OnConflict.String(), Outcome: r.outcome,
		Writer: w, gen: c.mu.pending.gen}
	if r.theirs.Info.Mode.IsRegular() {
		sum := sha256.Sum256(r.theirs.Value)
		ev.Size, ev.SHA256 = int64(len(r.theirs.Value)), hex.EncodeToString(sum[:])
	}
	c.mu.conflict.events = append(c.mu.conflict.events, ev)
}

// keptBesideEventsLocked queues the events of the conflicts a KeepBeside flush
// under a policy met (the store kept theirs under each copy key).
func (c *Context) keptBesideEventsLocked(conflicts map[string]string) {
	for key, ck := range conflicts {
		c.conflictEventLocked(resolved{key: key, copyKey: ck, outcome: OutcomeKeptBeside})
	}
}
