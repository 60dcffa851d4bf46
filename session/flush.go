package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// FlushStatus describes the last Flush.
type FlushStatus struct {
	Time    time.Time // when it ended; zero if none ran
	Err     error     // nil when it succeeded
	Flushes int       // how many ran
	Saved   int       // entries saved by the last successful one
	Deleted int       // keys deleted by the last successful one
}

// Flush sends every dirty entry and every removed key to the store,
// redacted (see outbound.go): in one Apply when the store is a
// backend.Batcher, else in one Save call and one Delete call
// (saveAndDelete says how a refused entry is found). Hidden keys are never
// sent. Changes that
// land while Flush runs stay dirty for the next Flush. On failure everything
// stays dirty and the error is returned.
//
// Under a conflict policy (Options.OnConflict) a flush that meets another
// writer's changes resolves them and goes round again (see conflict.go).
func (c *Context) Flush(ctx context.Context) error {
	if c.opts.ReadOnly {
		return nil // replayed changes stay in memory (and in the journal)
	}
	if c.policyErr != nil {
		return c.policyErr
	}
	defer c.trimNow() // what it saved is clean: it may go under the budget
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	if c.opts.OnConflict != KeepBeside {
		return c.flushPolicy(ctx)
	}
	err := c.flushOnce(ctx, false)
	if c.yieldToDirs(ctx, err) {
		// Ours moved beside their directory: its copy is saved now.
		err = c.flushOnce(ctx, false)
	}
	return err
}

// yieldToDirs applies the keep-beside rule for a change of type to the
// files err (a flush's) says the store refused because another program's
// directory holds their name: the directory keeps the name, the
// session's file moves to a conflict copy (unflushed), and the session
// takes their directory in (the keys under it follow through the
// store's watcher). It reports whether it moved any.
func (c *Context) yieldToDirs(ctx context.Context, err error) bool {
	var ferr *FlushError
	st, ok := c.store.(interface {
		Stat(ctx context.Context, key string) (backend.Info, error)
	})
	if !ok || !errors.As(err, &ferr) {
		return false
	}
	moved := false
	for key, e := range ferr.Failed {
		if !errors.Is(e, fs.ErrExist) {
			continue
		}
		info, err := st.Stat(ctx, key)
		if err != nil || !info.Mode.IsDir() {
			continue
		}
		c.mu.Lock()
		f, ok := c.mu.tree.files[key]
		if !ok || f.gen == 0 || (f.link != nil && len(f.link.names) > 1) {
			c.mu.Unlock()
			continue
		}
		ck := c.moveOursLocked(f, key)
		c.conflictEventLocked(resolved{key: key, copyKey: ck, outcome: OutcomeKeptBoth}) // the copy holds ours
		c.mu.Unlock()
		c.log.Warn("flush: another program made a directory where the session has a file: the directory keeps the name, ours is kept beside",
			"key", key, "copy", ck)
		c.emit(Change{Op: OpRename, Key: ck, OldKey: key, Origin: OriginSelf})
		if err := c.journalKeyDropping(ck, key); err != nil {
			c.log.Error("journal append after a conflict failed", "key", ck, "err", err)
		}
		if err := c.External().ApplyDir(key, info); err != nil {
			c.log.Error("flush: their directory cannot take its name in the session", "key", key, "err", err)
		}
		moved = true
	}
	return moved
}

// flushOnce is one flush. With strict (a conflict policy's round), every
// save and delete states the version it replaces and the store writes
// nothing when one does not match: flushOnce then returns the
// *backend.ConflictError as it is, and everything stays dirty. The caller
// holds flushMu.
//
// Its phases run with the lock and without it, in turn: plan (under mu:
// what to send, at which generations, expecting which versions), seal (no
// lock: redaction, derived attributes), persist (no lock: the store's
// I/O), commit (under mu: clear what was saved at its generation), publish
// (events, Options.Saved) and settle the journal.
func (c *Context) flushOnce(ctx context.Context, strict bool) error {
	c.mu.Lock()
	p := c.planLocked(strict)
	c.mu.Unlock()
	c.sealPlan(p)
	if c.opts.Saving != nil && len(p.entries) > 0 {
		c.opts.Saving(ctx, p.entries)
	}
	res, err := c.persist(ctx, p)
	if err != nil {
		return err // a conflict: nothing was written
	}
	c.mu.Lock()
	c.keepAttemptsLocked(p, res.failed)
	out := c.commitLocked(p, res)
	c.mu.Unlock()
	if out.allFailed {
		ferr := &FlushError{Failed: res.failed}
		if ctx.Err() != nil && !slices.ContainsFunc(slices.Collect(maps.Values(res.failed)), func(err error) bool { return !errors.Is(err, context.Canceled) }) {
			// The caller gave up (a signal interrupted its fsync: the
			// kernel then interrupts the request), and that is all that
			// failed: no store refused anything, and the next flush
			// saves what stays dirty.
			c.log.Info("flush given up by its caller; entries stay dirty", "entries", len(p.entries), "removed", len(p.removed), "err", ctx.Err())
		} else {
			c.log.Error("flush failed; entries stay dirty", "entries", len(p.entries), "removed", len(p.removed), "err", ferr)
		}
		return wrapf("flush: %w", ferr)
	}
	evErr := c.publish(ctx, p, out.conflicts)
	c.settle(ctx, p, res)
	if evErr != nil {
		// The values are in the store, their events (and with them
		// their versions) are not in the log: the flush is no success
		// (an fsync is not acknowledged), and the journal keeps the
		// records, so that a process that ends before a later flush
		// appends the events has them appended by the replay at the
		// next open.
		return wrapf("flush: the values are saved but their events are not: %w", evErr)
	}
	return c.settleJournal(p.through, res.failed, out)
}

// flushPlan is what one flush sends, as planLocked took it.
type flushPlan struct {
	through uint64          // the latest generation the flush covers
	saved   []snap          // per entry, its file as planned
	entries []backend.Entry // the files to save: every name of a node with hard links
	// dentries are the directories whose own attributes changed, ddirs
	// their nodes and dgens their generations.
	dentries []backend.Entry
	ddirs    []*dir
	dgens    []uint64
	// dlate are the clean parents of what is saved: a store that keeps
	// real directories moves their mtimes while it writes in them, and
	// is told them again at the end.
	dlate      []backend.Entry
	removed    []string                    // the keys to delete
	removedGen map[string]uint64           // every removed key (hidden ones too) -> its generation
	gone       map[string]*meta.WriterInfo // who removed what the store holds
	delExpect  map[string]backend.Version  // strict: the version each delete removes
	// dexpect is, when strict, the version each directory's save
	// replaces: another writer's chmod or chown since is a conflict, not
	// put back.
	dexpect map[string]backend.Version
}

// planLocked takes what the flush sends out of the session's state.
func (c *Context) planLocked(strict bool) *flushPlan {
	p := &flushPlan{through: c.mu.pending.gen}
	c.planFilesLocked(p)
	// A file renamed away from a key leaves its store copy there until
	// this flush: a new file at that key replaces that copy.
	moved := make(map[string]backend.Version)
	for _, s := range p.saved {
		if s.f.from != "" && s.f.from != s.f.key {
			moved[s.f.from] = s.f.base
		}
	}
	c.planExpectLocked(p, moved)
	c.planDirsLocked(p, strict)
	c.planRemovalsLocked(p, strict, moved)
	return p
}

// planFilesLocked plans the saves of the dirty files.
func (c *Context) planFilesLocked(p *flushPlan) {
	for f := range c.mu.pending.dirty {
		if f.key != "" && c.Local(f.key) && f.link != nil {
			// A node with hard links is kept under its other names.
			for _, k := range f.link.names {
				if !c.Local(k) {
					f.key = k
					break
				}
			}
		}
		if f.key == "" || c.Local(f.key) {
			continue
		}
		value := f.shareRLocked()
		p.saved = append(p.saved, snap{f: f, gen: f.gen, from: f.from, changed: f.changed, by: f.by})
		info := f.infoLocked()
		p.entries = append(p.entries, backend.Entry{Key: f.key, Info: info, Value: value})
		if f.link != nil {
			// Every name of the node, in the same save, right after
			// its first (a store saves a group together).
			for _, k := range f.link.names {
				if k != f.key && !c.Local(k) {
					p.saved = append(p.saved, snap{f: f, gen: f.gen, by: f.by, alias: true})
					p.entries = append(p.entries, backend.Entry{Key: k, Info: info, Value: value})
				}
			}
		}
	}
}

// planExpectLocked gives each save the store's version it replaces.
func (c *Context) planExpectLocked(p *flushPlan, moved map[string]backend.Version) {
	for i := range p.saved {
		if f := p.saved[i].f; f.link != nil && len(f.link.names) > 1 {
			// Every name of a stored group is the node's version.
			var ok bool
			if p.saved[i].expect, ok = c.mu.conflict.bases[p.entries[i].Key]; !ok && f.from != "" {
				p.saved[i].expect = f.base
			}
			continue
		}
		p.saved[i].expect = c.expectLocked(p.saved[i].f, moved)
	}
}

// planDirsLocked plans the saves of directories: those whose attributes
// changed, and the clean parents of the files saved; when strict, each
// expecting the version the session saw.
func (c *Context) planDirsLocked(p *flushPlan, strict bool) {
	p.dentries, p.ddirs = c.dirEntriesLocked()
	p.dgens = make([]uint64, len(p.ddirs))
	if strict {
		p.dexpect = make(map[string]backend.Version, len(p.ddirs))
	}
	for i, d := range p.ddirs {
		p.dgens[i] = d.gen
		if strict && d.key != "" {
			// The store's version it saw, or that of the node removed
			// from the key, which the directory replaces.
			v, ok := c.mu.conflict.bases[d.key]
			if !ok {
				v = d.base
			}
			p.dexpect[d.key] = v
		}
	}
	touched := make(map[string]bool)
	for _, e := range p.entries {
		touched[parentOf(e.Key)] = true
	}
	for k := range touched {
		if d, ok := c.mu.tree.dirs[k]; ok && k != "" && d.gen == 0 && !c.Local(k) {
			p.dlate = append(p.dlate, backend.Entry{Key: k, Info: d.infoLocked()})
		}
	}
	slices.SortFunc(p.dlate, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
}

// planRemovalsLocked plans the deletes, each expecting, when strict, the
// version it removes.
func (c *Context) planRemovalsLocked(p *flushPlan, strict bool, moved map[string]backend.Version) {
	p.gone = maps.Clone(c.mu.pending.gone)
	p.removedGen = make(map[string]uint64, len(c.mu.pending.removed))
	if strict || c.conditionalDeletes() {
		p.delExpect = make(map[string]backend.Version)
	}
	for k, g := range c.mu.pending.removed {
		p.removedGen[k] = g
		if c.Local(k) {
			continue
		}
		p.removed = append(p.removed, k)
		if p.delExpect == nil {
			continue
		}
		// The version the delete removes: the copy of a file removed
		// there, or of one renamed away from there. A key of neither is
		// a directory the store holds no entry of that the session saw
		// (it made it, or the store implies it): the delete expects the
		// key absent, which removes an empty directory there (stores
		// delete directories whatever the version) and keeps anything
		// else, another writer's (seed 3610 of the two-writer model: a
		// directory made and removed between two flushes took another
		// program's new file with it).
		if v, ok := c.mu.conflict.bases[k]; ok {
			p.delExpect[k] = v
		} else if v, ok := moved[k]; ok {
			p.delExpect[k] = v
		} else {
			p.delExpect[k] = backend.Version{}
		}
	}
}

// sealPlan redacts what the flush sends and derives its attributes,
// without the lock, and records the versions it is about to write.
func (c *Context) sealPlan(p *flushPlan) {
	c.sealEntries(p.entries, true)
	c.deriveAttrs(p.entries)
	c.mu.Lock()
	for _, e := range p.entries {
		// What the store is about to hold: an external watcher seeing it
		// come back recognises memfs's own write (Echo).
		c.mu.echo.addLocked(e.Key, pendingStampOf(e.Info))
	}
	c.mu.Unlock()
	c.sealEntries(p.dentries, true) // their attributes
	c.sealEntries(p.dlate, true)
}

// flushResult is what the store did with a flush: the keys it refused
// (files and removals; directories), and the keys whose other version it
// kept beside (the keep-beside rule) with that copy's key, and the
// removed keys it did not delete, another writer's version being there.
type flushResult struct {
	failed, dfailed map[string]error
	kept            map[string]string
	stayed          []string
}

// persist sends the plan to the store, without the lock.
func (c *Context) persist(ctx context.Context, p *flushPlan) (flushResult, error) {
	dirs := p.dentries
	var root *backend.Entry
	if len(dirs) > 0 && dirs[0].Key == "" {
		// The root (first: "" sorts before every key) is no key: it
		// goes to its system record, after the rest.
		root, dirs = &dirs[0], dirs[1:]
	}
	res, err := c.saveAndDelete(ctx, p.entries, p.saved, p.removed, p.delExpect, dirs, p.dexpect, p.dlate)
	if err != nil || root == nil {
		return res, err
	}
	if err := c.saveRoot(ctx, *root); err != nil {
		res.dfailed[""] = err
	}
	return res, nil
}

// flushCommit is what commitLocked leaves for the phases after it.
type flushCommit struct {
	allFailed   bool     // the store refused everything: nothing to publish
	refusedDirs []string // directories the store refused
	refused     []*file  // files the store refused
	conflicts   []Event  // conflict events the flush reports
}

// commitLocked records what the store now holds: what it saved at the
// generation the plan saw is clean, what it refused stays dirty. It
// filters the plan down to what was saved and deleted, and adds the
// directories' failures to res.failed.
func (c *Context) commitLocked(p *flushPlan, res flushResult) flushCommit {
	if c.opts.OnConflict != KeepBeside {
		c.keptBesideEventsLocked(res.kept)
	}
	c.mu.outbox.stats.flushes++
	c.mu.outbox.stats.last = c.now()
	c.mu.outbox.stats.lastErr = nil
	var out flushCommit
	out.refusedDirs = c.commitDirsLocked(p, res.dfailed)
	failed := res.failed
	maps.Copy(failed, res.dfailed)
	if len(failed) > 0 {
		c.mu.outbox.stats.lastErr = &FlushError{Failed: failed}
	}
	if len(failed) > 0 && len(failed) == len(p.entries)+len(p.removed)+len(p.dentries) {
		out.allFailed = true
		return out
	}
	// What the store refused stays dirty; the rest is committed.
	if len(failed) > 0 {
		out.refused = p.dropRefusedLocked(failed)
	}
	// A delete the store refused for another writer's version is no
	// delete to report; nor is the key dirty any more (their version is
	// the truth, and the store's change feed brings it in).
	p.removed = slices.DeleteFunc(p.removed, func(k string) bool { return slices.Contains(res.stayed, k) })
	c.mu.outbox.stats.saved, c.mu.outbox.stats.deleted = len(p.entries), len(p.removed)
	c.commitFilesLocked(p)
	for k, g := range p.removedGen {
		if c.mu.pending.removed[k] == g {
			delete(c.mu.pending.removed, k)
			delete(c.mu.conflict.bases, k)
			delete(c.mu.conflict.replaced, k)
			delete(c.mu.conflict.attempts, k)
			// The store holds none of memfs's versions of k any more:
			// whatever appears there next is another writer's.
			c.mu.echo.forgetLocked(k)
		}
	}
	for k, by := range p.gone {
		if c.mu.pending.gone[k] == by {
			delete(c.mu.pending.gone, k)
		}
	}
	out.conflicts = c.mu.conflict.takeEventsLocked()
	return out
}

// commitDirsLocked commits the directories' saves and returns the keys of
// those the store refused.
func (c *Context) commitDirsLocked(p *flushPlan, dfailed map[string]error) (refused []string) {
	for i, d := range p.ddirs {
		if _, bad := dfailed[p.dentries[i].Key]; !bad {
			if now, ok := c.mu.tree.dirs[p.dentries[i].Key]; ok && now == d {
				d.setBase(p.dentries[i].Info) // what the store holds of it now
			} else {
				c.leftDuringFlushLocked(p.dentries[i])
			}
		}
		if _, bad := dfailed[d.key]; !bad && d.gen == p.dgens[i] {
			d.gen = 0
			delete(c.mu.pending.ddirty, d)
		} else if bad {
			refused = append(refused, d.key)
		}
	}
	for _, e := range p.dlate {
		if d, ok := c.mu.tree.dirs[e.Key]; ok {
			if _, bad := dfailed[e.Key]; !bad {
				d.setBase(e.Info)
			}
		}
	}
	return refused
}

// dropRefusedLocked takes what the store refused out of the plan, and
// returns the files refused (their journal needs their whole value).
func (p *flushPlan) dropRefusedLocked(failed map[string]error) (refused []*file) {
	keep := p.saved[:0:0]
	keepEntries := p.entries[:0:0]
	for i, s := range p.saved {
		if _, bad := failed[p.entries[i].Key]; bad {
			s.f.jfull = true
			refused = append(refused, s.f)
			continue
		}
		keep = append(keep, s)
		keepEntries = append(keepEntries, p.entries[i])
	}
	p.saved, p.entries = keep, keepEntries
	keptRemoved := p.removed[:0:0]
	for _, k := range p.removed {
		if _, bad := failed[k]; bad {
			delete(p.removedGen, k)
			delete(p.gone, k)
			continue
		}
		keptRemoved = append(keptRemoved, k)
	}
	p.removed = keptRemoved
	return refused
}

// commitFilesLocked records the saved files as the store now holds them,
// clean unless written again during the flush.
func (c *Context) commitFilesLocked(p *flushPlan) {
	for i, s := range p.saved {
		e := p.entries[i]
		c.mu.echo.savedLocked(e.Key, stampOf(e.Info))
		delete(c.mu.conflict.attempts, e.Key) // the store holds this save
		if f, ok := c.mu.tree.files[e.Key]; !ok || f != s.f {
			c.leftDuringFlushLocked(e)
		} else {
			delete(c.mu.conflict.bases, e.Key)
			delete(c.mu.conflict.replaced, e.Key)
			if f.link != nil {
				delete(f.link.fresh, e.Key)
			}
		}
		if s.alias {
			continue
		}
		switch {
		case s.f.link != nil && e.Info.Link != "":
			// The store's name of the group (a directory store names it
			// by its node): another writer's change through one of its
			// names then comes back naming this group.
			s.f.link.id = e.Info.Link
		case s.f.link != nil && len(s.f.link.names) == 1:
			// Saved as a node of one name: the group it was one of is
			// another node's now (whose other names the store kept), and a
			// change through those must not come back as this one's.
			s.f.link = nil
		}
		if s.f.key != "" {
			s.f.from = e.Key // what the store now holds of it
			s.f.base = backend.VersionOf(e.Info)
			if c.mu.conflict.mergeBase != nil {
				c.keepMergeBaseLocked(s.f, e.Value, toXAttrList(e.Info.XAttrs), e.Info.Mode)
			}
		}
		if s.f.key == e.Key {
			c.showDerivedLocked(s.f, e.Info.XAttrs)
		}
		if s.f.gen != s.gen {
			// Written again during the flush: stays dirty, and the
			// journal, which no longer holds what the store does,
			// needs the whole value next.
			s.f.jfull = true
			continue
		}
		delete(c.mu.pending.dirty, s.f)
		s.f.gen = 0
		s.f.changed, s.f.by = false, nil
		// The cache keeps the bytes that were written, even when the
		// store got them redacted: a process holding the file open must
		// never see them change under it (DESIGN: "a file open for
		// writing never changes under its writer"). A remount shows
		// what the store holds. Redaction is line-local (see
		// redact.ContextStart), so the store's value is a valid base
		// for the append records that follow.
		s.f.jlen, s.f.jfull = int64(len(s.f.data)), false
	}
}

// publish tells the event sink and Options.Saved what the flush did.
// It returns the error of the events' append.
func (c *Context) publish(ctx context.Context, p *flushPlan, conflicts []Event) error {
	err := c.sendEvents(ctx, append(conflicts, c.events(p.saved, p.entries, p.removed, p.removedGen, p.gone)...))
	if c.opts.Saved != nil && (len(p.entries) > 0 || len(p.removed) > 0) {
		c.opts.Saved(ctx, p.entries, p.removed)
	}
	return err
}

// FlushError is a flush in which the store refused some entries (or all):
// the keys it refused, each with the store's error. Those entries stay
// dirty and journaled; every other entry of the flush was saved. errors.Is
// finds the store's errors through it.
type FlushError struct {
	Failed map[string]error
}

func (e *FlushError) Error() string {
	keys := slices.Sorted(maps.Keys(e.Failed))
	var b strings.Builder
	fmt.Fprintf(&b, "the store refused %d entries:", len(keys))
	for i, k := range keys {
		if i == 5 {
			fmt.Fprintf(&b, " and %d more", len(keys)-i)
			break
		}
		fmt.Fprintf(&b, " %s (%v);", k, e.Failed[k])
	}
	return strings.TrimSuffix(b.String(), ";")
}

func (e *FlushError) Unwrap() []error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(e.Failed)) {
		errs = append(errs, e.Failed[k])
	}
	return errs
}

// Sync flushes the session and reports whether key — a file, or a
// directory and everything under it; "" is everything — is durable: a
// flush in which the store refused only other entries is a success for
// key (POSIX fsync makes one file durable).
func (c *Context) Sync(ctx context.Context, key string) error {
	err := c.Flush(ctx)
	var fe *FlushError
	if err == nil || key == "" || !errors.As(err, &fe) {
		return err
	}
	for k := range fe.Failed {
		if k == key || strings.HasPrefix(k, key+"/") {
			return err
		}
	}
	return nil
}

// Refused reports whether the store refused key in this flush.
func (e *FlushError) Refused(key string) bool {
	_, ok := e.Failed[key]
	return ok
}

// deriveAttrs sets the derived attributes (Options.Derived) of the entries
// a flush saves, and takes them from the entries they do not apply to. The
// entries' attribute maps are their own (Info.XAttrs is built for each).
func (c *Context) deriveAttrs(entries []backend.Entry) {
	if len(c.opts.Derived) == 0 {
		return
	}
	for i := range entries {
		e := &entries[i]
		for name, fn := range c.opts.Derived {
			if v, ok := fn(e.Key, e.Value); ok {
				if e.Info.XAttrs == nil {
					e.Info.XAttrs = make(map[string][]byte, 1)
				}
				e.Info.XAttrs[name] = v
			} else {
				delete(e.Info.XAttrs, name)
			}
		}
	}
}

// showDerivedLocked gives f the derived attributes the store now holds for
// it (stored: the saved entry's attributes).
func (c *Context) showDerivedLocked(f *file, stored map[string][]byte) {
	for name := range c.opts.Derived {
		if v, ok := stored[name]; ok {
			if old, _ := f.xattrs.get(name); string(old) != string(v) {
				f.xattrs = f.xattrs.with(name, v)
			}
		} else {
			f.xattrs = f.xattrs.without(name)
		}
	}
}

// LastFlush reports the outcome of the last Flush.
func (s *Stats) LastFlush() FlushStatus {
	c := s.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	return FlushStatus{Time: c.mu.outbox.stats.last, Err: c.mu.outbox.stats.lastErr, Flushes: c.mu.outbox.stats.flushes,
		Saved: c.mu.outbox.stats.saved, Deleted: c.mu.outbox.stats.deleted}
}

// Counts reports the size of the session: files indexed, files loaded,
// files dirty (hidden ones included), keys pending deletion.
func (s *Stats) Counts() (indexed, loaded, dirty, removed int) {
	c := s.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, f := range c.mu.tree.files {
		if f.loaded {
			loaded++
		}
	}
	return len(c.mu.tree.files), loaded, len(c.mu.pending.dirty), len(c.mu.pending.removed)
}

// Bytes is the sum of the sizes of the files the session indexes (a
// node with several names counted once): what a store that cannot tell
// its own usage holds of them (backend.Space.Used -1).
func (s *Stats) Bytes() int64 {
	c := s.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	var n int64
	for k, f := range c.mu.tree.files {
		if f.link == nil || f.link.names[0] == k {
			n += f.size
		}
	}
	return n
}

// leftDuringFlushLocked records that the node a flush saved as e left
// e's key while the flush ran (removed, or renamed away): the store holds
// the session's own version there now, which the next save or delete of
// the key replaces (a node made at the name since is never taken for
// another writer's).
func (c *Context) leftDuringFlushLocked(e backend.Entry) {
	c.mu.conflict.bases[e.Key] = backend.VersionOf(e.Info)
}

// expectLocked is the store's version that a save of f replaces: the copy
// f was read from or last saved as, when f still has that key; the copy of
// a file removed from f's key (f was renamed over it) or renamed away from
// it (moved); else none.
func (c *Context) expectLocked(f *file, moved map[string]backend.Version) backend.Version {
	if f.from == f.key {
		return f.base
	}
	if v, ok := c.mu.conflict.bases[f.key]; ok {
		return v
	}
	return moved[f.key]
}
