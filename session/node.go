package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"slices"
	"strings"

	"github.com/memfs/memfs/backend"
)

// MaxLinkTarget is the longest symlink target, in bytes (Linux's
// PATH_MAX, terminating NUL excluded).
const MaxLinkTarget = 4095

// Symlink makes key a symbolic link to target. The target is stored as
// given, never followed by memfs.
func (c *Context) Symlink(ctx context.Context, key, target string, uid, gid uint32) error {
	if target == "" || len(target) > MaxLinkTarget || strings.IndexByte(target, 0) >= 0 {
		return pathErr("symlink", key, ErrInvalidOp)
	}
	return c.makeNode(ctx, "symlink", key, fs.ModeSymlink|0o777, 0, uid, gid, []byte(target))
}

// MakeNode makes key a fifo, a socket, a device node (with rdev) or an
// empty regular file, as mknod(2) does; mode carries the type and the
// permissions.
func (c *Context) MakeNode(ctx context.Context, key string, mode fs.FileMode, rdev uint64, uid, gid uint32) error {
	switch mode.Type() {
	case 0, fs.ModeNamedPipe, fs.ModeSocket, fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice:
	default:
		return pathErr("mknod", key, ErrInvalidOp)
	}
	if mode.Type()&fs.ModeDevice == 0 {
		rdev = 0
	}
	return c.makeNode(ctx, "mknod", key, mode&backend.ModeMask, rdev, uid, gid, nil)
}

func (c *Context) makeNode(ctx context.Context, op, key string, mode fs.FileMode, rdev uint64, uid, gid uint32, value []byte) error {
	if err := c.creatable(op, key); err != nil {
		return err
	}
	c.mu.Lock()
	if _, err := c.parentLocked(op, key); err != nil {
		c.mu.Unlock()
		return err
	}
	f, _, err := c.createLocked(op, key, mode, uid, gid, true)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	f.rdev = rdev
	f.data, f.size, f.loaded = value, int64(len(value)), true
	f.changed = true
	f.jfull = true
	if mode.IsRegular() {
		c.setWriterLocked(f, writerFrom(ctx))
	} else {
		f.xattrs = nil // none on a symlink or a special file (Linux keeps none)
	}
	c.markDirtyLocked(f)
	gen := c.mu.pending.gen
	c.mu.Unlock()
	c.emit(Change{Op: OpCreate, Key: key})
	if err := c.journalKey(key); err != nil {
		return err
	}
	return c.journalDir(gen, parentOf(key))
}

// Readlink returns the target of symlink key.
func (c *Context) Readlink(ctx context.Context, key string) (string, error) {
	if err := c.Resolve(ctx, key); err != nil {
		return "", err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, ok := c.mu.tree.files[key]
	if !ok {
		return "", notExist("readlink", key)
	}
	if f.mode&fs.ModeSymlink == 0 || !f.loaded {
		return "", pathErr("readlink", key, ErrInvalidOp)
	}
	return string(f.data), nil
}

// Link gives the node at oldKey (not a directory) the new name newKey, as
// link(2) does. Every name of a node is saved with the node.
func (c *Context) Link(ctx context.Context, oldKey, newKey string) error {
	if err := c.writable("link", oldKey); err != nil {
		return err
	}
	if err := c.creatable("link", newKey); err != nil {
		return err
	}
	if err := c.movable("link", oldKey, newKey); err != nil {
		return err
	}
	// Saving the new name needs the value.
	defer unpin(c.pinKey(oldKey))
	if err := c.Resolve(ctx, oldKey); err != nil {
		c.mu.RLock()
		_, isDir := c.mu.tree.dirs[oldKey]
		c.mu.RUnlock()
		if isDir {
			return pathErr("link", oldKey, fs.ErrPermission)
		}
		return err
	}
	c.mu.Lock()
	f, ok := c.mu.tree.files[oldKey]
	switch {
	case !ok:
		c.mu.Unlock()
		return notExist("link", oldKey)
	case c.mu.tree.files[newKey] != nil || c.mu.tree.dirs[newKey] != nil:
		c.mu.Unlock()
		return exist("link", newKey)
	case !f.loaded:
		c.mu.Unlock()
		return pathErr("link", oldKey, fs.ErrNotExist) // dropped meanwhile: rare, retried by the caller
	}
	if err := c.sizeAllowed("link", newKey, f.size); err != nil {
		c.mu.Unlock()
		return err
	}
	parent, err := c.parentLocked("link", newKey)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	if c.Local(oldKey) != c.Local(newKey) {
		// A store name and a session-only name cannot share a node.
		c.mu.Unlock()
		return pathErr("link", newKey, fs.ErrPermission)
	}
	if f.link == nil {
		f.link = &linkGroup{id: newLinkID(), names: []string{oldKey}}
	}
	f.link.names = append(f.link.names, newKey)
	f.link.setFresh(newKey)
	c.addNameLocked(f, newKey, parent)
	f.jfull = true
	c.markDirtyLocked(f)
	gen := c.mu.pending.gen
	c.mu.Unlock()
	c.emit(Change{Op: OpCreate, Key: newKey})
	if err := c.journalNames(f); err != nil {
		return err
	}
	return c.journalDir(gen, parentOf(newKey))
}

// setFresh records that the store holds no version of the node under key.
func (g *linkGroup) setFresh(key string) {
	if g.fresh == nil {
		g.fresh = make(map[string]bool)
	}
	g.fresh[key] = true
}

// newLinkID names a new hard-link group.
func newLinkID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// names returns every key of f: its link group's, or its key.
func (f *file) names() []string {
	if f.link != nil {
		return f.link.names
	}
	if f.key == "" {
		return nil
	}
	return []string{f.key}
}

// journalNames records f under every one of its names.
func (c *Context) journalNames(f *file) error {
	if c.opts.Journal == nil {
		return nil
	}
	c.mu.Lock()
	var entries []backend.Entry
	value := f.shareRLocked()
	for _, k := range f.names() {
		entries = append(entries, backend.Entry{Key: k, Info: f.infoLocked(), Value: value})
	}
	gen := f.gen
	f.jlen, f.jfull = int64(len(f.data)), false
	c.mu.Unlock()
	return c.journal(gen, entries, nil)
}

// unlinkNameLocked takes the name key from f, which has other names: the
// node stays under them. It reports false when f has no other name.
func (c *Context) unlinkNameLocked(f *file, key string) bool {
	if f.link == nil || len(f.link.names) < 2 {
		return false
	}
	if f.storedUnder(key) {
		if _, ok := c.mu.conflict.bases[key]; !ok {
			// The store holds the node's version under this name too
			// (every name of a stored group is saved with it): what a
			// file made here next replaces.
			c.mu.conflict.bases[key] = f.base
		}
	} else {
		c.expectVacatedLocked(f, key)
	}
	f.link.names = slices.DeleteFunc(f.link.names, func(k string) bool { return k == key })
	delete(f.link.fresh, key)
	delete(c.mu.tree.files, key)
	if parent, ok := c.mu.tree.dirs[parentOf(key)]; ok {
		_, name := backend.Split(key)
		delete(parent.children, name)
		c.touchDirLocked(parent, c.now().UnixNano())
	}
	if f.key == key {
		f.key = f.link.names[0]
	}
	if f.from == key {
		f.from = f.key
	}
	c.mu.pending.removeLocked(key)
	if f.loaded {
		// The other names' link count and ctime. (An unloaded node is
		// not saved again: the store keeps its value under the other
		// names, and saving it now would need the value.)
		c.markDirtyLocked(f)
	} else {
		f.ctime = c.now().UnixNano()
	}
	return true
}

// renameNameLocked moves the name old of f to nk (f keeps its other names).
func (c *Context) renameNameLocked(f *file, old, nk string) {
	if f.link != nil {
		for i, k := range f.link.names {
			if k == old {
				f.link.names[i] = nk
			}
		}
		delete(f.link.fresh, old)
		f.link.setFresh(nk)
	}
	if f.key == old {
		f.key = nk
	}
}

// joinGroupLocked makes key another name of the node of hard-link group
// id, when the session has one under another name (a replayed or imported
// entry of a group), and returns that node; nil when there is none (or key
// is already one of its names). The caller gives the node its value.
func (c *Context) joinGroupLocked(key, id string) *file {
	g := c.groupLocked(id)
	if g == nil {
		return nil
	}
	if slices.Contains(g.link.names, key) {
		return g
	}
	parent, err := c.mkdirAllLocked(parentOf(key), c.now().UnixNano(), true)
	if err != nil {
		return nil
	}
	if old, ok := c.mu.tree.files[key]; ok {
		c.removeNameLocked(old, key, nil)
	}
	g.link.names = append(g.link.names, key)
	c.addNameLocked(g, key, parent)
	return g
}

// groupLocked is the session's node of the store's hard-link group id
// (Info.Link), or nil.
func (c *Context) groupLocked(id string) *file {
	for _, f := range c.mu.tree.files {
		if f.link != nil && f.link.id == id {
			return f
		}
	}
	return nil
}

// addNameLocked enters key, a new name of f, in directory parent: the
// name is taken (no longer a removal to flush) and the directory's entries
// changed.
func (c *Context) addNameLocked(f *file, key string, parent *dir) {
	c.mu.tree.files[key] = f
	delete(c.mu.pending.removed, key)
	_, name := backend.Split(key)
	parent.children[name] = struct{}{}
	c.touchDirLocked(parent, c.now().UnixNano())
}

// CreateUnnamed makes a regular file in no directory, as open(2) with
// O_TMPFILE does: it lives while a handle holds it, and is saved only once
// LinkTo gives it a name.
func (c *Context) CreateUnnamed(opts CreateOptions) (*File, error) {
	if c.opts.ReadOnly {
		return nil, pathErr("create", "", ErrReadOnly)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now().UnixNano()
	f := &file{ino: c.mu.tree.nextInoLocked(), mtime: now, atime: now, ctime: now, mode: backend.PermBits(opts.Mode),
		uid: opts.UID, gid: opts.GID, loaded: true, jfull: true}
	f.open.Add(1)
	return &File{c: c, f: f, by: opts.Writer}, nil
}

// LinkTo gives the file of h, made by CreateUnnamed and never named, the
// name key (linkat(2) of an O_TMPFILE descriptor). A file that has a name
// gets another one, as Link does.
func (h *File) LinkTo(ctx context.Context, key string) error {
	c := h.c
	if err := c.creatable("link", key); err != nil {
		return err
	}
	c.mu.Lock()
	f := h.f
	if f.key != "" {
		old := f.key
		c.mu.Unlock()
		return c.Link(ctx, old, key)
	}
	if c.mu.tree.files[key] != nil || c.mu.tree.dirs[key] != nil {
		c.mu.Unlock()
		return exist("link", key)
	}
	parent, err := c.parentLocked("link", key)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	if err := c.sizeAllowed("link", key, f.size); err != nil {
		c.mu.Unlock()
		return err // an O_TMPFILE file's first name counts as a file of its size
	}
	f.key = key
	c.addNameLocked(f, key, parent)
	f.changed, f.jfull = true, true
	c.setWriterLocked(f, h.by)
	c.markDirtyLocked(f)
	gen := c.mu.pending.gen
	c.mu.Unlock()
	c.emit(Change{Op: OpCreate, Key: key})
	if err := c.journalKey(key); err != nil {
		return err
	}
	return c.journalDir(gen, parentOf(key))
}
