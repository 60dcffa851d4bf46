package fsnode

import (
	"context"
	"io/fs"
	"sync/atomic"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/session"
)

// dirNode is a directory: a view of the session's directory at its path.
type dirNode struct {
	gofs.Inode
	root *Root
	// last is the directory's last known attributes, for fstat on an open
	// directory after it was removed or replaced (go-fuse issue 55).
	last atomic.Pointer[fuse.Attr]
}

var (
	_ gofs.NodeLookuper   = (*dirNode)(nil)
	_ gofs.NodeGetattrer  = (*dirNode)(nil)
	_ gofs.NodeSetattrer  = (*dirNode)(nil)
	_ gofs.NodeReaddirer  = (*dirNode)(nil)
	_ gofs.NodeCreater    = (*dirNode)(nil)
	_ gofs.NodeMkdirer    = (*dirNode)(nil)
	_ gofs.NodeRmdirer    = (*dirNode)(nil)
	_ gofs.NodeUnlinker   = (*dirNode)(nil)
	_ gofs.NodeRenamer    = (*dirNode)(nil)
	_ gofs.NodeStatfser   = (*dirNode)(nil)
	_ gofs.NodeLinker     = (*dirNode)(nil)
	_ gofs.NodeSymlinker  = (*dirNode)(nil)
	_ gofs.NodeMknoder    = (*dirNode)(nil)
	_ gofs.NodeFsyncer    = (*dirNode)(nil)
	_ gofs.NodeOpendirer  = (*dirNode)(nil)
	_ gofs.NodeGetxattrer = (*dirNode)(nil)
)

func (d *dirNode) key() (string, syscall.Errno) {
	k, ok := d.root.keyOf(d.EmbeddedInode())
	if !ok {
		return "", syscall.ENOENT
	}
	return k, 0
}

// childKey returns the key of name in d, validated.
func (d *dirNode) childKey(name string) (string, syscall.Errno) {
	k, errno := d.key()
	if errno != 0 {
		return "", errno
	}
	if k == "" && name == reservedDir {
		return "", syscall.EPERM
	}
	if err := backend.ValidateName(name); err != nil {
		return "", toErrno(err)
	}
	return backend.Join(k, name), 0
}

func (d *dirNode) isRoot() bool { return d.EmbeddedInode() == d.root.EmbeddedInode() }

func (d *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if d.isRoot() && name == reservedDir {
		return d.root.lookupReserved(ctx, out)
	}
	key, errno := d.childKey(name)
	if errno != 0 {
		return nil, errno
	}
	st, err := d.root.c.Stat(key)
	if err != nil {
		return nil, toErrno(err)
	}
	d.root.fillEntry(st, out)
	return d.root.newChild(ctx, d.EmbeddedInode(), st), 0
}

func (d *dirNode) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	key, errno := d.key()
	if errno != 0 {
		if last := d.last.Load(); last != nil {
			out.Attr = *last
			out.Nlink = 0
			return 0
		}
		return errno
	}
	st, err := d.root.c.Stat(key)
	if err != nil {
		return toErrno(err)
	}
	d.root.fillAttr(st, &out.Attr)
	if d.isRoot() && d.root.opts.ShowMemfs {
		out.Nlink++ // .memfs, when listed
	}
	a := out.Attr
	d.last.Store(&a)
	out.SetTimeout(d.root.timeout(key, d.root.opts.AttrTimeout))
	return 0
}

func (d *dirNode) Setattr(ctx context.Context, f gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	key, errno := d.key()
	if errno != 0 {
		return errno
	}
	a := attrOf(in)
	st, err := d.root.c.SetAttr(d.root.as(ctx), key, a)
	if err != nil {
		return toErrno(err)
	}
	d.root.accessChanged(a)
	d.root.fillAttr(st, &out.Attr)
	out.SetTimeout(d.root.opts.AttrTimeout)
	return 0
}

// accessChanged tells Options.Closed of a change of mode or owner: who may
// read a node changed, and the other mounts of a shared store must enforce
// it soon (issue 26), not at the next periodic flush.
func (r *Root) accessChanged(a session.Attr) {
	if a.Mode != nil || a.UID != nil || a.GID != nil {
		r.changed(0)
	}
}

// attrOf converts a SETATTR request into a session attribute change.
func attrOf(in *fuse.SetAttrIn) session.Attr {
	var a session.Attr
	if sz, ok := in.GetSize(); ok {
		s := int64(sz)
		a.Size = &s
	}
	if m, ok := in.GetMode(); ok {
		mode := backend.PermBits(backend.FileMode(m & 0o7777))
		a.Mode = &mode
	}
	if uid, ok := in.GetUID(); ok {
		a.UID = &uid
	}
	if gid, ok := in.GetGID(); ok {
		a.GID = &gid
	}
	if mt, ok := in.GetMTime(); ok {
		a.MTime = &mt
	}
	if at, ok := in.GetATime(); ok {
		a.ATime = &at
	}
	return a
}

// owner is the owner of a new node in d made by the caller of ctx: the
// caller's uid, and the caller's gid unless d is setgid, whose group new
// nodes take (new directories take the setgid bit too).
func (d *dirNode) owner(ctx context.Context) (uid, gid uint32, setgid bool) {
	uid, gid = caller(ctx)
	key, errno := d.key()
	if errno != 0 {
		return uid, gid, false
	}
	if st, err := d.root.c.Stat(key); err == nil && st.Mode&fs.ModeSetgid != 0 {
		return uid, st.GID, true
	}
	return uid, gid, false
}

func (d *dirNode) Opendir(ctx context.Context) syscall.Errno {
	key, errno := d.key()
	if errno != 0 {
		return errno
	}
	if _, err := d.root.c.Stat(key); err != nil {
		return toErrno(err)
	}
	return 0
}

func (d *dirNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	key, errno := d.key()
	if errno != 0 {
		return nil, errno
	}
	ents, err := d.root.c.ReadDir(key)
	if err != nil {
		return nil, toErrno(err)
	}
	list := make([]fuse.DirEntry, 0, len(ents)+3)
	// . and .. as every filesystem lists them (ls -a); go-fuse looks
	// neither up. The root's .. is outside the mount: the kernel shows
	// the mountpoint's parent for it whatever is said here.
	self := d.StableAttr().Ino
	parent := self
	if _, p := d.Parent(); p != nil {
		parent = p.StableAttr().Ino
	}
	list = append(list, fuse.DirEntry{Name: ".", Mode: syscall.S_IFDIR, Ino: self},
		fuse.DirEntry{Name: "..", Mode: syscall.S_IFDIR, Ino: parent})
	if key == "" && d.root.opts.ShowMemfs {
		list = append(list, fuse.DirEntry{Name: reservedDir, Mode: syscall.S_IFDIR, Ino: reservedIno})
	}
	for _, e := range ents {
		mode := backend.UnixMode(e.Mode) & syscall.S_IFMT
		list = append(list, fuse.DirEntry{Name: e.Name, Mode: mode, Ino: e.Ino})
	}
	return gofs.NewListDirStream(list), 0
}

func (d *dirNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	key, errno := d.childKey(name)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	if h, ok, err := d.root.c.External().CreateAnnounced(ctx, key); ok {
		// The helper's create of a file another program made in the
		// store: it appears with its whole value, atomically.
		if err != nil {
			return nil, nil, 0, toErrno(err)
		}
		st := h.Stat()
		d.root.fillEntry(st, out)
		return d.root.newChild(ctx, d.EmbeddedInode(), st), &fileHandle{h: h, root: d.root}, 0, 0
	}
	uid, gid, _ := d.owner(ctx)
	w := d.root.writer(ctx)
	h, err := d.root.c.Create(key, session.CreateOptions{
		Writer:    &w,
		Mode:      backend.PermBits(backend.FileMode(mode & 0o7777)),
		UID:       uid,
		GID:       gid,
		Exclusive: flags&syscall.O_EXCL != 0,
		Truncate:  flags&syscall.O_TRUNC != 0,
	})
	if err != nil {
		return nil, nil, 0, toErrno(err)
	}
	st := h.Stat()
	d.root.fillEntry(st, out)
	child := d.root.newChild(ctx, d.EmbeddedInode(), st)
	if fn, ok := child.Operations().(*fileNode); ok {
		fn.seen.Store(h.Version())
	}
	return child, &fileHandle{h: h, root: d.root, appending: flags&syscall.O_APPEND != 0}, 0, 0
}

func (d *dirNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	key, errno := d.childKey(name)
	if errno != 0 {
		return nil, errno
	}
	if ok, err := d.root.c.External().MkdirAnnounced(key); ok {
		// The helper's mkdir of a directory another program made in
		// the store: it appears as the store has it.
		if err != nil {
			return nil, toErrno(err)
		}
		return d.newEntry(ctx, key, out)
	}
	uid, gid, setgid := d.owner(ctx)
	m := backend.PermBits(backend.FileMode(mode & 0o7777))
	if setgid {
		m |= fs.ModeSetgid
	}
	if err := d.root.c.Mkdir(key, m, uid, gid); err != nil {
		return nil, toErrno(err)
	}
	d.root.changed(0)
	st, err := d.root.c.Stat(key)
	if err != nil {
		return nil, toErrno(err)
	}
	d.root.fillEntry(st, out)
	return d.root.newChild(ctx, d.EmbeddedInode(), st), 0
}

func (d *dirNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	key, errno := d.childKey(name)
	if errno != 0 {
		return errno
	}
	return d.root.changed(toErrno(d.root.c.Rmdir(key)))
}

func (d *dirNode) Unlink(ctx context.Context, name string) syscall.Errno {
	key, errno := d.childKey(name)
	if errno != 0 {
		return errno
	}
	if ok, removed, err := d.root.c.External().RemoveAnnounced(key); ok {
		// The helper's unlink of a key another program removed from the
		// store; a key changed in the session meanwhile stays (EBUSY
		// tells the helper so).
		if err == nil && !removed {
			return syscall.EBUSY
		}
		return toErrno(err)
	}
	w := d.root.writer(ctx)
	return d.root.changed(toErrno(d.root.c.DeleteBy(key, &w)))
}

func (d *dirNode) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	oldKey, errno := d.childKey(name)
	if errno != 0 {
		return errno
	}
	np, ok := newParent.(*dirNode)
	if !ok {
		if r, isRoot := newParent.(*Root); isRoot {
			np = &r.dirNode
		} else {
			return syscall.EXDEV
		}
	}
	newKey, errno := np.childKey(newName)
	if errno != 0 {
		return errno
	}
	var rf session.RenameFlags
	if flags&unix.RENAME_NOREPLACE != 0 {
		rf |= session.RenameNoReplace
	}
	if flags&unix.RENAME_EXCHANGE != 0 {
		rf |= session.RenameExchange
	}
	if flags&^(unix.RENAME_NOREPLACE|unix.RENAME_EXCHANGE) != 0 {
		return syscall.EINVAL
	}
	return d.root.changed(toErrno(d.root.c.Rename(d.root.as(ctx), oldKey, newKey, rf)))
}

// changed tells Options.Closed of a change of the namespace that
// succeeded (errno 0): a mount of a shared store flushes it soon, as it
// does a closed file. It returns errno.
func (r *Root) changed(errno syscall.Errno) syscall.Errno {
	if errno == 0 && r.opts.Closed != nil {
		r.opts.Closed()
	}
	return errno
}

// Statfs reports the store's room (Options.Space): df shows the store's
// usage as used and the room left on the filesystem (or in the quota)
// that holds it as available, so size = used + available.
func (d *dirNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	const bsize = 4096
	sp := backend.Space{Used: -1, Files: -1}
	if fn := d.root.opts.Space; fn != nil {
		var err error
		if sp, err = fn(ctx); err != nil {
			d.root.log.Warn("statfs: the store cannot tell its room", "err", err)
			sp = backend.Space{Used: -1, Files: -1}
		}
	}
	if sp.Used < 0 {
		sp.Used = d.root.c.Stats().Bytes()
	}
	indexed, _, _, _ := d.root.c.Stats().Counts()
	avail := uint64(max(sp.Avail, 0)) / bsize
	out.Bsize = bsize
	out.Frsize = bsize
	out.Blocks = (uint64(sp.Used)+bsize-1)/bsize + avail
	out.Bfree = avail
	out.Bavail = avail
	out.Ffree = avail // one block per node at least
	if sp.Files >= 0 {
		out.Ffree = uint64(sp.Files)
	}
	out.Files = uint64(indexed) + out.Ffree
	out.NameLen = backend.MaxSegmentLen
	return 0
}

func (d *dirNode) Fsync(ctx context.Context, f gofs.FileHandle, flags uint32) syscall.Errno {
	key, ok := d.root.keyOf(d.EmbeddedInode())
	if !ok {
		return syscall.ENOENT
	}
	return syncErrno(d.root.c.Sync(ctx, key))
}

func (d *dirNode) Link(ctx context.Context, target gofs.InodeEmbedder, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	key, errno := d.childKey(name)
	if errno != 0 {
		return nil, errno
	}
	if fn, ok := target.(*fileNode); ok {
		if h := fn.unnamed.Load(); h != nil && h.Key() == "" {
			// An O_TMPFILE file gets its first name.
			if err := h.LinkTo(d.root.as(ctx), key); err != nil {
				return nil, toErrno(err)
			}
			return d.newEntry(ctx, key, out)
		}
	}
	oldKey, ok := d.root.keyOf(target.EmbeddedInode())
	if !ok {
		return nil, syscall.ENOENT
	}
	if err := d.root.c.Link(d.root.as(ctx), oldKey, key); err != nil {
		return nil, toErrno(err)
	}
	d.root.changed(0)
	return d.newEntry(ctx, key, out)
}

var _ = (gofs.NodeTmpfiler)((*dirNode)(nil))

// Tmpfile is open(2) with O_TMPFILE: a file in no directory, which a link
// through /proc/self/fd may name later.
func (d *dirNode) Tmpfile(ctx context.Context, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	if _, errno := d.key(); errno != 0 {
		return nil, nil, 0, errno
	}
	uid, gid, _ := d.owner(ctx)
	w := d.root.writer(ctx)
	h, err := d.root.c.CreateUnnamed(session.CreateOptions{
		Writer: &w,
		Mode:   backend.PermBits(backend.FileMode(mode & 0o7777)),
		UID:    uid,
		GID:    gid,
	})
	if err != nil {
		return nil, nil, 0, toErrno(err)
	}
	st := h.Stat()
	d.root.fillEntry(st, out)
	fn := &fileNode{root: d.root}
	fn.unnamed.Store(h)
	child := d.NewInode(ctx, fn, gofs.StableAttr{Mode: syscall.S_IFREG, Ino: st.Ino})
	return child, &fileHandle{h: h, root: d.root, appending: flags&syscall.O_APPEND != 0}, 0, 0
}

func (d *dirNode) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	key, errno := d.childKey(name)
	if errno != 0 {
		return nil, errno
	}
	uid, gid, _ := d.owner(ctx)
	if err := d.root.c.Symlink(d.root.as(ctx), key, target, uid, gid); err != nil {
		return nil, toErrno(err)
	}
	d.root.changed(0)
	return d.newEntry(ctx, key, out)
}

func (d *dirNode) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	key, errno := d.childKey(name)
	if errno != 0 {
		return nil, errno
	}
	uid, gid, _ := d.owner(ctx)
	if err := d.root.c.MakeNode(d.root.as(ctx), key, backend.FileMode(mode), uint64(dev), uid, gid); err != nil {
		return nil, toErrno(err)
	}
	d.root.changed(0)
	return d.newEntry(ctx, key, out)
}

// newEntry answers a request that made key in d with its entry.
func (d *dirNode) newEntry(ctx context.Context, key string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	st, err := d.root.c.Stat(key)
	if err != nil {
		return nil, toErrno(err)
	}
	d.root.fillEntry(st, out)
	return d.root.newChild(ctx, d.EmbeddedInode(), st), 0
}

// OpendirHandle lets the kernel cache the directory's listing
// (FOPEN_CACHE_DIR) and keep it across opens (FOPEN_KEEP_CACHE): the kernel
// drops it itself when the directory changes through the mount (its
// version) or its mtime moves (seen at the next attribute refresh, within
// the attribute timeout), which covers changes made behind the kernel
// (external changes, conflict copies). find and ls -lR then cost no
// READDIRPLUS on a second walk.
func (d *dirNode) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	return &dirHandle{d: d}, fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE, 0
}

// dirHandle is an open directory: a listing made at the first read.
type dirHandle struct {
	d  *dirNode
	ds gofs.DirStream
}

var (
	_ gofs.FileReaddirenter = (*dirHandle)(nil)
	_ gofs.FileSeekdirer    = (*dirHandle)(nil)
	_ gofs.FileReleasedirer = (*dirHandle)(nil)
)

func (h *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if h.ds == nil {
		ds, errno := h.d.Readdir(ctx)
		if errno != 0 {
			return nil, errno
		}
		h.ds = ds
	}
	if !h.ds.HasNext() {
		return nil, 0
	}
	e, errno := h.ds.Next()
	return &e, errno
}

// Seekdir to 0 (rewinddir) lists the directory again; other offsets are
// positions in the listing, which the kernel only asks for within it.
func (h *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if off == 0 || h.ds == nil {
		if h.ds != nil {
			h.ds.Close()
		}
		ds, errno := h.d.Readdir(ctx)
		if errno != 0 {
			return errno
		}
		h.ds = ds
	}
	if off == 0 {
		return 0
	}
	if sd, ok := h.ds.(gofs.FileSeekdirer); ok {
		return sd.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}

func (h *dirHandle) Releasedir(ctx context.Context, releaseFlags uint32) {
	if h.ds != nil {
		h.ds.Close()
	}
}
