package fsnode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/changes"
	"github.com/memfs/memfs/session"
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
	case "status":
		// Size 0: the text differs between callers (see statusText).
		v = &virtualNode{root: n.root, ino: statusIno, size: func() int64 { return 0 },
			open: func(ctx context.Context) (gofs.FileHandle, syscall.Errno) {
				return &staticHandle{data: []byte(n.root.statusText(callerCred(ctx)))}, 0
			}}
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
		var errno syscall.Errno
		if v, errno = n.root.answerFile(ctx, n.root.opts.ContextPack, "context", "", contextIno); errno != 0 {
			return nil, errno
		}
	case "context.manifest.json":
		// The manifest of context.md: the Answer's name "" + ".manifest.json".
		if n.root.opts.ContextPack == nil {
			return nil, syscall.ENOENT
		}
		var errno syscall.Errno
		if v, errno = n.root.answerFile(ctx, n.root.opts.ContextPack, "context", ".manifest.json", contextManifestIno); errno != 0 {
			return nil, errno
		}
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
			open: func(context.Context) (gofs.FileHandle, syscall.Errno) { return &eventsHandle{root: n.root, ev: ev}, 0 }}
	default:
		return nil, syscall.ENOENT
	}
	v.fill(&out.Attr)
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
	// whose length depends on the caller).
	size func() int64
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

// statusText renders .memfs/status for cr: one "name: value" per line. A
// flush error's text may name a key, so only root reads it.
func (r *Root) statusText(cr session.Cred) string {
	indexed, loaded, dirty, removed := r.c.Stats().Counts()
	fs := r.c.Stats().LastFlush()
	var b strings.Builder
	fmt.Fprintf(&b, "keys_indexed: %d\nkeys_loaded: %d\ndirty: %d\npending_deletes: %d\n", indexed, loaded, dirty, removed)
	if fs.Time.IsZero() {
		b.WriteString("last_flush: never\nlast_flush_result: none\n")
	} else {
		result := "ok"
		switch {
		case fs.Err != nil && cr.UID == 0:
			result = "error: " + fs.Err.Error()
		case fs.Err != nil:
			result = "error (its text may name a file: shown to root, and in memfs's log)"
		}
		fmt.Fprintf(&b, "last_flush: %s\nlast_flush_result: %s\nflushes: %d\n", fs.Time.Format(time.RFC3339Nano), result, fs.Flushes)
	}
	r.damageText(&b, cr)
	if r.opts.Status != nil {
		b.WriteString(r.opts.Status())
	}
	var also []string
	if r.opts.ContextPack != nil {
		also = append(also, "context.md", "context.manifest.json", "context/QUERY", "context/QUERY.manifest.json", "context/"+QueryFile)
	}
	if r.opts.Search != nil {
		also = append(also, "search/QUERY", "search/"+QueryFile)
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
	cr := callerCred(ctx)
	if cr.UID == 0 {
		n := h.root.feed.ReadAt(dest, off)
		return fuse.ReadResultData(dest[:n]), 0
	}
	n, err := readFeedMasked(h.root.feed, dest, off, masker{c: h.root.c, cr: cr})
	if err != nil {
		h.root.log.Warn("reading the change feed", "err", err)
		return nil, syscall.EIO
	}
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
		n, err = readMaskedAt(ctx, h.ev.ReadAt, dest, off, masker{c: h.root.c, cr: cr, events: true})
	}
	if err != nil && !errors.Is(err, io.EOF) {
		h.root.log.Warn("reading the event log", "err", err)
		return nil, syscall.EIO
	}
	return fuse.ReadResultData(dest[:n]), 0
}

// masker hides, for one caller, the lines of the event log or the change
// feed that name a key (or, for a rename, an old key) the caller may not
// see: each becomes a placeholder of the same length (see reservedNode).
type masker struct {
	c      *session.Context
	cr     session.Cred
	events bool // the placeholder keeps the line's seq
}

// lineKeys is what decides a line.
type lineKeys struct {
	Seq    uint64 `json:"seq"`
	Key    string `json:"key"`
	OldKey string `json:"old_key"`
}

// mask rewrites in place each line of buf the caller may not see. buf
// starts at the start of a line; a last line without its newline (torn,
// or cut by the caller) is hidden whole: it cannot be decided. A line that
// does not parse, or names no key, is hidden too.
func (m masker) mask(buf []byte) {
	type line struct {
		b    []byte
		k    lineKeys
		keys int // how many of the keys passed to Seeable are this line's
	}
	var lines []line
	var keys []string
	for len(buf) > 0 {
		l := line{b: buf}
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			buf = nil
		} else {
			l.b, buf = buf[:i], buf[i+1:]
			if json.Unmarshal(l.b, &l.k) == nil && l.k.Key != "" {
				keys = append(keys, l.k.Key)
				l.keys = 1
				if l.k.OldKey != "" {
					keys = append(keys, l.k.OldKey)
					l.keys = 2
				}
			}
		}
		lines = append(lines, l)
	}
	seen := m.c.Access().Seeable(m.cr, keys...) // one lock for the lot
	for _, l := range lines {
		visible := l.keys > 0 && !slices.Contains(seen[:l.keys], false)
		seen = seen[l.keys:]
		if !visible {
			m.hide(l.b, l.k.Seq)
		}
	}
}

// hide overwrites line with its placeholder, padded with spaces (a line
// too short for one becomes all spaces).
func (m masker) hide(line []byte, seq uint64) {
	p := `{"hidden":true}`
	if m.events && seq > 0 {
		p = `{"seq":` + strconv.FormatUint(seq, 10) + `,"hidden":true}`
	}
	n := 0
	if len(p) <= len(line) {
		n = copy(line, p)
	}
	for i := n; i < len(line); i++ {
		line[i] = ' '
	}
}

// readMaskedAt fills dest with the stream that readAt reads, from off, as
// m's caller may see it. A line is decided by its keys, so the lines that
// dest cuts are read whole: from a little before off to a little after the
// end, widened until both ends are found.
func readMaskedAt(ctx context.Context, readAt func(context.Context, []byte, int64) (int, error), dest []byte, off int64, m masker) (int, error) {
	back, ahead := int64(4096), int64(4096)
	for {
		lo := max(0, off-back)
		buf := make([]byte, off-lo+int64(len(dest))+ahead)
		n, err := readAt(ctx, buf, lo)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		eof := n < len(buf)
		buf = buf[:n]
		rel := off - lo
		if int64(n) <= rel {
			return 0, io.EOF
		}
		start := 0
		if lo > 0 {
			j := bytes.LastIndexByte(buf[:rel], '\n')
			if j < 0 {
				back *= 2 // a line longer than what was read before off
				continue
			}
			start = j + 1
		}
		last := min(int64(n), rel+int64(len(dest))) - 1 // the last byte wanted
		end := len(buf)
		if k := bytes.IndexByte(buf[last:], '\n'); k >= 0 {
			end = int(last) + k + 1
		} else if !eof {
			ahead *= 2
			continue
		}
		m.mask(buf[start:end])
		return copy(dest, buf[rel:end]), nil
	}
}

// readFeedMasked is readMaskedAt for the change feed, which keeps only a
// window of its latest lines: a read before the window gets the window's
// first line (as changes.Log.ReadAt does), and only the feed's size, if
// it did not change during the read, tells where the bytes read begin.
func readFeedMasked(feed *changes.Log, dest []byte, off int64, m masker) (int, error) {
	back := int64(4096)
	for range 64 {
		end := feed.Size()
		if off >= end {
			return 0, nil
		}
		lo := max(0, off-back)
		// One byte more than can come: a full buffer means the feed grew.
		buf := make([]byte, min(end-lo, changes.DefaultMax)+1)
		n := feed.ReadAt(buf, lo)
		if n == len(buf) || feed.Size() != end {
			continue // appended meanwhile: the bytes' offset is unknown
		}
		buf = buf[:n]
		start := end - int64(n) // lo, or the window's start if later
		rel := max(0, off-start)
		first := 0
		if start == lo && lo > 0 {
			j := bytes.LastIndexByte(buf[:rel], '\n')
			if j < 0 {
				back *= 2
				continue
			}
			first = j + 1
		}
		last := min(int64(n), rel+int64(len(dest))) - 1
		stop := len(buf)
		if k := bytes.IndexByte(buf[last:], '\n'); k >= 0 {
			stop = int(last) + k + 1
		}
		m.mask(buf[first:stop])
		return copy(dest, buf[rel:stop]), nil
	}
	return 0, errors.New("fsnode: the change feed kept growing during 64 reads")
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
		b, err := r.opts.Records.ReadRecord(ctx, name)
		if err != nil {
			if errors.Is(err, backend.ErrKeyNotFound) {
				return nil, syscall.ENOENT // gone since the lookup (a leftover chunk removed)
			}
			r.log.Warn("reading a record of the event log", "name", name, "err", err)
			return nil, syscall.EIO
		}
		if cr := callerCred(ctx); cr.UID != 0 && strings.HasPrefix(name, "events/") {
			b = bytes.Clone(b) // the log shares it
			masker{c: r.c, cr: cr, events: true}.mask(b)
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
