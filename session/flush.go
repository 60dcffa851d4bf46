package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/meta"
)

// Journal records completed changes between flushes so that they survive a
// crash of the process. Append must not wait for a disk barrier; Truncate
// discards every record whose generation is at most through, because a
// successful Flush made them durable in the store.
type Journal interface {
	Append(r journal.Record) error
	Truncate(through uint64) error
}

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
	return c.flushOnce(ctx, false)
}

// flushOnce is one flush. With strict (a conflict policy's round), every
// save and delete states the version it replaces and the store writes
// nothing when one does not match: flushOnce then returns the
// *backend.ConflictError as it is, and everything stays dirty. The caller
// holds flushMu.
func (c *Context) flushOnce(ctx context.Context, strict bool) error {
	c.mu.Lock()
	through := c.gen
	var saved []snap
	var entries []backend.Entry
	for f := range c.dirty {
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
		saved = append(saved, snap{f: f, gen: f.gen, from: f.from, changed: f.changed, by: f.by})
		info := f.infoLocked()
		entries = append(entries, backend.Entry{Key: f.key, Info: info, Value: value})
		if f.link != nil {
			// Every name of the node, in the same save, right after
			// its first (a store saves a group together).
			for _, k := range f.link.names {
				if k != f.key && !c.Local(k) {
					saved = append(saved, snap{f: f, gen: f.gen, by: f.by, alias: true})
					entries = append(entries, backend.Entry{Key: k, Info: info, Value: value})
				}
			}
		}
	}
	// A file renamed away from a key leaves its store copy there until
	// this flush: a new file at that key replaces that copy.
	moved := make(map[string]backend.Version)
	for _, s := range saved {
		if s.f.from != "" && s.f.from != s.f.key {
			moved[s.f.from] = s.f.base
		}
	}
	for i := range saved {
		if f := saved[i].f; f.link != nil && len(f.link.names) > 1 {
			// Every name of a stored group is the node's version.
			var ok bool
			if saved[i].expect, ok = c.bases[entries[i].Key]; !ok && f.from != "" {
				saved[i].expect = f.base
			}
			continue
		}
		saved[i].expect = c.expectLocked(saved[i].f, moved)
	}
	dentries, ddirs := c.dirEntriesLocked()
	dgens := make([]uint64, len(ddirs))
	for i, d := range ddirs {
		dgens[i] = d.gen
	}
	// The clean parents of what is saved: a store that keeps real
	// directories moves their mtimes while it writes in them, and is
	// told them again at the end.
	touched := make(map[string]bool)
	for _, e := range entries {
		touched[parentOf(e.Key)] = true
	}
	var dlate []backend.Entry
	for k := range touched {
		if d, ok := c.dirs[k]; ok && k != "" && d.gen == 0 && !c.Local(k) {
			dlate = append(dlate, backend.Entry{Key: k, Info: d.infoLocked()})
		}
	}
	slices.SortFunc(dlate, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	gone := maps.Clone(c.gone)
	removedGen := make(map[string]uint64, len(c.removed))
	var removed []string
	var delExpect map[string]backend.Version
	if strict || c.conditionalDeletes() {
		delExpect = make(map[string]backend.Version)
	}
	for k, g := range c.removed {
		removedGen[k] = g
		if !c.Local(k) {
			removed = append(removed, k)
			if delExpect == nil {
				continue
			}
			// The version the delete removes: the copy of a file removed
			// there, or of one renamed away from there. A key of neither
			// (a directory) is deleted whatever it holds.
			if v, ok := c.bases[k]; ok {
				delExpect[k] = v
			} else if v, ok := moved[k]; ok {
				delExpect[k] = v
			}
		}
	}
	c.mu.Unlock()

	c.sealEntries(entries, true)
	c.deriveAttrs(entries)
	c.mu.Lock()
	for _, e := range entries {
		// What the store is about to hold: an external watcher seeing it
		// come back recognises memfs's own write (Echo).
		c.addWrittenLocked(e.Key, pendingStampOf(e.Info))
	}
	c.mu.Unlock()
	c.sealEntries(dentries, true) // their attributes
	c.sealEntries(dlate, true)
	failed, dfailed, kept, err := c.saveAndDelete(ctx, entries, saved, removed, delExpect, dentries, dlate)
	if err != nil {
		return err // a conflict: nothing was written
	}

	c.mu.Lock()
	if c.opts.OnConflict != KeepBeside {
		c.keptBesideEventsLocked(kept)
	}
	c.stats.flushes++
	c.stats.last = c.now()
	c.stats.lastErr = nil
	var refusedDirs []string
	for i, d := range ddirs {
		if _, bad := dfailed[dentries[i].Key]; !bad {
			if now, ok := c.dirs[dentries[i].Key]; ok && now == d {
				d.base = backend.VersionOf(dentries[i].Info) // what the store holds of it now
			} else {
				c.leftDuringFlushLocked(dentries[i])
			}
		}
		if _, bad := dfailed[d.key]; !bad && d.gen == dgens[i] {
			d.gen = 0
			delete(c.ddirty, d)
		} else if bad {
			refusedDirs = append(refusedDirs, d.key)
		}
	}
	for _, e := range dlate {
		if d, ok := c.dirs[e.Key]; ok {
			if _, bad := dfailed[e.Key]; !bad {
				d.base = backend.VersionOf(e.Info)
			}
		}
	}
	maps.Copy(failed, dfailed)
	if len(failed) > 0 {
		c.stats.lastErr = &FlushError{Failed: failed}
	}
	if len(failed) > 0 && len(failed) == len(entries)+len(removed)+len(dentries) {
		c.mu.Unlock()
		ferr := &FlushError{Failed: failed}
		c.log.Error("flush failed; entries stay dirty", "entries", len(entries), "removed", len(removed), "err", ferr)
		return wrapf("flush: %w", ferr)
	}
	// What the store refused stays dirty; the rest is committed.
	var refused []*file
	if len(failed) > 0 {
		keep := saved[:0:0]
		keepEntries := entries[:0:0]
		for i, s := range saved {
			if _, bad := failed[entries[i].Key]; bad {
				s.f.jfull = true
				refused = append(refused, s.f)
				continue
			}
			keep = append(keep, s)
			keepEntries = append(keepEntries, entries[i])
		}
		saved, entries = keep, keepEntries
		keptRemoved := removed[:0:0]
		for _, k := range removed {
			if _, bad := failed[k]; bad {
				delete(removedGen, k)
				delete(gone, k)
				continue
			}
			keptRemoved = append(keptRemoved, k)
		}
		removed = keptRemoved
	}
	c.stats.saved, c.stats.deleted = len(entries), len(removed)
	for i, s := range saved {
		c.savedWrittenLocked(entries[i].Key, stampOf(entries[i].Info))
		if f, ok := c.files[entries[i].Key]; !ok || f != s.f {
			c.leftDuringFlushLocked(entries[i])
		} else {
			delete(c.bases, entries[i].Key)
		}
		if s.alias {
			continue
		}
		if s.f.key != "" {
			s.f.from = entries[i].Key // what the store now holds of it
			s.f.base = backend.VersionOf(entries[i].Info)
			if c.mergeBase != nil {
				c.keepMergeBaseLocked(s.f, entries[i].Value, toXAttrList(entries[i].Info.XAttrs), entries[i].Info.Mode)
			}
		}
		if s.f.key == entries[i].Key {
			c.showDerivedLocked(s.f, entries[i].Info.XAttrs)
		}
		if s.f.gen != s.gen {
			// Written again during the flush: stays dirty, and the
			// journal, which no longer holds what the store does,
			// needs the whole value next.
			s.f.jfull = true
			continue
		}
		delete(c.dirty, s.f)
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
	for k, g := range removedGen {
		if c.removed[k] == g {
			delete(c.removed, k)
			delete(c.bases, k)
		}
	}
	for k, by := range gone {
		if c.gone[k] == by {
			delete(c.gone, k)
		}
	}
	conflictEvs := c.conflicts
	c.conflicts = nil
	c.mu.Unlock()
	c.sendEvents(ctx, append(conflictEvs, c.events(saved, entries, removed, removedGen, gone)...))
	if c.opts.Saved != nil && (len(entries) > 0 || len(removed) > 0) {
		c.opts.Saved(ctx, entries, removed)
	}
	if c.opts.Journal != nil {
		if err := c.opts.Journal.Truncate(through); err != nil {
			// The store has the values, but the journal still holds
			// older records of them, which a replay would put back over
			// changes flushed but never closed: not a success.
			c.log.Error("journal truncate failed after a flush; the flush is reported failed", "err", err)
			return wrapf("flush: journal truncate: %w", err)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	// The truncate took the refused entries' records with it: record
	// them again, at a new generation, so that a crash still finds them.
	// Directories first: a replay makes them before the files in them.
	if len(refusedDirs) > 0 {
		c.mu.Lock()
		c.gen++
		gen := c.gen
		c.mu.Unlock()
		if err := c.journalDir(gen, refusedDirs...); err != nil {
			c.log.Error("journal append of directories the store refused failed", "err", err)
		}
	}
	for _, f := range refused {
		c.mu.Lock()
		key := f.key
		if _, dirty := c.dirty[f]; key != "" && dirty {
			c.markDirtyLocked(f)
		}
		c.mu.Unlock()
		if key != "" {
			if err := c.journalKey(key); err != nil {
				c.log.Error("journal append of an entry the store refused failed", "key", key, "err", err)
			}
		}
	}
	ferr := &FlushError{Failed: failed}
	c.log.Error("flush: the store refused some entries; they stay dirty, the others are saved", "err", ferr)
	return wrapf("flush: %w", ferr)
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

// FlushStatus reports the outcome of the last Flush.
func (c *Context) FlushStatus() FlushStatus {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return FlushStatus{Time: c.stats.last, Err: c.stats.lastErr, Flushes: c.stats.flushes,
		Saved: c.stats.saved, Deleted: c.stats.deleted}
}

// Counts reports the size of the session: files indexed, files loaded,
// files dirty (hidden ones included), keys pending deletion.
func (c *Context) Counts() (indexed, loaded, dirty, removed int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, f := range c.files {
		if f.loaded {
			loaded++
		}
	}
	return len(c.files), loaded, len(c.dirty), len(c.removed)
}

// Replay applies journal records (from a crashed earlier process) to the
// session, in generation order, as changes to flush.
func (c *Context) Replay(records []journal.Record) error {
	c.replaying.Store(true)
	defer c.replaying.Store(false)
	// Appends of concurrent closers may reach the file slightly out of
	// generation order; the generation is the order of the changes.
	records = slices.Clone(records)
	slices.SortStableFunc(records, func(a, b journal.Record) int { return cmp.Compare(a.Gen, b.Gen) })
	for _, r := range records {
		for _, e := range r.Entries {
			if r.Append {
				// An append must not be applied twice: after a kill
				// between a flush's save and its truncate, the store's
				// value already ends with it. An append sets the mtime
				// to the time of the write, so a store value as new is
				// one that holds it.
				if c.storeIsNewer(e) {
					c.log.Info("journal append older than the store's value; skipped", "key", e.Key)
					continue
				}
				if err := c.replayAppend(e); err != nil {
					return err
				}
				c.replayBase(r, e.Key, false)
				continue
			}
			// A whole record is replayed whatever the store holds: the
			// generation orders changes, never an mtime (a process may
			// set one in the past). A record the store already holds
			// (killed between a flush's save and its truncate) gives
			// the same entry again.
			if err := c.put(e); err != nil {
				if !errors.Is(err, ErrNotDir) || !c.moveAsideBlocking(e.Key) {
					return err
				}
				if err := c.put(e); err != nil {
					return err
				}
			}
			c.replayBase(r, e.Key, false)
		}
		// Children before their directories.
		removed := slices.Clone(r.Removed)
		slices.SortFunc(removed, func(a, b string) int { return strings.Compare(b, a) })
		for _, k := range removed {
			err := c.Delete(k)
			if errors.Is(err, ErrIsDir) {
				err = c.Rmdir(k)
				if errors.Is(err, ErrNotEmpty) {
					// Something created under it later in the
					// journal's order was replayed before: keep both.
					c.log.Warn("journal: a removed directory is not empty at replay; kept", "key", k)
					err = nil
				}
			}
			if err != nil && !isNotExist(err) {
				return err
			}
			c.replayBase(r, k, true)
		}
	}
	return nil
}

// replayBase makes the version record r says the change of key was made on
// (journal.Record.Bases) what the next flush expects of key, under a
// conflict policy: another writer's change since is then met as a
// conflict, and resolved, rather than overwritten. removed: key was
// removed (its delete expects the version). The store's value the session
// holds now is no merge base for the replayed change.
func (c *Context) replayBase(r journal.Record, key string, removed bool) {
	v, ok := r.Bases[key]
	if !ok || c.opts.OnConflict == KeepBeside {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if removed {
		if _, gone := c.removed[key]; gone {
			c.bases[key] = v
		}
		return
	}
	if f, ok := c.files[key]; ok && f.gen != 0 {
		c.setExpectLocked(f, key, v)
		delete(c.mergeBase, f)
	}
}

// moveAsideBlocking renames the nearest ancestor of key that is not a
// directory (a node another program put where memfs had a directory) to a
// conflict name beside it, and reports whether it found one: a replayed
// change under that directory then has its place, and both are kept.
func (c *Context) moveAsideBlocking(key string) bool {
	for k := parentOf(key); k != ""; k = parentOf(k) {
		c.mu.RLock()
		_, blocking := c.files[k]
		c.mu.RUnlock()
		if !blocking {
			continue
		}
		ck := ConflictKey(k, c.now())
		if err := c.Rename(context.Background(), k, ck, RenameNoReplace); err != nil {
			c.log.Error("journal: cannot move aside a node in the way of a replayed change", "key", k, "err", err)
			return false
		}
		c.log.Warn("journal: a node is where a directory of the journal goes; kept beside it", "key", k, "kept_as", ck)
		return true
	}
	return false
}

// replayAppend appends e.Value to the key's value (creating the key with
// e's metadata when it is missing), with e's metadata.
func (c *Context) replayAppend(e backend.Entry) error {
	if c.Has(e.Key) {
		defer unpin(c.pinKey(e.Key)) // the memory budget may not drop it before Get
		if err := c.Resolve(context.Background(), e.Key); err != nil {
			return err
		}
		old, ok := c.Get(e.Key)
		if !ok {
			return notExist("replay", e.Key) // removed meanwhile: never append to nothing
		}
		e.Value = append(append(make([]byte, 0, len(old)+len(e.Value)), old...), e.Value...)
	}
	return c.put(e)
}

// storeIsNewer reports whether the session holds e.Key clean, as indexed
// from the store, with a modification time at or after e's.
func (c *Context) storeIsNewer(e backend.Entry) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, ok := c.files[e.Key]
	return ok && f.gen == 0 && f.mtime >= e.Info.MTime.UnixNano()
}

// put stores e with its own metadata, as a completed change.
func (c *Context) put(e backend.Entry) error {
	if e.Info.Mode.IsDir() {
		return c.putDir(e)
	}
	if err := c.creatable("put", e.Key); err != nil {
		return err
	}
	c.mu.Lock()
	if f, ok := c.files[e.Key]; ok && f.link != nil && len(f.link.names) > 1 && f.link.id != e.Info.Link {
		// The name is one of a node's several, and e is not that node:
		// the name leaves the group (the others keep their value).
		c.unlinkNameLocked(f, e.Key)
	}
	var f *file
	var created bool
	if e.Info.Link != "" {
		// Another name of a node the session has under other names: e
		// holds that node's value and attributes, which it takes.
		if f = c.joinGroupLocked(e.Key, e.Info.Link); f != nil {
			created = true
		}
	}
	if f == nil {
		var err error
		if f, created, err = c.createLocked("put", e.Key, e.Info.Mode, e.Info.UID, e.Info.GID, false); err != nil {
			c.mu.Unlock()
			return err
		}
	}
	f.data, f.loaded, f.size = e.Value, true, int64(len(e.Value))
	f.shared.Store(false)
	f.mode, f.uid, f.gid, f.rdev = e.Info.Mode&backend.ModeMask, e.Info.UID, e.Info.GID, e.Info.Rdev
	f.mtime = e.Info.MTime.UnixNano()
	if e.Info.MTime.IsZero() {
		f.mtime = c.now().UnixNano()
	}
	// The entry's attributes replace the file's, except that a file keeps
	// its creation time when the entry has none.
	x := toXAttrList(backend.CloneXAttrs(e.Info.XAttrs))
	if created, ok := f.xattrs.get(meta.Created); ok {
		if _, has := x.get(meta.Created); !has {
			x = x.with(meta.Created, created)
		}
	}
	f.xattrs = x
	if _, ok := x.get(meta.Writer); !ok {
		c.setWriterLocked(f, nil)
	} else {
		f.by = nil
	}
	f.changed = true
	f.ver++
	if e.Info.Link != "" && f.link == nil {
		f.link = &linkGroup{id: e.Info.Link, names: []string{e.Key}}
	}
	c.markDirtyLocked(f)
	f.atime = timeOr(e.Info.ATime, time.Unix(0, f.mtime))
	if !e.Info.CTime.IsZero() {
		f.ctime = e.Info.CTime.UnixNano()
	}
	c.mu.Unlock()
	c.emitWritten(e.Key, created, OriginLocal)
	return nil
}

// Put stores entry e with its metadata (mode, owner, mtime), marks it
// dirty and records it in the journal. The Context takes ownership of
// e.Value.
func (c *Context) Put(e backend.Entry) error {
	if err := c.put(e); err != nil {
		return err
	}
	return c.journalKey(e.Key)
}

// journalKey records the current value of key as a completed change.
func (c *Context) journalKey(key string) error { return c.journalKeyDropping(key, "") }

// journalKeyDropping is journalKey, with the record making the earlier
// records of dropped no longer matter (journal.Record.Dropped): the change
// they hold is key's now (keep-both moved it to a conflict copy).
func (c *Context) journalKeyDropping(key, dropped string) error {
	if c.opts.Journal == nil || c.Local(key) {
		return nil
	}
	c.mu.Lock()
	f, ok := c.files[key]
	if !ok || !f.loaded {
		c.mu.Unlock()
		return nil
	}
	e := backend.Entry{Key: key, Info: f.infoLocked(), Value: f.shareRLocked()}
	gen := f.gen
	f.jlen, f.jfull = int64(len(f.data)), false
	c.mu.Unlock()
	var err error
	if dropped == "" || c.Local(dropped) {
		err = c.journal(gen, []backend.Entry{e}, nil)
	} else {
		err = c.journalDropping(gen, e, dropped)
	}
	if err != nil {
		c.needFullRecord(f)
		return err
	}
	return nil
}

// needFullRecord makes the next journal record of f hold its whole value:
// a record was lost.
func (c *Context) needFullRecord(f *file) {
	c.mu.Lock()
	f.jfull = true
	c.mu.Unlock()
}

// JournalDirty records every dirty entry's whole value in the journal, at
// its current generation: after the journal was reset with entries still
// dirty (the store refused them at the replay of an earlier session), so
// that a crash still finds them.
func (c *Context) JournalDirty() error {
	c.mu.RLock()
	var keys []string
	for f := range c.dirty {
		if f.key != "" && !c.Local(f.key) {
			keys = append(keys, f.key)
		}
	}
	c.mu.RUnlock()
	var errs []error
	for _, k := range keys {
		errs = append(errs, c.journalKey(k))
	}
	return errors.Join(errs...)
}

// leftDuringFlushLocked records that the node a flush saved as e left
// e's key while the flush ran (removed, or renamed away): the store holds
// the session's own version there now, which the next save or delete of
// the key replaces (a node made at the name since is never taken for
// another writer's).
func (c *Context) leftDuringFlushLocked(e backend.Entry) {
	c.bases[e.Key] = backend.VersionOf(e.Info)
}

// expectLocked is the store's version that a save of f replaces: the copy
// f was read from or last saved as, when f still has that key; the copy of
// a file removed from f's key (f was renamed over it) or renamed away from
// it (moved); else none.
func (c *Context) expectLocked(f *file, moved map[string]backend.Version) backend.Version {
	if f.from == f.key {
		return f.base
	}
	if v, ok := c.bases[f.key]; ok {
		return v
	}
	return moved[f.key]
}
