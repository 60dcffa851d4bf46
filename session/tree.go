package session

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// namespace is the session's tree (guarded by Context.mu): every file and
// directory it knows, by key.
type namespace struct {
	files map[string]*file // every known file, by key
	dirs  map[string]*dir  // every known directory, by key ("" is the root)
	ino   uint64           // last inode number handed out
}

// nextInoLocked hands out an inode number.
func (t *namespace) nextInoLocked() uint64 {
	t.ino++
	return t.ino
}

// Stat is what the session knows of a file or directory, from the index.
type Stat struct {
	Key    string
	Ino    uint64
	IsDir  bool
	Size   int64
	MTime  time.Time
	ATime  time.Time
	CTime  time.Time
	Mode   fs.FileMode // node type, special bits and permissions
	UID    uint32
	GID    uint32
	Rdev   uint64 // device number of a device node
	Loaded bool   // the value is in memory (always true for directories)
	Dirty  bool   // the file has changes not yet flushed
	Nlink  uint32 // names of a file; 2 + subdirectories of a directory
}

// Stat answers from the index alone: no value is loaded.
func (c *Context) Stat(key string) (Stat, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.statLocked(key)
}

func (c *Context) statLocked(key string) (Stat, error) {
	if f, ok := c.mu.tree.files[key]; ok {
		return f.statLocked(c), nil
	}
	if d, ok := c.mu.tree.dirs[key]; ok {
		return c.dirStatLocked(key, d), nil
	}
	if key != "" {
		if err := backend.ValidateKey(key); err != nil {
			return Stat{}, err
		}
	}
	return Stat{}, notExist("stat", key)
}

func (c *Context) dirStatLocked(key string, d *dir) Stat {
	nlink := uint32(2 + d.subdirs)
	return Stat{Key: key, Ino: d.ino, IsDir: true, Size: 4096, MTime: time.Unix(0, d.mtime),
		ATime: time.Unix(0, d.atime), CTime: time.Unix(0, d.ctime), Mode: fs.ModeDir | backend.PermBits(d.mode),
		UID: d.uid, GID: d.gid, Loaded: true, Dirty: d.gen != 0, Nlink: nlink}
}

func (f *file) statLocked(c *Context) Stat {
	_, dirty := c.mu.pending.dirty[f]
	nlink := uint32(1)
	switch {
	case f.key == "":
		nlink = 0
	case f.link != nil:
		nlink = uint32(len(f.link.names))
	}
	return Stat{Key: f.key, Ino: f.ino, Size: f.size, MTime: time.Unix(0, f.mtime), ATime: time.Unix(0, f.atime),
		CTime: time.Unix(0, f.ctime), Mode: f.mode, UID: f.uid, GID: f.gid, Rdev: f.rdev,
		Loaded: f.loaded, Dirty: dirty || f.gen != 0, Nlink: nlink}
}

// DirEntry is one name in a directory listing.
type DirEntry struct {
	Name  string
	Ino   uint64
	IsDir bool
	Mode  fs.FileMode // the node type (fs.ModeDir, fs.ModeSymlink, ...; 0 for a file)
}

// ReadDir lists directory key ("" is the root), sorted by name.
func (c *Context) ReadDir(key string) ([]DirEntry, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	d, ok := c.mu.tree.dirs[key]
	if !ok {
		if _, isFile := c.mu.tree.files[key]; isFile {
			return nil, pathErr("readdir", key, ErrNotDir)
		}
		return nil, notExist("readdir", key)
	}
	out := make([]DirEntry, 0, len(d.children))
	for name := range d.children {
		k := backend.Join(key, name)
		if sub, ok := c.mu.tree.dirs[k]; ok {
			out = append(out, DirEntry{Name: name, Ino: sub.ino, IsDir: true, Mode: fs.ModeDir})
		} else if f, ok := c.mu.tree.files[k]; ok {
			out = append(out, DirEntry{Name: name, Ino: f.ino, Mode: f.mode.Type()})
		}
	}
	slices.SortFunc(out, func(a, b DirEntry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Mkdir makes directory key in an existing parent, with mode's
// permissions and special bits. The directory is an entry of the store
// from the next flush.
func (c *Context) Mkdir(key string, mode fs.FileMode, uid, gid uint32) error {
	if err := c.creatable("mkdir", key); err != nil {
		return err
	}
	c.mu.Lock()
	if _, ok := c.mu.tree.dirs[key]; ok {
		c.mu.Unlock()
		return exist("mkdir", key)
	}
	if _, ok := c.mu.tree.files[key]; ok {
		c.mu.Unlock()
		return exist("mkdir", key)
	}
	parent, err := c.parentLocked("mkdir", key)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	now := c.now().UnixNano()
	d := c.newDirLocked(key, now)
	d.mode, d.uid, d.gid = backend.PermBits(mode), uid, gid
	c.mu.tree.dirs[key] = d
	c.markDirDirtyLocked(d)
	_, name := backend.Split(key)
	parent.children[name] = struct{}{}
	parent.subdirs++
	c.touchDirLocked(parent, now)
	gen := c.mu.pending.gen
	c.mu.Unlock()
	c.emit(Change{Op: OpMkdir, Key: key})
	return c.journalDir(gen, parentOf(key), key)
}

// Rmdir removes the empty directory key.
func (c *Context) Rmdir(key string) error {
	if err := c.writable("rmdir", key); err != nil {
		return err
	}
	c.mu.Lock()
	d, ok := c.mu.tree.dirs[key]
	switch {
	case !ok:
		_, isFile := c.mu.tree.files[key]
		c.mu.Unlock()
		if isFile {
			return pathErr("rmdir", key, ErrNotDir)
		}
		return notExist("rmdir", key)
	case len(d.children) > 0:
		c.mu.Unlock()
		return pathErr("rmdir", key, ErrNotEmpty)
	}
	c.removeDirLocked(d)
	if parent, ok := c.mu.tree.dirs[parentOf(key)]; ok {
		_, name := backend.Split(key)
		delete(parent.children, name)
		parent.subdirs--
		c.touchDirLocked(parent, c.now().UnixNano())
	}
	gen := c.mu.pending.gen
	c.mu.Unlock()
	c.emit(Change{Op: OpRmdir, Key: key})
	return c.journal(gen, nil, []string{key})
}

// Attr is a change of attributes; nil fields are left alone.
type Attr struct {
	Size  *int64
	Mode  *fs.FileMode // permissions and special bits (the type never changes)
	UID   *uint32
	GID   *uint32
	MTime *time.Time
	ATime *time.Time

	by *meta.WriterInfo // from the context given to SetAttr
}

// SetAttr changes the attributes of file or directory key. Truncating or
// extending (Size) loads the value first. Attribute changes of a file are
// persisted; those of a directory live in the session.
func (c *Context) SetAttr(ctx context.Context, key string, a Attr) (Stat, error) {
	a.by = writerFrom(ctx)
	if err := c.attrWritable("setattr", key); err != nil {
		return Stat{}, err
	}
	if f := c.pinKey(key); f != nil {
		defer unpin(f)
		// Persisting an attribute change means saving the entry, which
		// needs its value.
		if err := c.Resolve(ctx, key); err != nil {
			return Stat{}, err
		}
		return c.setFileAttr(f, a)
	}
	c.mu.Lock()
	d, ok := c.mu.tree.dirs[key]
	if !ok {
		c.mu.Unlock()
		return Stat{}, notExist("setattr", key)
	}
	if a.Size != nil {
		c.mu.Unlock()
		return Stat{}, pathErr("truncate", key, ErrIsDir)
	}
	if a.Mode != nil {
		d.mode = backend.PermBits(*a.Mode)
	}
	if a.UID != nil {
		d.uid = *a.UID
	}
	if a.GID != nil {
		d.gid = *a.GID
	}
	if a.MTime != nil {
		d.mtime = a.MTime.UnixNano()
	}
	if a.ATime != nil {
		d.atime = a.ATime.UnixNano()
	}
	d.ctime = c.now().UnixNano()
	c.markDirDirtyLocked(d)
	st, _ := c.statLocked(key)
	gen := c.mu.pending.gen
	c.mu.Unlock()
	c.emit(Change{Op: OpAttr, Key: key})
	return st, c.journalDir(gen, key)
}

func (c *Context) setFileAttr(f *file, a Attr) (Stat, error) {
	c.mu.Lock()
	if !f.loaded {
		// Loaded by Resolve but dropped since (or removed and re-created):
		// callers retry on this rare race.
		c.mu.Unlock()
		return Stat{}, pathErr("setattr", f.key, fs.ErrNotExist)
	}
	if a.Size == nil && a.MTime == nil && a.ATime == nil && (a.Mode == nil || backend.PermBits(*a.Mode) == backend.PermBits(f.mode)) &&
		(a.UID == nil || *a.UID == f.uid) && (a.GID == nil || *a.GID == f.gid) {
		// Nothing changes: no save, no version. On a shared store it
		// would be a change to whoever renames or removes the file
		// meanwhile (TestNoOpAttrChangesNothing).
		st := f.statLocked(c)
		c.mu.Unlock()
		return st, nil
	}
	if a.Size != nil {
		if err := c.truncateLocked(f, *a.Size); err != nil {
			c.mu.Unlock()
			return Stat{}, err
		}
		c.setWriterLocked(f, a.by)
	}
	f.by = a.by
	if a.Mode != nil {
		f.mode = f.mode.Type() | backend.PermBits(*a.Mode)
	}
	if a.UID != nil {
		f.uid = *a.UID
	}
	if a.GID != nil {
		f.gid = *a.GID
	}
	if a.MTime != nil {
		f.mtime = a.MTime.UnixNano()
	}
	if a.ATime != nil {
		f.atime = a.ATime.UnixNano()
	}
	c.markDirtyLocked(f)
	st := f.statLocked(c)
	c.mu.Unlock()
	if st.Key != "" {
		op := OpAttr
		if a.Size != nil {
			op = OpWrite
		}
		c.emit(Change{Op: op, Key: st.Key})
		return st, c.journalKey(st.Key)
	}
	return st, nil
}

func (c *Context) truncateLocked(f *file, size int64) error {
	f.changed = true
	if size < f.jlen {
		f.jfull = true
	}
	if size < 0 {
		return pathErr("truncate", f.key, ErrInvalidOp)
	}
	if err := c.sizeAllowed("truncate", f.key, size); err != nil {
		return err
	}
	switch {
	case size == int64(len(f.data)):
	case size < int64(len(f.data)):
		if f.shared.Load() {
			f.data = slices.Clone(f.data[:size])
			f.shared.Store(false)
		} else {
			clear(f.data[size:])
			f.data = f.data[:size]
		}
	default:
		// Only the new bytes change (to zeros): from is the old length.
		f.data = c.growLocked(f, size, int64(len(f.data)))
	}
	f.size = size
	f.mtime = c.now().UnixNano()
	return nil
}

// growLocked returns f.data extended with zeros to size, owned by f, for
// the caller to change from byte from on: from >= len(f.data) when it
// changes only the new bytes (an append, a write past a hole, a truncate
// that extends), less when it also overwrites some of the old ones (a
// write that starts inside the value and ends past it).
func (c *Context) growLocked(f *file, size, from int64) []byte {
	// Growing in place into the spare capacity is safe when the value is
	// not shared, and when it is but the caller changes only bytes past
	// its end: every other holder views at most its first len(f.data)
	// bytes. A holder's length never exceeds the value's while the array
	// is shared (a truncate of a shared value copies it), and every value
	// handed out is clipped at its length (file.shareRLocked), so a holder
	// that appends copies rather than writing into the spare capacity,
	// which is therefore ours. The shared flag stays: the old bytes are
	// still seen. The spare capacity may hold bytes of a caller's buffer
	// (Set): zero it.
	//
	// A change below len(f.data) of a shared value must copy even when
	// the capacity would do: growing in place and then writing over the
	// old bytes would change them under their holders (a scan's caller,
	// an in-flight flush's save, a journal record being written).
	if int64(cap(f.data)) >= size && (from >= int64(len(f.data)) || !f.shared.Load()) {
		nd := f.data[:size]
		clear(nd[len(f.data):])
		return nd
	}
	// Grow geometrically so that a stream of appends costs amortised O(n):
	// twice the length, not the capacity, which a shared buffer (copied
	// at every write after a flush or journal commit shared it) would
	// otherwise double at each copy, up to MaxFileSize.
	newCap := max(size, int64(len(f.data))*2)
	if c.opts.MaxFileSize > 0 {
		newCap = min(newCap, max(size, c.opts.MaxFileSize))
	}
	nd := make([]byte, size, newCap)
	copy(nd, f.data)
	f.shared.Store(false)
	return nd
}
