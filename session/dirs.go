package session

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"

	"github.com/memfs/memfs/backend"
)

// Directories are entries of the store: Mkdir, a change of a directory's
// attributes and a change of its entries (its mtime moves) mark it in
// ddirty, and the next flush saves it; Rmdir marks its key removed.

// removeDirLocked takes the empty directory d out of the namespace and
// marks its key for deletion from the store.
func (c *Context) removeDirLocked(d *dir) {
	delete(c.mu.tree.dirs, d.key)
	delete(c.mu.pending.ddirty, d)
	d.gen = 0
	c.leaveDirLocked(d)
	c.mu.pending.removeLocked(d.key)
}

// dirAttrs are a directory's own attributes: mode, owner and user.*
// attributes (their digest).
type dirAttrs struct {
	known    bool
	mode     fs.FileMode
	uid, gid uint32
	xattrs   uint64
}

// dirAttrsOf are the attributes of a stored directory with info.
func dirAttrsOf(info backend.Info) dirAttrs {
	return dirAttrs{known: true, mode: backend.PermBits(info.Mode), uid: info.UID, gid: info.GID, xattrs: xattrsHash(toXAttrList(info.XAttrs))}
}

// attrs are d's attributes as the session holds them.
func (d *dir) attrs() dirAttrs {
	return dirAttrs{known: true, mode: d.mode, uid: d.uid, gid: d.gid, xattrs: xattrsHash(d.xattrs)}
}

// setBase records the store's version of d, with info, as the one its
// next save replaces, and its attributes as the base of a merge.
func (d *dir) setBase(info backend.Info) {
	d.base = backend.VersionOf(info)
	d.battrs = dirAttrsOf(info)
}

// leaveDirLocked records that directory d leaves its key (removed or
// renamed away): the store's entry there, of d.base, is what the next
// save or delete of the key replaces (the session's own version, never
// taken for another writer's).
func (c *Context) leaveDirLocked(d *dir) {
	if d.base.IsZero() {
		return
	}
	if _, ok := c.mu.conflict.bases[d.key]; !ok {
		c.mu.conflict.bases[d.key] = d.base
	}
	d.base, d.battrs = backend.Version{}, dirAttrs{}
}

// journalDir records directory key's entry (its attributes) as a
// completed change, and key's parent's.
func (c *Context) journalDir(gen uint64, keys ...string) error {
	if c.opts.Journal == nil {
		return nil
	}
	c.mu.RLock()
	var entries []backend.Entry
	for _, k := range keys {
		if d, ok := c.mu.tree.dirs[k]; ok && !c.unjournaled(k) {
			entries = append(entries, backend.Entry{Key: k, Info: d.infoLocked()})
		}
	}
	c.mu.RUnlock()
	return c.journal(gen, entries, nil)
}

// dirEntriesLocked returns the entries of the dirty directories, parents
// before children, and the directories they are. The root's, if dirty,
// comes first, under key "": persist saves it as the store's
// backend.RootRecord.
func (c *Context) dirEntriesLocked() ([]backend.Entry, []*dir) {
	var ds []*dir
	for d := range c.mu.pending.ddirty {
		if !c.Local(d.key) {
			ds = append(ds, d)
		}
	}
	slices.SortFunc(ds, func(a, b *dir) int { return strings.Compare(a.key, b.key) })
	entries := make([]backend.Entry, len(ds))
	for i, d := range ds {
		entries[i] = backend.Entry{Key: d.key, Info: d.infoLocked()}
	}
	return entries, ds
}

// putDir makes directory e.Key (and its parents) with e's attributes, as
// a replayed or imported change.
func (c *Context) putDir(e backend.Entry) error {
	if e.Key == "" {
		c.mu.Lock()
		defer c.mu.Unlock()
		d := c.mu.tree.dirs[""]
		d.setInfo(e.Info)
		c.markDirDirtyLocked(d)
		return nil
	}
	if err := c.creatable("mkdir", e.Key); err != nil {
		return err
	}
	c.mu.RLock()
	_, inWay := c.mu.tree.files[e.Key]
	c.mu.RUnlock()
	if inWay {
		// A node another program put where the directory was (the
		// journal replays memfs's directory): both are kept, the other
		// node beside it under a conflict name.
		ck := c.conflictKey(e.Key, "", c.now())
		if err := c.Rename(context.Background(), e.Key, ck, RenameNoReplace); err != nil {
			return err
		}
		c.log.Warn("a node is where a directory of the journal goes; kept beside it", "key", e.Key, "kept_as", ck)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d, err := c.mkdirAllLocked(e.Key, e.Info.MTime.UnixNano(), true)
	if err != nil {
		return err
	}
	d.setInfo(e.Info)
	if e.Info.MTime.IsZero() {
		d.mtime = c.now().UnixNano()
	}
	c.markDirDirtyLocked(d)
	return nil
}

// loadRoot gives the root directory the attributes the store keeps for it
// (backend.RootRecord), if it keeps any. A record that cannot be read is
// left as it is, and the root keeps Options' attributes: the next change
// of the root's attributes writes a new one.
func (c *Context) loadRoot(ctx context.Context) {
	sys, ok := c.store.(backend.SysStore)
	if !ok {
		return
	}
	b, err := sys.LoadSys(ctx, backend.RootRecord)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return // a store written before the root had attributes, or a new one
	}
	var info backend.Info
	if err == nil {
		info, err = backend.DecodeRoot(b)
	}
	if err != nil {
		c.log.Warn("the root directory's attributes cannot be read; it has the default ones", "record", backend.RootRecord, "err", err)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.mu.tree.dirs[""]
	if d.gen != 0 {
		return // changed in this session already (a replay): that stands
	}
	d.setInfo(info)
	d.setBase(info)
}
