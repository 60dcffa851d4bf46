package fsnode

import (
	"context"
	"sync/atomic"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/session"
)

// fileNode is a file: a view of the session's file at its path.
type fileNode struct {
	gofs.Inode
	root *Root
	// seen is the content version the kernel's page cache holds, as of
	// the last open; an open at the same version keeps the cache.
	seen atomic.Uint64
	// unnamed is the file an O_TMPFILE open made, until a link names it.
	unnamed atomic.Pointer[session.File]
}

var (
	_ gofs.NodeGetattrer  = (*fileNode)(nil)
	_ gofs.NodeSetattrer  = (*fileNode)(nil)
	_ gofs.NodeOpener     = (*fileNode)(nil)
	_ gofs.NodeFsyncer    = (*fileNode)(nil)
	_ gofs.NodeGetxattrer = (*fileNode)(nil)
)

func (n *fileNode) key() (string, syscall.Errno) {
	k, ok := n.root.keyOf(n.EmbeddedInode())
	if !ok {
		return "", syscall.ENOENT
	}
	return k, 0
}

func (n *fileNode) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	var st session.Stat
	if fh, ok := f.(*fileHandle); ok {
		// An open file answers from its handle: it may have been removed.
		st = fh.h.Stat()
	} else if h := n.unnamed.Load(); h != nil && h.Key() == "" {
		st = h.Stat()
	} else {
		key, errno := n.key()
		if errno != 0 {
			return errno
		}
		var err error
		if st, err = n.root.c.Stat(key); err != nil {
			return toErrno(err)
		}
	}
	n.root.fillAttr(st, &out.Attr)
	out.SetTimeout(n.root.timeout(st.Key, n.root.opts.AttrTimeout))
	return 0
}

func (n *fileNode) Setattr(ctx context.Context, f gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	a := attrOf(in)
	var st session.Stat
	var err error
	if fh, ok := f.(*fileHandle); ok {
		st, err = fh.h.SetAttr(a)
	} else {
		key, errno := n.key()
		if errno != 0 {
			return errno
		}
		st, err = n.root.c.SetAttr(n.root.as(ctx), key, a)
	}
	if err != nil {
		return toErrno(err)
	}
	n.root.accessChanged(a)
	n.root.fillAttr(st, &out.Attr)
	out.SetTimeout(n.root.timeout(st.Key, n.root.opts.AttrTimeout))
	return 0
}

func (n *fileNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	key, errno := n.key()
	if errno != 0 {
		return nil, 0, errno
	}
	octx := ctx
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0 {
		octx = n.root.as(ctx) // who writes through it
	}
	before, _ := n.root.c.Stat(key) // the size the kernel may hold
	h, err := n.root.c.Open(octx, key)
	if err != nil {
		return nil, 0, toErrno(err)
	}
	if st := h.Stat(); st.Ino != n.StableAttr().Ino || !st.Mode.IsRegular() {
		// The name now holds another node (a keep-both resolution or
		// another writer put it there, a symlink put in its place since
		// the lookup), and the kernel's entry notification has not
		// arrived: never open what the kernel did not look up. ESTALE,
		// not ENOENT: the kernel looks the name up again and opens what
		// it holds now (a path open that meets ESTALE is retried with
		// LOOKUP_REVAL), so the name never seems absent meanwhile.
		h.Close()
		return nil, 0, syscall.ESTALE
	}
	if flags&syscall.O_TRUNC != 0 {
		if err := h.Truncate(0); err != nil {
			h.Close()
			return nil, 0, toErrno(err)
		}
	}
	var fuseFlags uint32
	if v := h.Version(); n.seen.Swap(v) == v {
		fuseFlags |= fuse.FOPEN_KEEP_CACHE
	}
	if st := h.Stat(); st.Size != before.Size && flags&syscall.O_TRUNC == 0 {
		// Loading changed the size the kernel knows (a value another
		// program left a secret in is sealed as it loads, and the
		// invalidation is queued, not done): reads of this open go past
		// the kernel's idea of the end.
		fuseFlags |= fuse.FOPEN_DIRECT_IO
	}
	if flags&syscall.O_ACCMODE == syscall.O_RDONLY && flags&syscall.O_TRUNC == 0 {
		// Nothing to commit at close (an O_RDONLY|O_TRUNC open did change
		// the file, and its FLUSH journals that).
		fuseFlags |= fuse.FOPEN_NOFLUSH
	}
	return &fileHandle{h: h, root: n.root, appending: flags&syscall.O_APPEND != 0}, fuseFlags, 0
}

func (n *fileNode) Fsync(ctx context.Context, f gofs.FileHandle, flags uint32) syscall.Errno {
	if fh, ok := f.(*fileHandle); ok && fh.h.Key() == "" {
		return 0 // in no directory (unlinked, or O_TMPFILE): nothing to keep
	}
	key, errno := n.key()
	if errno != 0 {
		return errno
	}
	return syncErrno(n.root.c.Sync(ctx, key))
}

// fileHandle is an open file: a session.File plus the open flags.
type fileHandle struct {
	h         *session.File
	root      *Root
	appending bool
	// wrote: a write went through the handle. Every close of it from
	// then on is checked (Options.Check), not only the first: a copy
	// of the descriptor another process inherited (a fork, before its
	// exec closes it) may close first.
	wrote atomic.Bool
}

var (
	_ gofs.FileReader    = (*fileHandle)(nil)
	_ gofs.FileWriter    = (*fileHandle)(nil)
	_ gofs.FileFlusher   = (*fileHandle)(nil)
	_ gofs.FileReleaser  = (*fileHandle)(nil)
	_ gofs.FileFsyncer   = (*fileHandle)(nil)
	_ gofs.FileAllocater = (*fileHandle)(nil)
)

func (fh *fileHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	fh.root.reads.Add(1)
	n, _ := fh.h.ReadAt(dest, off)
	return fuse.ReadResultData(dest[:n]), 0
}

func (fh *fileHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	var n int
	var err error
	if fh.appending {
		n, err = fh.h.Append(data)
	} else {
		n, err = fh.h.WriteAt(data, off)
	}
	if err != nil {
		return 0, toErrno(err)
	}
	return uint32(n), 0
}

// Flush runs at every close(2) of a descriptor, and close waits for it:
// this is where a written file is committed to the crash journal. (RELEASE
// arrives later, asynchronously; a kill -9 in between would lose the file.)
// A close of a file written through it is told to Options.Closed.
func (fh *fileHandle) Flush(ctx context.Context) syscall.Errno {
	wrote := fh.h.Written()
	if wrote {
		fh.wrote.Store(true)
	}
	if err := fh.h.Commit(); err != nil {
		return toErrno(err)
	}
	if closed := fh.root.opts.Closed; wrote && closed != nil {
		closed()
	}
	if check := fh.root.opts.Check; fh.wrote.Load() && check != nil {
		return fh.check(check)
	}
	return 0
}

// check runs Options.Check on the file written through fh.
func (fh *fileHandle) check(check func(string, func() []byte) error) syscall.Errno {
	key := fh.h.Key()
	if key == "" {
		return 0 // in no directory (unlinked, or O_TMPFILE)
	}
	err := check(key, func() []byte {
		b := make([]byte, min(fh.h.Stat().Size, MaxChecked))
		n, _ := fh.h.ReadAt(b, 0)
		return b[:n]
	})
	if err == nil {
		return 0
	}
	// The error may quote the value: the log names the key alone.
	fh.root.log.Warn("a file written does not pass its check: kept as written, its close fails (memfs repo check says why)", "key", key)
	return syscall.EINVAL
}

func (fh *fileHandle) Release(ctx context.Context) syscall.Errno {
	return toErrno(fh.h.Close())
}

func (fh *fileHandle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return syncErrno(fh.h.Sync(ctx))
}

// Allocate is fallocate(2). Values are dense in memory: allocating is
// extending the size (or nothing, with KEEP_SIZE); punching a hole or
// zeroing a range writes zeros.
func (fh *fileHandle) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	const keep, punch, zero = unix.FALLOC_FL_KEEP_SIZE, unix.FALLOC_FL_PUNCH_HOLE, unix.FALLOC_FL_ZERO_RANGE
	end := int64(off + size)
	cur := fh.h.Stat().Size
	switch mode {
	case 0, keep:
		if mode == keep || cur >= end {
			return 0
		}
		return toErrno(fh.h.Truncate(end))
	case punch | keep, zero, zero | keep:
		if mode&keep != 0 || mode == punch|keep {
			end = min(end, cur)
		}
		if int64(off) >= end {
			return 0
		}
		if _, err := fh.h.WriteAt(make([]byte, end-int64(off)), int64(off)); err != nil {
			return toErrno(err)
		}
		return 0
	}
	return syscall.EOPNOTSUPP
}

var _ = (gofs.NodeReadlinker)((*fileNode)(nil))

// Readlink returns a symlink's target.
func (n *fileNode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	key, errno := n.key()
	if errno != 0 {
		return nil, errno
	}
	target, err := n.root.c.Readlink(ctx, key)
	if err != nil {
		return nil, toErrno(err)
	}
	return []byte(target), 0
}

var _ = (gofs.NodeLseeker)((*fileNode)(nil))

// Lseek answers SEEK_DATA and SEEK_HOLE: a value is data from its first
// byte to its last, with the one hole at its end.
func (n *fileNode) Lseek(ctx context.Context, f gofs.FileHandle, off uint64, whence uint32) (uint64, syscall.Errno) {
	var st session.Stat
	if fh, ok := f.(*fileHandle); ok {
		st = fh.h.Stat()
	} else {
		key, errno := n.key()
		if errno != 0 {
			return 0, errno
		}
		var err error
		if st, err = n.root.c.Stat(key); err != nil {
			return 0, toErrno(err)
		}
	}
	size := uint64(st.Size)
	switch whence {
	case unix.SEEK_DATA:
		if off >= size {
			return 0, syscall.ENXIO
		}
		return off, 0
	case unix.SEEK_HOLE:
		if off > size {
			return 0, syscall.ENXIO
		}
		return size, 0
	}
	return 0, syscall.EINVAL
}
