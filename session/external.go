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
// Apply seals what it is given again, so that a caller that
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
func (x *External) Ingest(e backend.Entry) (backend.Entry, []redact.Finding, error) {
	c := x.c
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
func (x *External) Rewriting(key string, info backend.Info) {
	c := x.c
	c.mu.Lock()
	c.mu.echo.addLocked(key, pendingStampOf(info))
	c.mu.echo.savedLocked(key, stampOf(info)) // info with the ctime the store gave the write
	if f, ok := c.mu.tree.files[key]; ok && f.from == key {
		f.base = backend.VersionOf(info)
	}
	c.mu.Unlock()
}

// Rewritten records in the event log (Options.Events) that memfs rewrote e
// in the store: a write by memfs with agent IngestAgent, with the size and
// hash of the redacted value it wrote.
func (x *External) Rewritten(ctx context.Context, e backend.Entry) {
	c := x.c
	if c.opts.Events == nil {
		return
	}
	sum := sha256.Sum256(e.Value)
	// Refused, the event waits in the outbox: the next flush offers it
	// again, and fails until the log takes it.
	_ = c.sendEvents(ctx, []Event{{Op: EventWrite, Key: e.Key, Size: int64(len(e.Value)), SHA256: hex.EncodeToString(sum[:]), Writer: c.ingestWriter(), Saved: &e}})
}

// Echo reports whether the store's version of key, with info, is what the
// session already has or last wrote: memfs's own flush seen coming back,
// or a change already applied. The whole node is compared (see stamp):
// another writer's chmod, chown or setxattr, which leaves the size and
// mtime as they were, is a change. A directory is compared by its mode,
// owner and attributes (a store that keeps real directories moves their
// mtimes as entries come and go).
func (x *External) Echo(key string, info backend.Info) bool {
	c := x.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	if info.Mode.IsDir() {
		d, ok := c.mu.tree.dirs[key]
		if !ok {
			return false
		}
		mine := stamp{mode: fs.ModeDir | d.mode, uid: d.uid, gid: d.gid, xattrs: xattrsHash(d.xattrs)}
		found := stampOf(info)
		found.size, found.mtime = 0, 0
		return c.sameNode(mine, found)
	}
	st := stampOf(info)
	f, ok := c.mu.tree.files[key]
	// A node of several names that the session holds, clean, as a node
	// of one is no version of memfs's own any more, whatever memfs wrote:
	// the session took its other names away since (and flushed), and
	// another program gave it some again (a linked node's version has no
	// ctime to tell them apart: seed 61535 of the two-writer model). A
	// node with unflushed changes is not: the session may have taken a
	// name away without flushing yet, and its earlier save comes back.
	relinked := st.linked && ok && f.gen == 0 && !f.stampLocked().linked
	if !relinked && c.mu.echo.wroteLocked(key, st, c.sameNode) {
		return true
	}
	if !ok || f.gen != 0 {
		return false
	}
	mine := f.stampLocked()
	if f.from == key {
		// The store's version the clean copy came from: another node of
		// the same size and mtime (renamed over it within a tick of the
		// clock) has another change time.
		mine.ctime = f.base.CTime
	}
	return c.sameNode(mine, st)
}

// ApplyDir makes directory key, as another writer made it or
// changed its mode, owner or attributes (info), the session's: clean (the
// store has it), with the kernel told. A directory with unflushed changes
// in the session (its own attributes, or its entries) takes theirs by the
// rule of a file's metadata (MergeMeta): the most restrictive mode (the
// intersection of the bits, so that another writer's chmod that closes a
// directory is never undone by this one's flush; the log says so), their
// owner, and the attributes of both (ours where both set one). A file where the directory goes is
// left as it is (the next flush meets the conflict). A new directory is
// told as OpMkdir, as is each directory above it that the session lacked
// (made with info's attributes: a caller that knows theirs applies them
// first), and the directory it appeared in as OpAttr: that one's mtime
// moves, as a file made in it moves it, so that the kernel's cached
// listing of it goes (nothing to flush: the store has the entry).
func (x *External) ApplyDir(key string, info backend.Info) error {
	c := x.c
	if err := backend.ValidateKey(key); err != nil {
		return err
	}
	if !info.Mode.IsDir() {
		return pathErr("external", key, ErrNotDir)
	}
	if !x.giveWay(key, info.Mode) {
		c.log.Warn("another writer made a directory where the session has a file with unflushed changes; kept as it is until the next flush", "key", key)
		return nil
	}
	c.mu.Lock()
	d, ok := c.mu.tree.dirs[key]
	if !ok {
		// The directories made, from the top, and the one the topmost
		// was made in, whose listing gains a name.
		var made []string
		above := key
		for ; above != ""; above = parentOf(above) {
			if _, ok := c.mu.tree.dirs[above]; ok {
				break
			}
			made = append(made, above)
		}
		slices.Reverse(made)
		var err error
		if d, err = c.mkdirAllLocked(key, info.MTime.UnixNano(), false); err != nil {
			c.mu.Unlock()
			return err
		}
		d.setInfo(info)
		d.setBase(info)
		// The kernel keeps a directory's listing (FOPEN_CACHE_DIR) until
		// the directory changes through the mount or its mtime moves;
		// this one changed behind it, and a name it never looked up
		// has no entry to invalidate. Its mtime moves, as a file made
		// in it moves it (createLocked), and OpAttr has the mount drop
		// its cached listing now. Not a change to flush: the store's
		// directory has the new entry already.
		now := c.now().UnixNano()
		if a, ok := c.mu.tree.dirs[above]; ok {
			a.mtime, a.ctime = now, now
		}
		c.mu.Unlock()
		for _, k := range made {
			c.emit(Change{Op: OpMkdir, Key: k, Origin: OriginExternal})
		}
		c.emit(Change{Op: OpAttr, Key: above, Origin: OriginExternal})
		return nil
	}
	if d.gen != 0 {
		ours := d.attrs()
		both := c.mergeDirLocked(d, info)
		kept := d.attrs()
		c.mu.Unlock()
		if both && kept.mode != ours.mode {
			c.log.Warn("another writer changed the mode of a directory with unflushed changes: the most restrictive mode of both is kept",
				"key", key, "ours", ours.mode.String(), "theirs", backend.PermBits(info.Mode).String(), "kept", kept.mode.String())
		}
		if kept != ours {
			c.emit(Change{Op: OpAttr, Key: key, Origin: OriginExternal})
		}
		return nil
	}
	mtime, atime, ctime := d.mtime, d.atime, d.ctime
	d.setInfo(info)
	d.mtime, d.atime, d.ctime = mtime, atime, ctime // its entries' times are the session's
	d.setBase(info)
	c.mu.Unlock()
	c.emit(Change{Op: OpAttr, Key: key, Origin: OriginExternal})
	return nil
}

// mergeDirLocked takes into d, a directory with unflushed changes,
// another writer's version of it with info, and records that version as
// the one d's next save replaces. Its attributes (mode, owner, user.*
// attributes) merge three ways with the version d's changes were made on:
// a side that left them as they were takes the other's; when both
// changed them (or the base is unknown), the rule of a file's metadata
// (mergeMetaLocked): the most restrictive mode, their owner, the
// attributes of both (ours where both set one). A directory is dirty as
// soon as an entry in it changes, and its record changes as entries come
// and go on the other side too: neither is a change of its attributes.
// It reports whether both sides changed them.
func (c *Context) mergeDirLocked(d *dir, info backend.Info) (both bool) {
	ours, theirs, base := d.attrs(), dirAttrsOf(info), d.battrs
	switch {
	case ours == theirs, base.known && theirs == base:
		// Theirs left them as they were, or as ours are.
	case base.known && ours == base:
		d.mode, d.uid, d.gid = theirs.mode, info.UID, info.GID
		d.xattrs = toXAttrList(backend.CloneXAttrs(info.XAttrs))
	default:
		both = true
		d.mode &= theirs.mode
		d.uid, d.gid = info.UID, info.GID
		d.xattrs = withTheirs(d.xattrs, info.XAttrs)
	}
	d.setBase(info)
	return both
}

// withTheirs is ours with their attributes added where ours has none of
// that name (ours win where both set one).
func withTheirs(ours xattrList, theirs map[string][]byte) xattrList {
	for name, v := range theirs {
		if _, mine := ours.get(name); !mine {
			ours = ours.with(name, v)
		}
	}
	return ours
}

// MergeMeta takes in theirs, another writer's version of key,
// when key has unflushed changes and theirs differs from the version
// those changes were made on in its metadata alone (the same size and
// mtime: a chmod, chown or setxattr), and reports whether it did. The
// session's file keeps its value and takes, by a documented rule, the
// metadata of both: the most restrictive mode (the intersection of the
// permission bits, so that a chmod that closes a file is never undone),
// their owner, and the attributes of both (ours where both set one).
// Its next save then replaces theirs knowingly: no conflict copy, and
// the log says what was kept.
func (x *External) MergeMeta(theirs backend.Entry) bool {
	c := x.c
	c.mu.Lock()
	f, ok := c.mu.tree.files[theirs.Key]
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

// mergeMetaLocked is MergeMeta's rule, on f, dirty under key;
// theirs is the store's version's Info. A node with several names is
// never merged so: the version its changes were made on is that of one
// name, and another may be another node of the same size and mtime now
// (a conflict keeps both; TestTheirTwoNodesOfOneSizeAndTime).
func (c *Context) mergeMetaLocked(f *file, key string, theirs backend.Info) bool {
	if f.link != nil && len(f.link.names) > 1 {
		return false
	}
	base := c.expectLocked(f, nil)
	if base.IsZero() || base.Size != theirs.Size || base.MTime != theirs.MTime.UnixNano() ||
		f.mode.Type() != theirs.Mode.Type() {
		return false // their content changed too (or they made it): a conflict
	}
	perm := backend.PermBits(f.mode) & backend.PermBits(theirs.Mode)
	f.mode = f.mode&^backend.PermBits(f.mode) | perm
	f.uid, f.gid = theirs.UID, theirs.GID
	f.xattrs = withTheirs(f.xattrs, theirs.XAttrs)
	// A change of its own: a flush that took the file before it leaves
	// it dirty, and the next saves the merge.
	c.markDirtyLocked(f)
	c.setExpectLocked(f, key, backend.VersionOf(theirs))
	return true
}

// Parts reports what of key the store's version with info changes
// in the session: its content (size or mtime; a key the session lacks is
// all content) and its attributes (mode, owner, extended attributes), so
// that watchers can be told each (IN_MODIFY, IN_ATTRIB).
func (x *External) Parts(key string, info backend.Info) (content, attrs bool) {
	c := x.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	if d, ok := c.mu.tree.dirs[key]; ok {
		return false, backend.PermBits(info.Mode) != d.mode || info.UID != d.uid || info.GID != d.gid ||
			xattrsHash(toXAttrList(info.XAttrs)) != xattrsHash(d.xattrs)
	}
	f, ok := c.mu.tree.files[key]
	if !ok {
		return true, false
	}
	mine, found := f.stampLocked(), stampOf(info)
	content = mine.size != found.size || mine.mtime != found.mtime
	mine.size, mine.mtime = found.size, found.mtime
	return content, !c.sameNode(mine, found)
}

// KnowsGroup reports whether the session holds a node of the store's
// hard-link group id (Info.Link) under a name other than key. A group it
// does not know yet, or knows under key alone (a conflict copy a flush
// brought in), may have names it holds as nodes of their own (another
// program linked one of its files: the store reports no change of the
// name linked from), which a look at the store's listing finds.
func (x *External) KnowsGroup(id, key string) bool {
	c := x.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	g := c.groupLocked(id)
	return g != nil && slices.ContainsFunc(g.link.names, func(n string) bool { return n != key })
}

// GroupNames lists the session's names of the store's hard-link group id
// (Info.Link) whose node is not the one under key: names of one stored
// node that the session holds apart (the other was dirty when another
// program linked them), to which a change through key came too.
func (x *External) GroupNames(id, key string) []string {
	c := x.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	under := c.mu.tree.files[key]
	var names []string
	for n, f := range c.mu.tree.files {
		if f != under && f.link != nil && f.link.id == id {
			names = append(names, n)
		}
	}
	return names
}

// OtherNames lists the session's other names of the node under key when
// the store's node under key is not theirs any more: it is removed, or of
// another hard-link group (Info.Link; "" for a node of one name). Those
// names lost one: the store reports no change of theirs, but they may
// hold what was written or set through it before.
func (x *External) OtherNames(key, link string) []string {
	c := x.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, ok := c.mu.tree.files[key]
	if !ok || f.link == nil || (link != "" && f.link.id == link) {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(f.link.names), func(n string) bool { return n == key })
}

// Policy is the session's conflict policy (Options.OnConflict).
func (x *External) Policy() ConflictPolicy { return x.c.opts.OnConflict }

// ConflictKey is the name under which an external version of key is kept
// when it conflicts with unflushed changes: the name with
// ".conflict-<UTC time>" before its extension, in the same directory
// ("notes.md" -> "notes.conflict-20261122T232400Z.md").
func ConflictKey(key string, t time.Time) string { return backend.ConflictKey(key, t) }

// Apply makes e, read from the store after another program changed
// it, the session's value of e.Key: clean (the store has it), loaded, and
// with the kernel told (OpContent). When the key is dirty it is a
// conflict: the session keeps its value and e is stored beside it under
// ConflictKey, which Apply returns; under a conflict policy
// (Options.OnConflict) the session's value stays and nothing else happens:
// the next flush meets the conflict and resolves it. e should come from Ingest; it
// is sealed again here (a no-op then), so that no secret stays in memory
// even if it did not, and a name with a secret is refused.
func (x *External) Apply(e backend.Entry) (conflict string, err error) {
	c := x.c
	if e.Info.Mode.IsDir() {
		return "", x.ApplyDir(e.Key, e.Info)
	}
	if shown := e.Info.Mode.IsRegular() || e.Info.Mode.Type() == fs.ModeSymlink; shown && !x.giveWay(e.Key, e.Info.Mode) {
		c.log.Debug("external change of a node's type where the session's has unflushed changes; the next flush meets it", "key", e.Key)
		return "", nil
	}
	c.mu.RLock()
	f, had := c.mu.tree.files[e.Key]
	retyped := had && f.mode.Type() != e.Info.Mode.Type()
	c.mu.RUnlock()
	if retyped || (!had && !e.Info.Mode.IsRegular() && e.Info.Mode.Type() != fs.ModeSymlink) {
		// A node whose type changed under its name, and fifos, sockets
		// and devices another program made, are indexed at the next
		// mount.
		c.log.Debug("external change of a node's type, or a special file; seen at the next mount", "key", e.Key)
		return "", nil
	}
	e, _, err = x.Ingest(e)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.joinDirtyGroupLocked(e.Key, e.Info.Link)
	if f, ok := c.mu.tree.files[e.Key]; ok && f.gen != 0 && c.opts.OnConflict != KeepBeside {
		// Under a conflict policy the flush decides: it still expects
		// the version ours was made on, meets theirs, and resolves.
		c.mu.Unlock()
		c.log.Info("external change of a key with unflushed changes; the next flush resolves it by the conflict policy",
			"key", e.Key, "policy", c.opts.OnConflict.String())
		return "", nil
	}
	if f, ok := c.mu.tree.files[e.Key]; ok && f.gen != 0 {
		// The store's version is the external one now, kept beside the
		// key as a conflict copy: the next flush replaces it knowingly,
		// under every name of the stored node the session holds as this
		// one (a save under another name kept it beside a second time).
		v := backend.VersionOf(e.Info)
		if f.link != nil && e.Info.Link != "" && f.link.id == e.Info.Link && len(f.link.names) > 1 {
			// Only the names the session expects to hold the same
			// stored node as e.Key (a name renamed over another node
			// expects that node, and is left to meet it).
			was := c.expectedLocked(f, e.Key)
			for _, n := range f.link.names {
				if c.expectedLocked(f, n) == was {
					c.mu.conflict.bases[n] = v
				}
			}
		} else if f.from == e.Key {
			f.base = v
		} else {
			c.mu.conflict.bases[e.Key] = v
		}
		if wc, ok := c.groupCopyLocked(f, e.Key, e.Info); ok {
			// The same change of the node seen under another of its
			// names: one conflict, one copy.
			c.mu.conflict.watchCopies[e.Key] = wc
			c.mu.Unlock()
			return wc.key, nil
		}
		c.mu.Unlock()
		key := e.Key
		conflict = c.conflictKey(key, "", c.now()) // within the store's key limit
		e.Key = conflict
		// The copy is a node of its own: their name may be one of a
		// node's several (another program's ln over ours), and the
		// copy must not join that node in the session, which the store
		// never made.
		link := e.Info.Link
		e.Info.Link = ""
		if err := c.put(e, OriginExternal); err != nil { // their version, beside ours: behind the kernel
			return "", err
		}
		c.mu.Lock()
		if cf, ok := c.mu.tree.files[conflict]; ok {
			if c.mu.conflict.watchCopies == nil {
				c.mu.conflict.watchCopies = make(map[string]watchCopy)
			}
			c.mu.conflict.watchCopies[key] = watchCopy{key: conflict, f: cf, gen: cf.gen, of: backend.VersionOf(e.Info), link: link}
		}
		c.mu.Unlock()
		return conflict, c.journalKey(conflict)
	}
	// Another program replacing one name of a node with hard links (an
	// editor's write and rename) makes the name a node of its own; the
	// others keep theirs.
	linked := c.linkedNamesLocked(e.Key) // a name leaving a node: the others' link count
	_, created, err := c.loadCleanLocked(e)
	if err == nil {
		linked = append(linked, c.linkedNamesLocked(e.Key)...) // or joining one
	}
	c.mu.Unlock()
	if err != nil {
		return "", err
	}
	c.emitWritten(e.Key, created, OriginExternal)
	if !created {
		c.emit(Change{Op: OpContent, Key: e.Key, Origin: OriginExternal})
	}
	c.emitLinked(e.Key, linked)
	return "", nil
}

// linkedNamesLocked returns the names of key's node, when it has several.
func (c *Context) linkedNamesLocked(key string) []string {
	if f, ok := c.mu.tree.files[key]; ok && f.link != nil && len(f.link.names) > 1 {
		return slices.Clone(f.link.names)
	}
	return nil
}

// emitLinked tells watchers that the names of a node other than key (a
// name of it another writer made or removed) changed behind the kernel:
// their link count.
func (c *Context) emitLinked(key string, names []string) {
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		if n != key {
			c.emit(Change{Op: OpAttr, Key: n, Origin: OriginExternal})
		}
	}
}

// joinDirtyGroupLocked has key join the session's node of the store's
// hard-link group id when that node has unflushed changes and key's own
// node (if any) has none: their change came through a name of a node
// that the session changed under another name (another program linked
// the two, and the session has not seen the link yet), and is a conflict
// as for a dirty key, never loaded over the session's changes.
func (c *Context) joinDirtyGroupLocked(key, id string) {
	if id == "" {
		return
	}
	if f, ok := c.mu.tree.files[key]; ok && (f.gen != 0 || f.link != nil && f.link.id == id) {
		return
	}
	if g := c.groupLocked(id); g != nil && g.gen != 0 && c.joinGroupLocked(key, id) == g {
		// A name the node gains is a change to save, also when a flush
		// of the node under its other names is under way: that flush
		// leaves it dirty (seed 50010 of the two-writer model: the
		// joined name never reached the store).
		c.markDirtyLocked(g)
	}
}

// expectedLocked is the store's version a save of f under its name n
// expects (planExpectLocked): n's own base, else f's.
func (c *Context) expectedLocked(f *file, n string) backend.Version {
	if v, ok := c.mu.conflict.bases[n]; ok {
		return v
	}
	return f.base
}

// groupCopyLocked is the conflict copy Apply made, still unchanged, of
// the store's node with info (the same group, the same version) under
// another of f's names than key: another program's change of a node with
// several names is seen once per name. Names the session holds as one
// node may be the store's two (seed 12121 of the two-writer model: two
// writes of one size within a tick of the clock), hence the group.
func (c *Context) groupCopyLocked(f *file, key string, info backend.Info) (watchCopy, bool) {
	if f.link == nil || info.Link == "" {
		return watchCopy{}, false
	}
	ver := backend.VersionOf(info)
	for _, n := range f.link.names {
		wc, ok := c.mu.conflict.watchCopies[n]
		if ok && n != key && wc.link == info.Link && wc.of.Matches(ver) && c.mu.tree.files[wc.key] == wc.f && wc.f.gen == wc.gen {
			return wc, true
		}
	}
	return watchCopy{}, false
}

// giveWay takes out of the session its node under key when the store's
// node there, of mode, is of another type (another writer replaced it),
// and the session's is as the store had it: a file without unflushed
// changes, an empty directory without any. It reports whether key is
// free for the store's node (or holds one of its type).
func (x *External) giveWay(key string, mode fs.FileMode) bool {
	c := x.c
	c.mu.RLock()
	f, isFile := c.mu.tree.files[key]
	d, isDir := c.mu.tree.dirs[key]
	sameType := (isFile && f.mode.Type() == mode.Type()) || (isDir && mode.IsDir())
	clean := (isFile && f.gen == 0) || (isDir && d.gen == 0 && len(d.children) == 0)
	c.mu.RUnlock()
	switch {
	case !isFile && !isDir, sameType:
		return true
	case !clean:
		return false
	case isDir:
		return x.RemoveDir(key)
	}
	ok, err := x.Remove(key)
	return ok && err == nil
}

// Remove takes key out of the session after another program removed
// it from the store; the store is not asked to delete it again. A dirty key
// is a conflict: the session's value stays (and is saved again at the next
// flush), and Remove reports false.
func (x *External) Remove(key string) (bool, error) {
	c := x.c
	if err := backend.ValidateKey(key); err != nil {
		return false, err
	}
	c.mu.Lock()
	f, ok := c.mu.tree.files[key]
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
		linked := slices.Clone(f.link.names)
		c.detachNameLocked(f, key)
		c.mu.Unlock()
		c.emit(Change{Op: OpRemove, Key: key, Origin: OriginExternal})
		c.emitLinked(key, linked)
		return true, nil
	}
	f.from = "" // the store no longer has it: no delete event either
	c.removeNameLocked(f, key, nil)
	// The store no longer has it: nothing to delete at the next flush.
	delete(c.mu.pending.removed, key)
	c.mu.echo.forgetLocked(key)
	delete(c.mu.conflict.bases, key)
	c.mu.Unlock()
	c.emit(Change{Op: OpRemove, Key: key, Origin: OriginExternal})
	return true, nil
}

// RemoveDir takes directory key out of the session after another
// writer removed it from the store, and reports whether it did: only an
// empty directory goes (the keys under one that is not empty leave first,
// by Remove; one that holds unflushed changes stays, and is saved
// again at the next flush). The removal, seen after them, wins over
// unflushed changes of the directory's own attributes (the removal of a
// key under it marks them, its mtime moving).
func (x *External) RemoveDir(key string) bool {
	c := x.c
	if backend.ValidateKey(key) != nil {
		return false
	}
	c.mu.Lock()
	d, ok := c.mu.tree.dirs[key]
	if !ok || len(d.children) > 0 {
		c.mu.Unlock()
		return false
	}
	delete(c.mu.tree.dirs, key)
	delete(c.mu.pending.ddirty, d)
	d.gen = 0
	if parent, ok := c.mu.tree.dirs[parentOf(key)]; ok {
		_, name := backend.Split(key)
		delete(parent.children, name)
		parent.subdirs--
	}
	delete(c.mu.conflict.bases, key)
	c.mu.Unlock()
	c.emit(Change{Op: OpRmdir, Key: key, Origin: OriginExternal})
	return true
}

// detachNameLocked takes the name key from f, which has others, as the
// store already has it: no removal to flush.
func (c *Context) detachNameLocked(f *file, key string) {
	f.link.names = slices.DeleteFunc(f.link.names, func(k string) bool { return k == key })
	delete(c.mu.tree.files, key)
	if parent, ok := c.mu.tree.dirs[parentOf(key)]; ok {
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
