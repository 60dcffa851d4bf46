package fsnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/backend"
)

// reservedDir is memfs's own directory at the root of the mount.
const reservedDir = ".memfs"

// Inode numbers of the virtual files: far above what a session hands out.
const (
	reservedIno = 1<<62 + iota
	statusIno
	changesIno
	eventsIno
	eventsDirIno
	eventsHeadIno
	contextIno
	contextDirIno
	searchDirIno
	answerInoBase                 // + a counter: the files under search/ and context/
	chunkInoBase  = 1<<62 + 1<<40 // + a chunk's position in its directory listing
)

// reservedNode is the read-only .memfs directory.
type reservedNode struct {
	gofs.Inode
	root *Root
}

var (
	_ gofs.NodeLookuper  = (*reservedNode)(nil)
	_ gofs.NodeReaddirer = (*reservedNode)(nil)
	_ gofs.NodeGetattrer = (*reservedNode)(nil)
	_ gofs.NodeCreater   = (*reservedNode)(nil)
	_ gofs.NodeMkdirer   = (*reservedNode)(nil)
)

func (r *Root) lookupReserved(ctx context.Context, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	n := &reservedNode{root: r}
	n.fill(&out.Attr)
	out.SetEntryTimeout(r.opts.EntryTimeout)
	out.SetAttrTimeout(r.opts.AttrTimeout)
	return r.EmbeddedInode().NewInode(ctx, n, gofs.StableAttr{Mode: syscall.S_IFDIR, Ino: reservedIno}), 0
}

func (n *reservedNode) fill(out *fuse.Attr) {
	out.Ino = reservedIno
	out.Mode = syscall.S_IFDIR | 0o555
	out.Nlink = 2
	st, _ := n.root.c.Stat("")
	out.Owner = fuse.Owner{Uid: st.UID, Gid: st.GID}
}

func (n *reservedNode) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.fill(&out.Attr)
	return 0
}

func (n *reservedNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	var v *virtualNode
	switch name {
	case "status":
		v = &virtualNode{root: n.root, ino: statusIno,
			size: func() int64 { return int64(len(n.root.statusText())) },
			open: func() gofs.FileHandle { return &staticHandle{data: []byte(n.root.statusText())} }}
	case "changes":
		v = &virtualNode{root: n.root, ino: changesIno, size: n.root.feed.Size,
			open: func() gofs.FileHandle { return &feedHandle{root: n.root} }}
	case "events":
		if n.root.opts.Records == nil {
			return nil, syscall.ENOENT
		}
		d := &recordsDir{root: n.root}
		d.fill(&out.Attr)
		return n.NewInode(ctx, d, gofs.StableAttr{Mode: syscall.S_IFDIR, Ino: eventsDirIno}), 0
	case "events.head":
		if n.root.opts.Records == nil {
			return nil, syscall.ENOENT
		}
		v = n.root.recordFile("events.head", eventsHeadIno)
		if v == nil {
			return nil, syscall.ENOENT
		}
	case "context.md":
		if n.root.opts.ContextPack == nil {
			return nil, syscall.ENOENT
		}
		var errno syscall.Errno
		if v, errno = n.root.answerFile(ctx, n.root.opts.ContextPack, "context", "", contextIno); errno != 0 {
			return nil, errno
		}
		out.SetEntryTimeout(0)
	case "context", "search":
		fn, ino := n.root.opts.ContextPack, uint64(contextDirIno)
		if name == "search" {
			fn, ino = n.root.opts.Search, searchDirIno
		}
		if fn == nil {
			return nil, syscall.ENOENT
		}
		d := &answerDir{root: n.root, name: name, ino: ino, fn: fn}
		d.fill(&out.Attr)
		return n.NewInode(ctx, d, gofs.StableAttr{Mode: syscall.S_IFDIR, Ino: ino}), 0
	case "events.jsonl":
		ev := n.root.opts.Events
		if ev == nil {
			return nil, syscall.ENOENT
		}
		v = &virtualNode{root: n.root, ino: eventsIno, size: ev.Size,
			open: func() gofs.FileHandle { return &eventsHandle{ev: ev} }}
	default:
		return nil, syscall.ENOENT
	}
	v.fill(&out.Attr)
	return n.NewInode(ctx, v, gofs.StableAttr{Mode: syscall.S_IFREG, Ino: v.ino}), 0
}

// Readdir lists status and changes only. The other files of .memfs
// (context.md, context/, search/, events.jsonl, events/, events.head) are
// opened by name: they are computed (a context pack, a search) or large
// (the whole event log), and a tree walk over the mount (grep -r, find,
// du, cp -r) must not compute or copy them. .memfs/status names them.
func (n *reservedNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	return gofs.NewListDirStream([]fuse.DirEntry{
		{Name: "changes", Mode: syscall.S_IFREG, Ino: changesIno},
		{Name: "status", Mode: syscall.S_IFREG, Ino: statusIno},
	}), 0
}

func (n *reservedNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EPERM
}

func (n *reservedNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EPERM
}

// virtualNode is a read-only file of memfs's own under .memfs. Its
// content is made when it is opened (status) or read (changes), so it is
// served with DIRECT_IO and no attribute caching: the kernel must neither
// cache it nor trust a size it saw earlier.
type virtualNode struct {
	gofs.Inode
	root *Root
	ino  uint64
	size func() int64
	open func() gofs.FileHandle
}

var (
	_ gofs.NodeOpener    = (*virtualNode)(nil)
	_ gofs.NodeGetattrer = (*virtualNode)(nil)
	_ gofs.NodeSetattrer = (*virtualNode)(nil)
)

func (v *virtualNode) fill(out *fuse.Attr) {
	out.Ino = v.ino
	out.Mode = syscall.S_IFREG | 0o444
	out.Nlink = 1
	out.Size = uint64(v.size())
	now := time.Now()
	out.Mtime, out.Mtimensec = uint64(now.Unix()), uint32(now.Nanosecond())
	st, _ := v.root.c.Stat("")
	out.Owner = fuse.Owner{Uid: st.UID, Gid: st.GID}
}

func (v *virtualNode) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	v.fill(&out.Attr)
	out.SetTimeout(0)
	return 0
}

func (v *virtualNode) Setattr(ctx context.Context, f gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EPERM
}

func (v *virtualNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return nil, 0, syscall.EPERM
	}
	return v.open(), fuse.FOPEN_DIRECT_IO, 0
}

type staticHandle struct{ data []byte }

var _ gofs.FileReader = (*staticHandle)(nil)

func (h *staticHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= int64(len(h.data)) {
		return fuse.ReadResultData(nil), 0
	}
	n := copy(dest, h.data[off:])
	return fuse.ReadResultData(dest[:n]), 0
}

// statusText renders .memfs/status: one "name: value" per line.
func (r *Root) statusText() string {
	indexed, loaded, dirty, removed := r.c.Counts()
	fs := r.c.FlushStatus()
	var b strings.Builder
	fmt.Fprintf(&b, "keys_indexed: %d\nkeys_loaded: %d\ndirty: %d\npending_deletes: %d\n", indexed, loaded, dirty, removed)
	if fs.Time.IsZero() {
		b.WriteString("last_flush: never\nlast_flush_result: none\n")
	} else {
		result := "ok"
		if fs.Err != nil {
			result = "error: " + fs.Err.Error()
		}
		fmt.Fprintf(&b, "last_flush: %s\nlast_flush_result: %s\nflushes: %d\n", fs.Time.Format(time.RFC3339Nano), result, fs.Flushes)
	}
	if r.opts.Status != nil {
		b.WriteString(r.opts.Status())
	}
	var also []string
	if r.opts.ContextPack != nil {
		also = append(also, "context.md", "context/QUERY")
	}
	if r.opts.Search != nil {
		also = append(also, "search/QUERY")
	}
	if r.opts.Events != nil {
		also = append(also, "events.jsonl")
	}
	if r.opts.Records != nil {
		also = append(also, "events/", "events.head")
	}
	if len(also) > 0 {
		fmt.Fprintf(&b, "unlisted: %s\n", strings.Join(also, " "))
	}
	return b.String()
}

// feedHandle reads the change feed at the reader's offset: a reader at
// the old end of file (tail -f) gets the lines appended since.
type feedHandle struct{ root *Root }

var _ gofs.FileReader = (*feedHandle)(nil)

func (h *feedHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n := h.root.feed.ReadAt(dest, off)
	return fuse.ReadResultData(dest[:n]), 0
}

// EventLog is the event log as one read-only byte stream of JSON lines
// (.memfs/events.jsonl); it only grows.
type EventLog interface {
	Size() int64
	ReadAt(ctx context.Context, p []byte, off int64) (int, error)
}

// eventsHandle reads the event log at the reader's offset, so tail -f
// follows it as it grows.
type eventsHandle struct{ ev EventLog }

var _ gofs.FileReader = (*eventsHandle)(nil)

func (h *eventsHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, err := h.ev.ReadAt(ctx, dest, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, syscall.EIO
	}
	return fuse.ReadResultData(dest[:n]), 0
}

// Records are the store's system records that .memfs/events/ and
// .memfs/events.head show read-only: the event log's chunks, whose names
// are its index, so that memfs log --mount pages through a live mount's log
// as through a store.
type Records interface {
	ListSys(ctx context.Context, prefix string) ([]backend.Entry, error)
	LoadSys(ctx context.Context, name string) ([]byte, error)
}

// recordFile is the virtual file of record name, nil if it does not exist.
func (r *Root) recordFile(name string, ino uint64) *virtualNode {
	size := func() int64 {
		l, err := r.opts.Records.ListSys(context.Background(), name)
		for _, e := range l {
			if e.Key == name && err == nil {
				return e.Info.Size
			}
		}
		return 0
	}
	l, err := r.opts.Records.ListSys(context.Background(), name)
	if err != nil || !slices.ContainsFunc(l, func(e backend.Entry) bool { return e.Key == name }) {
		return nil
	}
	return &virtualNode{root: r, ino: ino, size: size, open: func() gofs.FileHandle {
		b, err := r.opts.Records.LoadSys(context.Background(), name)
		if err != nil {
			r.log.Warn("reading a system record", "name", name, "err", err)
		}
		return &staticHandle{data: b}
	}}
}

// recordsDir is .memfs/events/: one read-only file per chunk of the log.
type recordsDir struct {
	gofs.Inode
	root *Root
}

var (
	_ gofs.NodeLookuper  = (*recordsDir)(nil)
	_ gofs.NodeReaddirer = (*recordsDir)(nil)
	_ gofs.NodeGetattrer = (*recordsDir)(nil)
)

func (d *recordsDir) fill(out *fuse.Attr) {
	out.Ino = eventsDirIno
	out.Mode = syscall.S_IFDIR | 0o555
	out.Nlink = 2
	now := time.Now()
	out.Mtime, out.Mtimensec = uint64(now.Unix()), uint32(now.Nanosecond())
	st, _ := d.root.c.Stat("")
	out.Owner = fuse.Owner{Uid: st.UID, Gid: st.GID}
}

func (d *recordsDir) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.fill(&out.Attr)
	out.SetTimeout(0)
	return 0
}

func (d *recordsDir) list(ctx context.Context) ([]backend.Entry, syscall.Errno) {
	l, err := d.root.opts.Records.ListSys(ctx, "events/")
	if err != nil {
		d.root.log.Warn("listing the event log", "err", err)
		return nil, syscall.EIO
	}
	return l, 0
}

func (d *recordsDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	l, errno := d.list(ctx)
	if errno != 0 {
		return nil, errno
	}
	out := make([]fuse.DirEntry, 0, len(l))
	for i, e := range l {
		if _, name := backend.Split(e.Key); backend.Join("events", name) == e.Key {
			out = append(out, fuse.DirEntry{Name: name, Mode: syscall.S_IFREG, Ino: chunkInoBase + uint64(i)})
		}
	}
	return gofs.NewListDirStream(out), 0
}

func (d *recordsDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if backend.ValidateName(name) != nil {
		return nil, syscall.ENOENT
	}
	l, errno := d.list(ctx)
	if errno != 0 {
		return nil, errno
	}
	i := slices.IndexFunc(l, func(e backend.Entry) bool { return e.Key == "events/"+name })
	if i < 0 {
		return nil, syscall.ENOENT
	}
	v := d.root.recordFile("events/"+name, chunkInoBase+uint64(i))
	if v == nil {
		return nil, syscall.ENOENT
	}
	v.fill(&out.Attr)
	return d.NewInode(ctx, v, gofs.StableAttr{Mode: syscall.S_IFREG, Ino: v.ino}), 0
}
