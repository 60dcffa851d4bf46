package fsnode

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/session"
	"github.com/memfs/memfs/status"
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
	contextManifestIno
	statusJSONIno
	runsDirIno
	answerInoBase                 // + a counter: the files under search/ and context/
	chunkInoBase  = 1<<62 + 1<<40 // + a chunk's position in its directory listing
)

// reservedNode is the read-only .memfs directory.
//
// Its files tell each caller only what it could learn through the mount
// itself (the kernel checks the stored modes: the mount uses
// default_permissions). Answers (search/, context/, context.md, context.manifest.json) hold only
// files the caller can read (see query.go). The change feed, the event log
// (events.jsonl) and its chunks (events/) show each line that names a key
// the caller may not see (session.Access.CanSee: a file it cannot read,
// or a gone one in a directory it cannot list) as a placeholder of the
// same length: {"seq":N,"hidden":true} (just {"hidden":true} in the feed)
// padded with spaces. Every caller so sees the same sizes and offsets,
// which the kernel may cache and tail -f needs, and the chain of event
// seqs stays whole. status shows a flush error's text to root only (it
// may name a key). uid 0 sees everything.
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
	if r.mounting.Load() {
		// Mount has not returned: go-fuse still opens a file of the
		// mount from this process (its poll probe). Whoever waits for
		// .memfs/status to act on the mount waits for that too: a kill
		// meanwhile would leave the process waiting on its own mount.
		// (EAGAIN, which the kernel does not cache as it does ENOENT.)
		return nil, syscall.EAGAIN
	}
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
	// Made when the mount was: its times are that moment's.
	out.SetTimes(&n.root.started, &n.root.started, &n.root.started)
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
	case "status", "status.json":
		// The text differs between callers (see statusOf): its size is
		// the caller's, made at each stat (rsync copies st_size bytes).
		asJSON := name == "status.json"
		ino := uint64(statusIno)
		if asJSON {
			ino = statusJSONIno
		}
		v = &virtualNode{root: n.root, ino: ino, size: func() int64 { return 0 },
			sizeFor: func(ctx context.Context) int64 {
				b, _ := n.root.statusBytes(ctx, asJSON)
				return int64(len(b))
			},
			open: func(ctx context.Context) (gofs.FileHandle, syscall.Errno) { return n.root.statusHandle(ctx, asJSON) }}
	case "changes":
		v = &virtualNode{root: n.root, ino: changesIno, size: n.root.feed.Size,
			open: func(context.Context) (gofs.FileHandle, syscall.Errno) { return &feedHandle{root: n.root}, 0 }}
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
		a := n.root.answerFile(ctx, n.root.opts.ContextPack, "context", "", contextIno)
		a.fill(&out.Attr)
		out.Attr.Size = uint64(a.sizeFor(ctx))
		out.SetEntryTimeout(noCache)
		out.SetAttrTimeout(noCache)
		return n.NewInode(ctx, a, gofs.StableAttr{Mode: syscall.S_IFREG, Ino: a.ino}), 0
	case "context.manifest.json":
		// The manifest of context.md: the Answer's name "" + ".manifest.json".
		if n.root.opts.ContextPack == nil {
			return nil, syscall.ENOENT
		}
		a := n.root.answerFile(ctx, n.root.opts.ContextPack, "context", ".manifest.json", contextManifestIno)
		a.fill(&out.Attr)
		out.Attr.Size = uint64(a.sizeFor(ctx))
		out.SetEntryTimeout(noCache)
		out.SetAttrTimeout(noCache)
		return n.NewInode(ctx, a, gofs.StableAttr{Mode: syscall.S_IFREG, Ino: a.ino}), 0
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
	case "history", "snapshots", "checkpoints", "at":
		return n.lookupPast(ctx, name, out)
	case "runs":
		if n.root.opts.Runs == nil {
			return nil, syscall.ENOENT
		}
		d := &runsDir{root: n.root}
		n.root.readOnlyDir(runsDirIno, &out.Attr)
		return n.NewInode(ctx, d, gofs.StableAttr{Mode: syscall.S_IFDIR, Ino: runsDirIno}), 0
	case "events.jsonl":
		ev := n.root.opts.Events
		if ev == nil {
			return nil, syscall.ENOENT
		}
		v = &virtualNode{root: n.root, ino: eventsIno, size: ev.Size,
			open: func(context.Context) (gofs.FileHandle, syscall.Errno) { return &eventsHandle{root: n.root, ev: ev}, 0 }}
	default:
		return nil, syscall.ENOENT
	}
	v.fill(&out.Attr)
	if v.sizeFor != nil {
		out.Attr.Size = uint64(v.sizeFor(ctx))
	}
	out.SetEntryTimeout(noCache)
	out.SetAttrTimeout(noCache)
	return n.NewInode(ctx, v, gofs.StableAttr{Mode: syscall.S_IFREG, Ino: v.ino}), 0
}

// Readdir lists status and changes only. The other files of .memfs
// (context.md, context.manifest.json, context/, search/, events.jsonl, events/, events.head) are
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
// content is made for the caller when it is opened (status, answers) or
// read (changes, events.jsonl), so it is served with DIRECT_IO and no
// attribute caching: the kernel must neither cache it, nor trust a size
// it saw earlier, nor hand one caller's bytes to another.
type virtualNode struct {
	gofs.Inode
	root *Root
	ino  uint64
	// size is what stat shows: the same for every caller (0 for a file
	// whose length depends on the caller), unless sizeFor is set.
	size func() int64
	// sizeFor, when set, is the size of the file for the caller in ctx
	// (a text that differs between callers, made again at each stat).
	sizeFor func(ctx context.Context) int64
	// open makes the handle for the caller in ctx.
	open func(ctx context.Context) (gofs.FileHandle, syscall.Errno)
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
	if v.sizeFor != nil {
		out.Size = uint64(v.sizeFor(ctx))
	}
	out.SetTimeout(noCache)
	return 0
}

func (v *virtualNode) Setattr(ctx context.Context, f gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EPERM
}

func (v *virtualNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return nil, 0, syscall.EPERM
	}
	h, errno := v.open(ctx)
	if errno != 0 {
		return nil, 0, errno
	}
	return h, fuse.FOPEN_DIRECT_IO, 0
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

// statusOf is .memfs/status for cr. A flush error's text may name a key,
// so only root reads it.
func (r *Root) statusOf(cr session.Cred) status.Status {
	var st status.Status
	st.KeysIndexed, st.KeysLoaded, st.Dirty, st.PendingDeletes = r.c.Stats().Counts()
	fs := r.c.Stats().LastFlush()
	st.LastFlushResult = status.ResultNone
	if !fs.Time.IsZero() {
		st.LastFlush, st.Flushes, st.LastFlushResult = fs.Time, fs.Flushes, status.ResultOK
		switch {
		case fs.Err != nil && cr.UID == 0:
			st.LastFlushResult = "error: " + fs.Err.Error()
		case fs.Err != nil:
			st.LastFlushResult = status.ResultHidden
		}
	}
	st.Damaged, st.DamagedHidden = r.damaged(cr)
	if r.opts.Status != nil {
		r.opts.Status(cr, &st)
	}
	if r.opts.ContextPack != nil {
		st.Unlisted = append(st.Unlisted, "context.md", "context.manifest.json", "context/QUERY", "context/QUERY.manifest.json", "context/"+status.QueryFile)
	}
	if r.opts.Search != nil {
		st.Unlisted = append(st.Unlisted, "search/QUERY", "search/"+status.QueryFile)
	}
	if r.opts.Events != nil {
		st.Unlisted = append(st.Unlisted, "events.jsonl")
	}
	if r.opts.Records != nil {
		st.Unlisted = append(st.Unlisted, "events/", "events.head")
	}
	if r.opts.History != nil {
		st.Unlisted = append(st.Unlisted, "history/KEY/", "snapshots/", "checkpoints/", "at/SEQ/")
	}
	if r.opts.Runs != nil {
		st.Unlisted = append(st.Unlisted, "runs/RUN/")
	}
	st.Unlisted = append(st.Unlisted, "status.json")
	return st
}

// statusHandle opens .memfs/status (or, with asJSON, status.json) for the
// caller of ctx.
func (r *Root) statusHandle(ctx context.Context, asJSON bool) (gofs.FileHandle, syscall.Errno) {
	b, err := r.statusBytes(ctx, asJSON)
	if err != nil {
		r.log.Warn("rendering .memfs/status", "err", err)
		return nil, syscall.EIO
	}
	return &staticHandle{data: b}, 0
}

// statusBytes is .memfs/status (or status.json) for the caller in ctx.
func (r *Root) statusBytes(ctx context.Context, asJSON bool) ([]byte, error) {
	st := r.statusOf(callerCred(ctx))
	if asJSON {
		b, err := json.Marshal(st)
		return append(b, '\n'), err
	}
	return st.MarshalText()
}

// feedHandle reads the change feed at the reader's offset: a reader at
// the old end of file (tail -f) gets the lines appended since.
type feedHandle struct{ root *Root }

var _ gofs.FileReader = (*feedHandle)(nil)

func (h *feedHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	cr := callerCred(ctx)
	if cr.UID == 0 {
		n := h.root.feed.ReadAt(dest, off)
		return fuse.ReadResultData(dest[:n]), 0
	}
	n := h.root.feed.ReadMaskedAt(dest, off, h.root.seeable(cr))
	return fuse.ReadResultData(dest[:n]), 0
}

// EventLog is the event log as one read-only byte stream of JSON lines
// (.memfs/events.jsonl); it only grows.
type EventLog interface {
	Size() int64
	ReadAt(ctx context.Context, p []byte, off int64) (int, error)
	// ReadMaskedAt is ReadAt for a reader who sees only the keys that
	// visible shows: the lines about others read as placeholders of the
	// same length (see reservedNode).
	ReadMaskedAt(ctx context.Context, p []byte, off int64, visible func(keys ...string) []bool) (int, error)
}

// eventsHandle reads the event log at the reader's offset, so tail -f
// follows it as it grows.
type eventsHandle struct {
	root *Root
	ev   EventLog
}

var _ gofs.FileReader = (*eventsHandle)(nil)

func (h *eventsHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	var n int
	var err error
	if cr := callerCred(ctx); cr.UID == 0 {
		n, err = h.ev.ReadAt(ctx, dest, off)
	} else {
		n, err = h.ev.ReadMaskedAt(ctx, dest, off, h.root.seeable(cr))
	}
	if err != nil && !errors.Is(err, io.EOF) {
		h.root.log.Warn("reading the event log", "err", err)
		return nil, syscall.EIO
	}
	return fuse.ReadResultData(dest[:n]), 0
}

// seeable is what a line's owner (the event log, the change feed) asks
// to mask the lines cr may not see: one lock for all the keys it names.
func (r *Root) seeable(cr session.Cred) func(keys ...string) []bool {
	return func(keys ...string) []bool { return r.c.Access().Seeable(cr, keys...) }
}

// Records are the event log's own records that .memfs/events/ and
// .memfs/events.head show read-only, as the store holds them: its chunks,
// whose names are its index, so that memfs log --mount pages through a live
// mount's log as through a store. The engine gives the event log itself
// (eventlog.Log); fsnode never reads the store. RecordNames and RecordSize
// must answer from memory: a getattr or a lookup calls them.
type Records interface {
	// RecordNames returns the names of the records that start with
	// prefix, sorted.
	RecordNames(prefix string) []string
	// RecordSize returns the size of record name; false when there is
	// no such record.
	RecordSize(name string) (int64, bool)
	// ReadRecord returns record name's bytes, which the caller must not
	// modify; it may do I/O, with ctx.
	ReadRecord(ctx context.Context, name string) ([]byte, error)
	// ReadRecordMasked is ReadRecord for a reader who sees only the keys
	// that visible shows (as EventLog.ReadMaskedAt); the bytes are the
	// caller's.
	ReadRecordMasked(ctx context.Context, name string, visible func(keys ...string) []bool) ([]byte, error)
}

// recordFile is the virtual file of record name, nil if it does not exist.
// A chunk of the event log (events/...) is masked for its opener as
// events.jsonl is (see reservedNode): same size, hidden lines replaced.
func (r *Root) recordFile(name string, ino uint64) *virtualNode {
	if _, ok := r.opts.Records.RecordSize(name); !ok {
		return nil
	}
	size := func() int64 {
		size, _ := r.opts.Records.RecordSize(name)
		return size
	}
	return &virtualNode{root: r, ino: ino, size: size, open: func(ctx context.Context) (gofs.FileHandle, syscall.Errno) {
		var b []byte
		var err error
		if cr := callerCred(ctx); cr.UID == 0 {
			b, err = r.opts.Records.ReadRecord(ctx, name)
		} else {
			b, err = r.opts.Records.ReadRecordMasked(ctx, name, r.seeable(cr))
		}
		if err != nil {
			if errors.Is(err, backend.ErrKeyNotFound) {
				return nil, syscall.ENOENT // gone since the lookup (a leftover chunk removed)
			}
			r.log.Warn("reading a record of the event log", "name", name, "err", err)
			return nil, syscall.EIO
		}
		return &staticHandle{data: b}, 0
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

// chunks returns the names of the chunks directly under events/, in order.
func (d *recordsDir) chunks() []string {
	names := d.root.opts.Records.RecordNames("events/")
	return slices.DeleteFunc(names, func(n string) bool {
		_, name := backend.Split(n)
		return backend.Join("events", name) != n
	})
}

func (d *recordsDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	names := d.chunks()
	out := make([]fuse.DirEntry, 0, len(names))
	for i, n := range names {
		_, name := backend.Split(n)
		out = append(out, fuse.DirEntry{Name: name, Mode: syscall.S_IFREG, Ino: chunkInoBase + uint64(i)})
	}
	return gofs.NewListDirStream(out), 0
}

func (d *recordsDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if backend.ValidateName(name) != nil {
		return nil, syscall.ENOENT
	}
	i := slices.Index(d.chunks(), "events/"+name)
	if i < 0 {
		return nil, syscall.ENOENT
	}
	v := d.root.recordFile("events/"+name, chunkInoBase+uint64(i))
	if v == nil {
		return nil, syscall.ENOENT
	}
	v.fill(&out.Attr)
	out.SetAttrTimeout(noCache)
	return d.NewInode(ctx, v, gofs.StableAttr{Mode: syscall.S_IFREG, Ino: v.ino}), 0
}
