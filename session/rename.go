package session

import (
	"context"
	"slices"
	"strings"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// RenameFlags select the variant of Rename, as renameat2(2) does.
type RenameFlags uint32

const (
	// RenameNoReplace fails with fs.ErrExist when the target exists.
	RenameNoReplace RenameFlags = 1 << iota
	// RenameExchange swaps two existing files atomically.
	RenameExchange
)

// Rename moves the file or directory oldKey to newKey with POSIX semantics:
// an existing target file is replaced atomically (open Files of either keep
// working); a directory may replace only an empty directory; a directory
// cannot move into itself. Renaming a directory renames every key under it,
// which loads the values that are not loaded yet (the store needs them to
// save the new keys).
func (c *Context) Rename(ctx context.Context, oldKey, newKey string, flags RenameFlags) error {
	if err := c.writable("rename", oldKey); err != nil {
		return err
	}
	if err := c.creatable("rename", newKey); err != nil {
		return err
	}
	if err := c.movable("rename", oldKey, newKey); err != nil {
		return err
	}
	if flags&RenameNoReplace != 0 && flags&RenameExchange != 0 {
		return pathErr("rename", oldKey, ErrInvalidOp)
	}
	if oldKey == newKey {
		// rename(2) of a name onto itself succeeds and does nothing.
		c.mu.RLock()
		_, okF := c.mu.tree.files[oldKey]
		_, okD := c.mu.tree.dirs[oldKey]
		c.mu.RUnlock()
		if !okF && !okD {
			return notExist("rename", oldKey)
		}
		return nil
	}
	if strings.HasPrefix(newKey, oldKey+"/") {
		return pathErr("rename", oldKey, ErrInvalidOp)
	}
	for {
		// Load what the move needs, outside the lock; if a new unloaded
		// key appeared under a directory meanwhile, go round again.
		if err := c.Resolve(ctx, c.unloadedUnder(oldKey, newKey)...); err != nil {
			return err
		}
		c.mu.Lock()
		done, err := c.renameLocked(oldKey, newKey, flags, writerFrom(ctx))
		c.mu.Unlock()
		if err != nil {
			return err
		}
		if done {
			break
		}
	}
	c.emit(Change{Op: OpRename, Key: newKey, OldKey: oldKey})
	return c.journalRename(oldKey, newKey, flags)
}

// journalRename records the outcome of a rename: the moved files under
// their new keys, and the old keys removed (unless an exchange refilled them).
func (c *Context) journalRename(oldKey, newKey string, flags RenameFlags) error {
	if c.opts.Journal == nil {
		return nil
	}
	c.mu.RLock() // it only reads, and marks values shared (see Entry)
	var entries []backend.Entry
	var removed []string
	renamed := map[string]string{} // the moved files: new key -> old
	var gen uint64
	// Each name under its own key: a node with hard links has others,
	// and its link group in Info makes a replay join them.
	add := func(f *file, key string) {
		entries = append(entries, backend.Entry{Key: key, Info: f.infoLocked(), Value: f.shareRLocked()})
		gen = max(gen, f.gen)
	}
	if f, ok := c.mu.tree.files[newKey]; ok {
		add(f, newKey)
		if flags&RenameExchange != 0 {
			if g, ok := c.mu.tree.files[oldKey]; ok {
				add(g, oldKey)
			}
		} else {
			removed = append(removed, oldKey)
			renamed[newKey] = oldKey
		}
	} else {
		prefix := newKey + "/"
		for k, d := range c.mu.tree.dirs {
			if k == newKey || strings.HasPrefix(k, prefix) {
				entries = append(entries, backend.Entry{Key: k, Info: d.infoLocked()})
				removed = append(removed, oldKey+k[len(newKey):])
				gen = max(gen, d.gen)
			}
		}
		for k, f := range c.mu.tree.files {
			if strings.HasPrefix(k, prefix) {
				add(f, k)
				removed = append(removed, oldKey+k[len(newKey):])
				renamed[k] = oldKey + k[len(newKey):]
			}
		}
	}
	// The parents' new mtimes.
	for _, k := range []string{parentOf(oldKey), parentOf(newKey)} {
		if d, ok := c.mu.tree.dirs[k]; ok && k != "" && !slices.ContainsFunc(entries, func(e backend.Entry) bool { return e.Key == k }) {
			entries = append(entries, backend.Entry{Key: k, Info: d.infoLocked()})
			gen = max(gen, d.gen)
		}
	}
	// Parents before children when replayed.
	slices.SortStableFunc(entries, func(a, b backend.Entry) int {
		return cmpDirFirst(a, b)
	})
	c.mu.RUnlock()
	return c.journalRenamed(gen, entries, removed, renamed)
}

// unloadedUnder returns the unloaded file keys that a rename of oldKey to
// newKey has to save: the moved file or the files under a moved directory.
// With an exchange, those of newKey too.
func (c *Context) unloadedUnder(keys ...string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for _, k := range keys {
		if f, ok := c.mu.tree.files[k]; ok {
			if !f.loaded {
				out = append(out, k)
			}
			continue
		}
		if _, ok := c.mu.tree.dirs[k]; !ok {
			continue
		}
		for fk, f := range c.mu.tree.files {
			if !f.loaded && strings.HasPrefix(fk, k+"/") {
				out = append(out, fk)
			}
		}
	}
	return out
}

// renameLocked performs the rename if every value it moves is loaded; it
// reports false (and changes nothing) when something must be loaded first.
func (c *Context) renameLocked(oldKey, newKey string, flags RenameFlags, by *meta.WriterInfo) (bool, error) {
	srcF, srcIsFile := c.mu.tree.files[oldKey]
	srcD, srcIsDir := c.mu.tree.dirs[oldKey]
	if !srcIsFile && !srcIsDir {
		if _, err := c.parentLocked("rename", oldKey); err != nil {
			return false, err
		}
		return false, notExist("rename", oldKey)
	}
	dstF, dstIsFile := c.mu.tree.files[newKey]
	dstD, dstIsDir := c.mu.tree.dirs[newKey]
	dstExists := dstIsFile || dstIsDir
	newParent, err := c.parentLocked("rename", newKey)
	if err != nil {
		return false, err
	}

	switch {
	case flags&RenameNoReplace != 0 && dstExists:
		return false, exist("rename", newKey)
	case flags&RenameExchange != 0:
		if !dstExists {
			return false, notExist("rename", newKey)
		}
		if !srcIsFile || !dstIsFile {
			// Exchanging directories is not supported: a clean EINVAL.
			return false, pathErr("rename", oldKey, ErrInvalidOp)
		}
		return c.exchangeLocked(srcF, dstF, oldKey, newKey, by), nil
	case srcIsFile && dstIsDir:
		return false, pathErr("rename", newKey, ErrIsDir)
	case srcIsDir && dstIsFile:
		return false, pathErr("rename", newKey, ErrNotDir)
	case srcIsDir && dstIsDir && len(dstD.children) > 0:
		return false, pathErr("rename", newKey, ErrNotEmpty)
	}

	if srcIsFile {
		if !srcF.loaded {
			return false, nil
		}
		if dstIsFile && dstF == srcF {
			// Two names of one node: rename(2) does nothing.
			return true, nil
		}
		if dstIsFile {
			c.removeNameLocked(dstF, newKey, by)
		}
		srcF.by, srcF.jfull = by, true
		c.moveFileLocked(srcF, oldKey, newKey, newParent)
		c.touchParentsLocked(oldKey, newKey)
		return true, nil
	}

	return c.renameDirLocked(srcD, dstD, dstIsDir, oldKey, newKey, newParent, by)
}

// exchangeLocked is RENAME_EXCHANGE of two files; false when a value
// must be loaded first.
func (c *Context) exchangeLocked(srcF, dstF *file, oldKey, newKey string, by *meta.WriterInfo) bool {
	if !srcF.loaded || !dstF.loaded {
		return false
	}
	if srcF == dstF {
		return true // two names of one node
	}
	c.renameNameLocked(srcF, oldKey, newKey)
	c.renameNameLocked(dstF, newKey, oldKey)
	c.mu.tree.files[oldKey], c.mu.tree.files[newKey] = dstF, srcF
	srcF.by, dstF.by = by, by
	srcF.jfull, dstF.jfull = true, true
	c.markDirtyLocked(srcF)
	c.markDirtyLocked(dstF)
	c.touchParentsLocked(oldKey, newKey)
	return true
}

// renameDirLocked is renameLocked of directory srcD over dstD (an empty
// directory, when dstIsDir) in newParent.
func (c *Context) renameDirLocked(srcD, dstD *dir, dstIsDir bool, oldKey, newKey string, newParent *dir, by *meta.WriterInfo) (bool, error) {
	// A directory: every file under it moves; it needs every value.
	prefix := oldKey + "/"
	var moved []string
	for k, f := range c.mu.tree.files {
		if strings.HasPrefix(k, prefix) {
			if !f.loaded {
				return false, nil
			}
			// A longer directory name can push a deep key past the
			// store's limit; the store would refuse it and every flush
			// with it.
			if err := c.keyLimit.Check(newKey + k[len(oldKey):]); err != nil {
				return false, err
			}
			moved = append(moved, k)
		}
	}
	var subdirs []string
	for k := range c.mu.tree.dirs {
		if strings.HasPrefix(k, prefix) {
			if err := c.keyLimit.Check(newKey + k[len(oldKey):]); err != nil {
				return false, err // an empty directory is a key too
			}
			subdirs = append(subdirs, k)
		}
	}
	if dstIsDir {
		delete(c.mu.tree.dirs, newKey)
		delete(c.mu.pending.ddirty, dstD)
		newParent.subdirs-- // its name is srcD's now, counted below
	}
	// Detach the directory from its old parent and attach it under the new name.
	if p, ok := c.mu.tree.dirs[parentOf(oldKey)]; ok {
		_, name := backend.Split(oldKey)
		delete(p.children, name)
		p.subdirs--
	}
	// Subdirectories first: their keys sort after the directory's, and
	// the store deletes the old keys in reverse order.
	slices.Sort(subdirs)
	moveDir := func(d *dir, from, to string) {
		c.leaveDirLocked(d)
		delete(c.mu.tree.dirs, from)
		c.mu.pending.removeLocked(from)
		d.key = to
		c.mu.tree.dirs[to] = d
		c.markDirDirtyLocked(d)
	}
	moveDir(srcD, oldKey, newKey)
	srcD.ctime = c.now().UnixNano()
	_, newName := backend.Split(newKey)
	newParent.children[newName] = struct{}{}
	newParent.subdirs++
	for _, k := range subdirs {
		moveDir(c.mu.tree.dirs[k], k, newKey+k[len(oldKey):])
	}
	for _, old := range moved {
		f := c.mu.tree.files[old]
		nk := newKey + old[len(oldKey):]
		delete(c.mu.tree.files, old)
		c.expectVacatedLocked(f, old)
		c.mu.pending.removeLocked(old)
		c.renameNameLocked(f, old, nk)
		c.mu.tree.files[nk] = f
		f.by, f.jfull = by, true
		c.markDirtyLocked(f)
	}
	c.touchParentsLocked(oldKey, newKey)
	return true, nil
}

// moveFileLocked gives f's name old the key newKey in directory newParent.
func (c *Context) moveFileLocked(f *file, old, newKey string, newParent *dir) {
	if p, ok := c.mu.tree.dirs[parentOf(old)]; ok {
		_, name := backend.Split(old)
		delete(p.children, name)
	}
	delete(c.mu.tree.files, old)
	c.expectVacatedLocked(f, old)
	c.mu.pending.removeLocked(old)
	c.renameNameLocked(f, old, newKey)
	c.mu.tree.files[newKey] = f
	_, name := backend.Split(newKey)
	newParent.children[name] = struct{}{}
	c.markDirtyLocked(f)
}

func (c *Context) touchParentsLocked(keys ...string) {
	now := c.now().UnixNano()
	for _, k := range keys {
		if d, ok := c.mu.tree.dirs[parentOf(k)]; ok {
			c.touchDirLocked(d, now)
		}
	}
}

// cmpDirFirst orders directory entries before the others, each by key.
func cmpDirFirst(a, b backend.Entry) int {
	ad, bd := a.Info.Mode.IsDir(), b.Info.Mode.IsDir()
	switch {
	case ad && !bd:
		return -1
	case !ad && bd:
		return 1
	}
	return strings.Compare(a.Key, b.Key)
}
