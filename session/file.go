package session

import (
	"context"
	"io"
	"io/fs"
	"sync/atomic"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// File is an open handle on a file. It follows the file through renames
// and keeps it readable and writable after the file is removed, as an open
// descriptor does. All state lives in the Context; a File only points at it.
type File struct {
	c      *Context
	f      *file
	wrote  bool             // changed through this handle since open (read and written under c.mu)
	by     *meta.WriterInfo // who writes through this handle; nil: Options.Self
	closed atomic.Bool      // Close has unpinned the value
}

// CreateOptions describe a file to create.
type CreateOptions struct {
	Mode      fs.FileMode
	UID, GID  uint32
	Exclusive bool // fail with fs.ErrExist if the file exists (O_EXCL)
	Truncate  bool // truncate an existing file to zero (O_TRUNC)
	// Writer is who creates the file and writes through the handle
	// (nil: Options.Self).
	Writer *meta.WriterInfo
}

// Open returns a handle on file key, loading its value first. The value
// stays in memory until the handle is closed (see Options.MaxMemory).
func (c *Context) Open(ctx context.Context, key string) (*File, error) {
	for {
		f := c.pinKey(key) // before it loads: a trim never drops what is being opened
		if err := c.resolveOpen(ctx, key); err != nil {
			unpin(f)
			c.mu.RLock()
			_, isDir := c.mu.tree.dirs[key]
			c.mu.RUnlock()
			if isDir {
				return nil, pathErr("open", key, ErrIsDir)
			}
			return nil, err
		}
		c.mu.RLock()
		g, ok := c.mu.tree.files[key]
		loaded := ok && g == f && f.loaded
		due := false
		if loaded {
			c.touchRLocked(f)
			due = c.overRLocked() // trimNow's test, under the same lock
		}
		c.mu.RUnlock()
		if loaded {
			c.trim(due)
			return &File{c: c, f: f, by: writerFrom(ctx)}, nil
		}
		unpin(f)
		if !ok {
			return nil, notExist("open", key)
		}
		// Replaced (or created) between the pin and here: again.
	}
}

// resolveOpen is Resolve(ctx, key) for an Open: on a store that reads
// ahead (backend.ReadAheader), the unloaded files beside key are loaded
// in the same Load. Only key's own failure is an error.
func (c *Context) resolveOpen(ctx context.Context, key string) error {
	ra, ok := c.store.(backend.ReadAheader)
	if !ok {
		return c.Resolve(ctx, key)
	}
	c.mu.RLock()
	keys := c.readAheadRLocked(key, ra)
	c.mu.RUnlock()
	if len(keys) == 1 {
		return c.Resolve(ctx, key)
	}
	failed, err := c.resolve(ctx, keys)
	if err != nil {
		return err
	}
	if err, ok := failed[key]; ok {
		return wrapf("resolve: %w", err)
	}
	return nil
}

// readAheadRLocked returns key and, when key is not loaded, the files
// beside it that a load of key takes in too: stored (not local), clean,
// unloaded, within ra's bounds and a quarter of the memory budget's room.
// It looks at a bounded number of names, so that a cold open in a large
// directory stays cheap.
func (c *Context) readAheadRLocked(key string, ra backend.ReadAheader) []string {
	keys := []string{key}
	f, ok := c.mu.tree.files[key]
	if !ok || f.loaded {
		return keys
	}
	maxKeys, maxBytes, fileBytes := ra.ReadAhead()
	if m := &c.mu.mem; m.max > 0 {
		// Under a memory budget, at most a quarter of the room left:
		// what is read ahead must not push out what is open, nor be
		// trimmed before it is read.
		maxBytes = min(maxBytes, (m.max-m.held-m.added)/4)
	}
	parent := parentOf(key)
	d, ok := c.mu.tree.dirs[parent]
	if !ok {
		return keys
	}
	bytes := f.size
	looked := 0
	for name := range d.children {
		if len(keys) > maxKeys || looked >= 4*maxKeys {
			break
		}
		looked++
		k := name
		if parent != "" {
			k = parent + "/" + name
		}
		g, ok := c.mu.tree.files[k]
		if !ok || g == f || g.loaded || g.gen != 0 || g.mode.Type() != 0 || g.size > fileBytes || bytes+g.size > maxBytes || c.Local(k) {
			continue
		}
		bytes += g.size
		keys = append(keys, k)
	}
	return keys
}

// unpin ends one File's hold on f's value; nil is none.
func unpin(f *file) {
	if f != nil {
		f.open.Add(-1)
	}
}

// Create opens file key, creating it with opts when it does not exist.
// Truncating an existing file loads nothing: its old value is dropped.
func (c *Context) Create(key string, opts CreateOptions) (*File, error) {
	if err := c.creatable("create", key); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if _, ok := c.mu.tree.files[key]; !ok {
		if _, err := c.parentLocked("create", key); err != nil {
			c.mu.Unlock()
			return nil, err
		}
	}
	f, created, err := c.createLocked("create", key, opts.Mode, opts.UID, opts.GID, opts.Exclusive)
	if err != nil {
		c.mu.Unlock()
		return nil, err
	}
	if created || opts.Truncate {
		if opts.Truncate && !created {
			f.data, f.size, f.loaded = nil, 0, true
			f.shared.Store(false)
			f.mtime = c.now().UnixNano()
			f.ver++
			f.jfull = f.jlen > 0 // bytes the journal holds are gone
		}
		f.changed = true
		c.setWriterLocked(f, opts.Writer)
		c.markDirtyLocked(f)
	}
	loaded := f.loaded
	if loaded {
		f.open.Add(1)
		c.touchRLocked(f)
	}
	c.mu.Unlock()
	if created {
		c.emit(Change{Op: OpCreate, Key: key})
	}
	if !loaded {
		ctx := context.Background()
		if opts.Writer != nil {
			ctx = WithWriter(ctx, *opts.Writer)
		}
		return c.Open(ctx, key)
	}
	return &File{c: c, f: f, wrote: created || opts.Truncate, by: opts.Writer}, nil
}

// Key returns the file's current key, or "" once it has been removed.
func (h *File) Key() string {
	h.c.mu.RLock()
	defer h.c.mu.RUnlock()
	return h.f.key
}

// Stat returns the file's attributes.
func (h *File) Stat() Stat {
	h.c.mu.RLock()
	defer h.c.mu.RUnlock()
	return h.f.statLocked(h.c)
}

// Version changes whenever the content changes by a path other than a
// write through a File: Set, a flush that redacted it, a reload.
func (h *File) Version() uint64 {
	h.c.mu.RLock()
	defer h.c.mu.RUnlock()
	return uint64(h.f.ver)
}

// ReadAt reads from the cached value at off, as io.ReaderAt does.
func (h *File) ReadAt(p []byte, off int64) (int, error) {
	h.c.mu.RLock()
	defer h.c.mu.RUnlock()
	if off >= int64(len(h.f.data)) {
		return 0, io.EOF
	}
	n := copy(p, h.f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt writes p at off, extending the file with zeros past its end.
func (h *File) WriteAt(p []byte, off int64) (int, error) {
	return h.write(p, off, false)
}

// Append writes p at the current end of the file, atomically with respect
// to every other writer (O_APPEND).
func (h *File) Append(p []byte) (int, error) {
	return h.write(p, 0, true)
}

func (h *File) write(p []byte, off int64, appending bool) (int, error) {
	c := h.c
	if err := c.changeable("write", h.Key()); err != nil {
		return 0, err
	}
	c.mu.Lock()
	f := h.f
	if appending {
		off = int64(len(f.data))
	}
	end := off + int64(len(p))
	if off < 0 {
		c.mu.Unlock()
		return 0, pathErr("write", f.key, ErrInvalidOp)
	}
	if err := c.sizeAllowed("write", f.key, max(end, int64(len(f.data)))); err != nil {
		c.mu.Unlock()
		return 0, err
	}
	was := cap(f.data)
	var freed int64 // the old array, when a copy replaced it and no one else holds it
	if end > int64(len(f.data)) {
		if int64(was) < end && !f.shared.Load() {
			freed = int64(was)
		}
		// Copies a shared value when off is inside it (see growLocked);
		// an append grows in place.
		f.data = c.growLocked(f, end, off)
	} else if f.shared.Load() {
		f.data = append([]byte(nil), f.data...)
		f.shared.Store(false)
	}
	copy(f.data[off:], p)
	if off < f.jlen {
		f.jfull = true // changes bytes the journal holds
	}
	f.size = int64(len(f.data))
	f.mtime = c.now().UnixNano()
	h.wrote = true
	f.changed = true
	if _, ok := f.xattrs.get(meta.Writer); f.by != h.by || !ok {
		c.setWriterLocked(f, h.by)
	}
	c.markDirtyLocked(f)
	due := c.grewLocked(int64(cap(f.data) - was))
	c.mu.Unlock()
	c.released(freed)
	c.trim(due)
	return len(p), nil
}

// Truncate sets the file's size, dropping or zero-filling bytes.
func (h *File) Truncate(size int64) error {
	c := h.c
	if err := c.changeable("truncate", h.Key()); err != nil {
		return err
	}
	c.mu.Lock()
	if err := c.truncateLocked(h.f, size); err != nil {
		c.mu.Unlock()
		return err
	}
	h.wrote = true
	c.setWriterLocked(h.f, h.by)
	c.markDirtyLocked(h.f)
	c.mu.Unlock()
	return nil
}

// SetAttr changes the attributes of the open file, removed or not.
func (h *File) SetAttr(a Attr) (Stat, error) {
	if err := h.c.changeable("setattr", h.Key()); err != nil {
		return Stat{}, err
	}
	st, err := h.c.setFileAttr(h.f, a)
	if err == nil && a.Size != nil {
		h.c.mu.Lock()
		h.wrote = true
		h.c.mu.Unlock()
	}
	return st, err
}

// Sync makes the file durable: it flushes the session (every dirty entry,
// so that the file's name, which may depend on a rename, is durable too).
// It fails only when the store refused the file itself: an entry of
// another file that the store refuses does not fail this one's fsync.
func (h *File) Sync(ctx context.Context) error {
	return h.c.Sync(ctx, h.Key())
}

// Written reports whether the file was changed through this handle since
// its last Commit: what Commit is about to record.
func (h *File) Written() bool {
	h.c.mu.RLock()
	defer h.c.mu.RUnlock()
	return h.wrote && h.f.key != "" && !h.c.Local(h.f.key)
}

// Commit records the file's value in the journal (when there is one) if it
// was written through this handle since the last Commit, so that it
// survives a crash of the process before the next flush, and tells watchers
// of the write. A mount calls it when a descriptor is closed (FUSE FLUSH,
// which close(2) waits for; RELEASE comes later and asynchronously).
func (h *File) Commit() error {
	c := h.c
	c.mu.Lock()
	wrote := h.wrote
	h.wrote = false
	f := h.f
	key := f.key
	var e backend.Entry
	base := -1 // where the bytes to record as an append start; -1: the whole value
	gen := f.gen
	if wrote && key != "" && !c.unjournaled(key) && c.opts.Journal != nil && gen != 0 {
		e = backend.Entry{Key: key, Info: f.infoLocked(), Value: f.shareRLocked()}
		if !f.jfull && f.jlen <= int64(len(f.data)) {
			// Only bytes after jlen changed: record those.
			base = int(f.jlen)
		}
		f.jlen, f.jfull = int64(len(f.data)), false
	}
	c.mu.Unlock()
	if !wrote || key == "" {
		return nil
	}
	var err error
	switch {
	case e.Key == "":
	case base == len(e.Value):
		// Nothing new since the last record (another handle's commit
		// recorded it).
	case base >= 0:
		var ok bool
		if ok, err = c.journalAppend(gen, e, base); !ok {
			err = c.journal(gen, []backend.Entry{e}, nil)
		}
	default:
		err = c.journal(gen, []backend.Entry{e}, nil)
	}
	if err != nil {
		c.needFullRecord(f)
	}
	c.emit(Change{Op: OpWrite, Key: key})
	return err
}

// Close ends the handle, committing what was written since the last Commit,
// and lets its value go when the memory budget needs it to.
func (h *File) Close() error {
	err := h.Commit()
	if h.closed.CompareAndSwap(false, true) {
		unpin(h.f)
		h.c.trimNow()
	}
	return err
}
