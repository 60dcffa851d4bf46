package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"slices"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/redact"
)

// This file applies changes that another program made in the store (an
// editor on a directory store, a git pull) to the session.
//
// Conflicts lose nothing: when the key is dirty in the session, the
// session's value stays under the key (and is saved at the next flush) and
// the external value is kept beside it under ConflictKey, as a new dirty
// file, so that it is saved too.
//
// Values from outside are redacted on ingest, before the session (and
// through it the mount, the index and the event log) sees them: the
// watcher passes what it read through Ingest, rewrites the store's copy
// when Ingest found a secret (announced by Rewriting, so that Echo knows
// it, and recorded by Rewritten), and applies only the result.
// ApplyExternal seals what it is given again, so that a caller that
// skipped Ingest still keeps no secret in memory.

// IngestAgent is the agent of the event that records memfs's rewrite of a
// store file another program wrote with a secret in it (a redaction on
// ingest), in its Writer beside memfs's own uid, pid and command.
const IngestAgent = "memfs:redact-on-ingest"

// Redactor returns the session's redactor: nil when it persists values as
// written (Options.Redactor).
func (c *Context) Redactor() *redact.Redactor { return c.opts.Redactor }

// Ingest returns e, read from the store after another program wrote it, as
// memfs may hold it: its value and attribute values redacted, and any
// attribute whose name holds a secret dropped. The findings say what was
// redacted (rule and range, never the secret); none means e is returned
// unchanged. A key whose name holds a secret is refused with an error
// wrapping ErrSecretName that shows the name redacted. Without a Redactor,
// e is returned as is.
func (c *Context) Ingest(e backend.Entry) (backend.Entry, []redact.Finding, error) {
	if err := backend.ValidateKey(e.Key); err != nil {
		return e, nil, err
	}
	if err := c.checkName("external", e.Key); err != nil {
		return e, nil, err
	}
	r := c.opts.Redactor
	if r == nil {
		return e, nil, nil
	}
	// An attribute name cannot be redacted into another valid name: the
	// attribute goes (its findings say so), as setxattr of it is refused.
	var dropped []redact.Finding
	for name := range e.Info.XAttrs {
		_, f := r.Redact(e.Key, []byte(name))
		if len(f) == 0 {
			continue
		}
		if len(dropped) == 0 {
			e.Info.XAttrs = backend.CloneXAttrs(e.Info.XAttrs)
		}
		delete(e.Info.XAttrs, name)
		dropped = append(dropped, f...)
	}
	sealed, findings := c.seal(e)
	return sealed, append(dropped, findings...), nil
}

// Rewriting tells the session that memfs itself is about to write info's
// version of key to the store (the redacted copy of an external change),
// so that Echo recognises it when the watcher sees it come back. Call it
// before the write (the watcher may see the write before Rewriting returns
// otherwise), with a zero CTime where the store sets it, and again after,
// with the CTime the store gave it.
func (c *Context) Rewriting(key string, info backend.Info) {
	c.mu.Lock()
	c.addWrittenLocked(key, pendingStampOf(info))
	c.savedWrittenLocked(key, stampOf(info)) // info with the ctime the store gave the write
	if f, ok := c.files[key]; ok && f.from == key {
		f.base = backend.VersionOf(info)
	}
	c.mu.Unlock()
}

// Rewritten records in the event log (Options.Events) that memfs rewrote e
// in the store: a write by memfs with agent IngestAgent, with the size and
// hash of the redacted value it wrote.
func (c *Context) Rewritten(ctx context.Context, e backend.Entry) {
	if c.opts.Events == nil {
		return
	}
	sum := sha256.Sum256(e.Value)
	c.sendEvents(ctx, []Event{{Op: EventWrite, Key: e.Key, Size: int64(len(e.Value)), SHA256: hex.EncodeToString(sum[:]), Writer: c.ingestWriter()}})
}

// Echo reports whether the store's version of key, with info, is what the
// session already has or last wrote: memfs's own flush seen coming back,
// or a change already applied. The whole node is compared (see stamp):
// another writer's chmod, chown or setxattr, which leaves the size and
// mtime as they were, is a change. A directory is compared by its mode,
// owner and attributes (a store that keeps real directories moves their
// mtimes as entries come and go).
func (c *Context) Echo(key string, info backend.Info) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if info.Mode.IsDir() {
		d, ok := c.dirs[key]
		if !ok {
			return false
		}
		mine := stamp{mode: fs.ModeDir | d.mode, uid: d.uid, gid: d.gid, xattrs: xattrsHash(d.xattrs)}
		found := stampOf(info)
		found.size, found.mtime = 0, 0
		return c.sameNode(mine, found)
	}
	st := stampOf(info)
	for _, w := range c.written[key] {
		if c.sameNode(w, st) {
			return true
		}
	}
	f, ok := c.files[key]
	return ok && f.gen == 0 && c.sameNode(f.stampLocked(), st)
}

// ApplyExternalDir makes directory key, as another writer made it or
// changed its mode, owner or attributes (info), the session's: clean (the
// store has it), with the kernel told. A directory whose attributes have
// unflushed changes in the session keeps them, but for its permissions:
// the most restrictive of both (the intersection of the bits) wins, so
// that another writer's chmod that closes a directory is never undone by
// this one's flush; the log says so. A file where the directory goes is
// left as it is (the next flush meets the conflict).
func (c *Context) ApplyExternalDir(key string, info backend.Info) error {
	if err := backend.ValidateKey(key); err != nil {
		return err
	}
	if !info.Mode.IsDir() {
		return pathErr("external", key, ErrNotDir)
	}
	c.mu.Lock()
	if _, isFile := c.files[key]; isFile {
		c.mu.Unlock()
		c.log.Warn("another writer made a directory where the session has a file; kept as it is until the next flush", "key", key)
		return nil
	}
	d, ok := c.dirs[key]
	if !ok {
		var err error
		if d, err = c.mkdirAllLocked(key, info.MTime.UnixNano(), false); err != nil {
			c.mu.Unlock()
			return err
		}
		d.setInfo(info)
		d.base = backend.VersionOf(info)
		c.mu.Unlock()
		c.emit(Change{Op: OpMkdir, Key: key, Origin: OriginExternal})
		return nil
	}
	if d.gen != 0 {
		ours, theirs := d.mode, backend.PermBits(info.Mode)
		d.mode = ours & theirs
		d.base = backend.VersionOf(info)
		c.mu.Unlock()
		if d.mode != ours {
			c.log.Warn("another writer changed the mode of a directory with unflushed changes: the most restrictive mode of both is kept",
				"key", key, "ours", ours.String(), "theirs", theirs.String(), "kept", (ours & theirs).String())
		}
		c.emit(Change{Op: OpAttr, Key: key, Origin: OriginExternal})
		return nil
	}
	mtime, atime, ctime := d.mtime, d.atime, d.ctime
	d.setInfo(info)
	d.mtime, d.atime, d.ctime = mtime, atime, ctime // its entries' times are the session's
	d.base = backend.VersionOf(info)
	c.mu.Unlock()
	c.emit(Change{Op: OpAttr, Key: key, Origin: OriginExternal})
	return nil
}

// MergeExternalMeta takes in theirs, another writer's version of key,
// when key has unflushed changes and theirs differs from the version
// those changes were made on in its metadata alone (the same size and
// mtime: a chmod, chown or setxattr), and reports whether it did. The
// session's file keeps its value and takes, by a documented rule, the
// metadata of both: the most restrictive mode (the intersection of the
// permission bits, so that a chmod that closes a file is never undone),
// their owner, and the attributes of both (ours where both set one).
// Its next save then replaces theirs knowingly: no conflict copy, and
// the log says what was kept.
func (c *Context) MergeExternalMeta(theirs backend.Entry) bool {
	c.mu.Lock()
	f, ok := c.files[theirs.Key]
	if !ok || f.gen == 0 || !c.mergeMetaLocked(f, theirs.Key, theirs.Info) {
		c.mu.Unlock()
		return false
	}
	mode := f.mode
	c.mu.Unlock()
	c.log.Warn("another writer changed the metadata of a file with unflushed changes: both kept (the most restrictive mode, their owner, the attributes of both)",
		"key", theirs.Key, "mode", mode.String())
	c.emit(Change{Op: OpAttr, Key: theirs.Key, Origin: OriginExternal})
	if err := c.journalKey(theirs.Key); err != nil {
		c.log.Error("journal append after a metadata merge failed", "key", theirs.Key, "err", err)
	}
	return true
}

// mergeMetaLocked is MergeExternalMeta's rule, on f, dirty under key;
// theirs is the store's version's Info.
func (c *Context) mergeMetaLocked(f *file, key string, theirs backend.Info) bool {
	base := c.expectLocked(f, nil)
	if base.IsZero() || base.Size != theirs.Size || base.MTime != theirs.MTime.UnixNano() ||
		f.mode.Type() != theirs.Mode.Type() {
		return false // their content changed too (or they made it): a conflict
	}
	perm := backend.PermBits(f.mode) & backend.PermBits(theirs.Mode)
	f.mode = f.mode&^backend.PermBits(f.mode) | perm
	f.uid, f.gid = theirs.UID, theirs.GID
	x := f.xattrs
	for name, v := range theirs.XAttrs {
		if _, ours := x.get(name); !ours {
			x = x.with(name, v)
		}
	}
	f.xattrs = x
	// A change of its own: a flush that took the file before it leaves
	// it dirty, and the next saves the merge.
	c.markDirtyLocked(f)
	c.setExpectLocked(f, key, backend.VersionOf(theirs))
	return true
}

// ExternalParts reports what of key the store's version with info changes
// in the session: its content (size or mtime; a key the session lacks is
// all content) and its attributes (mode, owner, extended attributes), so
// that watchers can be told each (IN_MODIFY, IN_ATTRIB).
func (c *Context) ExternalParts(key string, info backend.Info) (content, attrs bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if d, ok := c.dirs[key]; ok {
		return false, backend.PermBits(info.Mode) != d.mode || info.UID != d.uid || info.GID != d.gid ||
			xattrsHash(toXAttrList(info.XAttrs)) != xattrsHash(d.xattrs)
	}
	f, ok := c.files[key]
	if !ok {
		return true, false
	}
	mine, found := f.stampLocked(), stampOf(info)
	content = mine.size != found.size || mine.mtime != found.mtime
	mine.size, mine.mtime = found.size, found.mtime
	return content, !c.sameNode(mine, found)
}

// Dirty reports whether key has changes the store has not seen.
func (c *Context) Dirty(key string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, ok := c.files[key]
	return ok && f.gen != 0
}

// Policy is the session's conflict policy (Options.OnConflict).
func (c *Context) Policy() ConflictPolicy { return c.opts.OnConflict }

// Removed reports whether key was removed in the session and the store
// has not been told yet.
func (c *Context) Removed(key string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.removed[key]
	return ok
}

// ConflictKey is the name under which an external version of key is kept
// when it conflicts with unflushed changes: the name with
// ".conflict-<UTC time>" before its extension, in the same directory
// ("notes.md" -> "notes.conflict-20261122T232400Z.md").
func ConflictKey(key string, t time.Time) string { return backend.ConflictKey(key, t) }

// ApplyExternal makes e, read from the store after another program changed
// it, the session's value of e.Key: clean (the store has it), loaded, and
// with the kernel told (OpContent). When the key is dirty it is a
// conflict: the session keeps its value and e is stored beside it under
// ConflictKey, which ApplyExternal returns; under a conflict policy
// (Options.OnConflict) the session's value stays and nothing else happens:
// the next flush meets the conflict and resolves it. e should come from Ingest; it
// is sealed again here (a no-op then), so that no secret stays in memory
// even if it did not, and a name with a secret is refused.
func (c *Context) ApplyExternal(e backend.Entry) (conflict string, err error) {
	if e.Info.Mode.IsDir() {
		return "", c.ApplyExternalDir(e.Key, e.Info)
	}
	c.mu.RLock()
	f, had := c.files[e.Key]
	retyped := had && f.mode.Type() != e.Info.Mode.Type()
	c.mu.RUnlock()
	if retyped || (!had && !e.Info.Mode.IsRegular() && e.Info.Mode.Type() != fs.ModeSymlink) {
		// A node whose type changed under its name, and fifos, sockets
		// and devices another program made, are indexed at the next
		// mount.
		c.log.Debug("external change of a node's type, or a special file; seen at the next mount", "key", e.Key)
		return "", nil
	}
	e, _, err = c.Ingest(e)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if f, ok := c.files[e.Key]; ok && f.gen != 0 && c.opts.OnConflict != KeepBeside {
		// Under a conflict policy the flush decides: it still expects
		// the version ours was made on, meets theirs, and resolves.
		c.mu.Unlock()
		c.log.Info("external change of a key with unflushed changes; the next flush resolves it by the conflict policy",
			"key", e.Key, "policy", c.opts.OnConflict.String())
		return "", nil
	}
	if f, ok := c.files[e.Key]; ok && f.gen != 0 {
		// The store's version is the external one now, kept beside the
		// key as a conflict copy: the next flush replaces it knowingly.
		if f.from == e.Key {
			f.base = backend.VersionOf(e.Info)
		} else {
			c.bases[e.Key] = backend.VersionOf(e.Info)
		}
		c.mu.Unlock()
		conflict = ConflictKey(e.Key, c.now())
		e.Key = conflict
		if err := c.put(e); err != nil {
			return "", err
		}
		return conflict, c.journalKey(conflict)
	}
	// Another program replacing one name of a node with hard links (an
	// editor's write and rename) makes the name a node of its own; the
	// others keep theirs.
	_, created, err := c.loadCleanLocked(e)
	c.mu.Unlock()
	if err != nil {
		return "", err
	}
	c.emitWritten(e.Key, created, OriginExternal)
	if !created {
		c.emit(Change{Op: OpContent, Key: e.Key, Origin: OriginExternal})
	}
	return "", nil
}

// RemoveExternal takes key out of the session after another program removed
// it from the store; the store is not asked to delete it again. A dirty key
// is a conflict: the session's value stays (and is saved again at the next
// flush), and RemoveExternal reports false.
func (c *Context) RemoveExternal(key string) (bool, error) {
	if err := backend.ValidateKey(key); err != nil {
		return false, err
	}
	c.mu.Lock()
	f, ok := c.files[key]
	if !ok {
		c.mu.Unlock()
		return true, nil
	}
	if f.gen != 0 {
		c.mu.Unlock()
		return false, nil
	}
	if f.link != nil && len(f.link.names) > 1 {
		// One name of several: the node stays, as the store has it,
		// under the others.
		c.detachNameLocked(f, key)
		c.mu.Unlock()
		c.emit(Change{Op: OpRemove, Key: key, Origin: OriginExternal})
		return true, nil
	}
	f.from = "" // the store no longer has it: no delete event either
	c.removeNameLocked(f, key, nil)
	// The store no longer has it: nothing to delete at the next flush.
	delete(c.removed, key)
	delete(c.written, key)
	delete(c.bases, key)
	c.mu.Unlock()
	c.emit(Change{Op: OpRemove, Key: key, Origin: OriginExternal})
	return true, nil
}

// RemoveExternalDir takes directory key out of the session after another
// writer removed it from the store, and reports whether it did: only an
// empty directory goes (the keys under one that is not empty leave first,
// by RemoveExternal; one that holds unflushed changes stays, and is saved
// again at the next flush). The removal, seen after them, wins over
// unflushed changes of the directory's own attributes (the removal of a
// key under it marks them, its mtime moving).
func (c *Context) RemoveExternalDir(key string) bool {
	if backend.ValidateKey(key) != nil {
		return false
	}
	c.mu.Lock()
	d, ok := c.dirs[key]
	if !ok || len(d.children) > 0 {
		c.mu.Unlock()
		return false
	}
	delete(c.dirs, key)
	delete(c.ddirty, d)
	d.gen = 0
	if parent, ok := c.dirs[parentOf(key)]; ok {
		_, name := backend.Split(key)
		delete(parent.children, name)
		parent.subdirs--
	}
	delete(c.bases, key)
	c.mu.Unlock()
	c.emit(Change{Op: OpRmdir, Key: key, Origin: OriginExternal})
	return true
}

// Unflushed returns the session's unflushed changes: every dirty,
// non-hidden file with its Info and loaded value (which the caller must not
// modify; not redacted), and the keys removed since the last flush. It
// takes the read lock only (see Entry).
func (c *Context) Unflushed() (dirty []backend.Entry, removed []string) {
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

// detachNameLocked takes the name key from f, which has others, as the
// store already has it: no removal to flush.
func (c *Context) detachNameLocked(f *file, key string) {
	f.link.names = slices.DeleteFunc(f.link.names, func(k string) bool { return k == key })
	delete(c.files, key)
	if parent, ok := c.dirs[parentOf(key)]; ok {
		_, name := backend.Split(key)
		delete(parent.children, name)
	}
	if f.key == key {
		f.key = f.link.names[0]
	}
	if f.from == key {
		f.from = f.key
	}
}
