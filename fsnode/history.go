package fsnode

import (
	"context"
	"hash/fnv"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/session"
)

// The past, read-only (issue 29), in four trees under .memfs/, each
// opened by name and never listed there (a tree walk over the mount must
// not copy every version):
//
//   - history/KEY/: per key, one file per version named by its seq
//     (8 digits: ls sorts them in time order), and log (histkeys.go);
//   - snapshots/NAME/ and snapshots/RUN/STEP/: the namespace at a named
//     snapshot; mkdir takes one, rmdir removes it (histsnap.go);
//   - checkpoints/RUN/STEP/: the same for runs only, where every run name
//     is a directory (empty until its first step): mkdir of RUN/STEP
//     checkpoints a run that has none yet (histsnap.go);
//   - at/SEQ/: the namespace at any seq (histsnap.go, pasttree.go).
//
// A version never changes, so what it shows is served with long entry
// and attribute timeouts and the page cache kept: a warm stat or read of
// it costs no request. What grows (a key's list of versions, its log, the
// list of snapshots, RUN/latest) is served as the present is.
//
// Permissions: a caller sees a past version only if it may see that key
// now (session.Access.CanSee: read it, or for a gone key list its
// nearest directory) and could read it then (the version's mode and
// owner, and its directories' as they were). A past namespace is served
// with its modes and owners as they were, which the kernel checks
// (default_permissions) on every access, cached or not; the present is
// checked by memfs at each lookup, open and listing.

// History is the store's history as the view reads it: *history.Store's
// methods, and what the engine adds (the event log's head, a snapshot
// after a flush, the names of keys that ever were).
type History interface {
	Versions(ctx context.Context, key string) ([]history.Version, error)
	// Version is key's version at seq as recorded under key: one load.
	Version(ctx context.Context, key string, seq uint64) (history.Version, error)
	At(ctx context.Context, seq uint64) ([]history.Version, error)
	Get(ctx context.Context, a history.Addr) ([]byte, error)
	Snapshots(ctx context.Context) ([]history.Snapshot, error)
	ResolveSnapshot(ctx context.Context, name string) (history.Snapshot, error)
	// IsRun reports whether run has a checkpoint (RUN/STEP).
	IsRun(ctx context.Context, run string) (bool, error)
	RemoveSnapshot(ctx context.Context, name string) error
	// Head is the event log's head seq: the present.
	Head(ctx context.Context) (uint64, error)
	// Changes counts the changes to history that leave the head where
	// it is (a flush's versions are written after its append moved the
	// head; a collection thins versions): it moves after each.
	Changes() uint64
	// TakeSnapshot flushes, then records the snapshot name at the head,
	// taken by by (history.Store.Snapshot); an existing name fails with
	// fs.ErrExist.
	TakeSnapshot(ctx context.Context, name, by string) error
	// Names returns every key directly under dir ("" the root) that a
	// change ever named, present or gone.
	Names(ctx context.Context, dir string) ([]string, error)
}

// pastTimeout is the entry and attribute timeout of what never changes:
// a version, a past namespace's nodes.
const pastTimeout = time.Hour

// Inode numbers of the past: a hash of what the node is, with the top
// bit set (the session's numbers and the virtual files' stay below 1<<63).
// Two nodes that are one (hard links of one past namespace) hash alike.
func pastIno(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return 1<<63 | h.Sum64()>>1
}

// fillVersion fills out with v's attributes: its type, mode and owner, as
// they were (as ZFS shows a snapshot's). The past is read-only all the
// same: an open for writing is EROFS, and so are unlink and rmdir
// (noRemoval). Without its write bits a version's mode was not the
// version's: memfs revert through the mount (which takes the mode from
// stat) wrote a 0644 file back as 0444, and cp -a out of a snapshot made
// read-only copies.
func fillVersion(v *history.Version, ino uint64, nlink uint32, out *fuse.Attr) {
	out.Ino = ino
	out.Size = uint64(v.Size)
	out.Blocks = (out.Size + 511) / 512
	out.Blksize = 4096
	m, c, a := timeOrZero(v.MTime), timeOrZero(v.CTime), timeOrZero(v.ATime)
	if v.CTime == 0 {
		c = m
	}
	if v.ATime == 0 {
		a = m
	}
	out.SetTimes(&a, &m, &c)
	out.Owner = fuse.Owner{Uid: v.UID, Gid: v.GID}
	out.Nlink = nlink
	out.Mode = backend.UnixMode(v.Mode)
	out.Rdev = uint32(v.Rdev)
}

func timeOrZero(ns int64) time.Time { return time.Unix(0, ns) }

// lookupPast is .memfs/history, .memfs/snapshots, .memfs/checkpoints or
// .memfs/at.
func (n *reservedNode) lookupPast(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	r := n.root
	h := r.opts.History
	if h == nil {
		return nil, syscall.ENOENT
	}
	var d gofs.InodeEmbedder
	switch name {
	case "history":
		d = &histDir{root: r, hist: h}
		r.pastTop(pastIno("history", ""), &out.Attr)
	case "snapshots", "checkpoints":
		sd := &snapDir{root: r, hist: h, top: name}
		sd.fill(&out.Attr)
		d = sd
	default:
		d = &atDir{root: r, hist: h}
		r.pastTop(pastIno("at"), &out.Attr)
	}
	out.SetEntryTimeout(r.opts.EntryTimeout)
	out.SetAttrTimeout(r.opts.AttrTimeout)
	return n.NewInode(ctx, d, gofs.StableAttr{Mode: syscall.S_IFDIR, Ino: out.Attr.Ino}), 0
}

// noRemoval answers unlink and rmdir in a past directory with EROFS:
// go-fuse answers them with success for a node that lacks them, and the
// name vanished from the kernel's cache as if removed (root, whom the
// directories' modes do not stop, saw rm succeed).
type noRemoval struct{}

var (
	_ gofs.NodeUnlinker = noRemoval{}
	_ gofs.NodeRmdirer  = noRemoval{}
)

func (noRemoval) Unlink(context.Context, string) syscall.Errno { return syscall.EROFS }
func (noRemoval) Rmdir(context.Context, string) syscall.Errno  { return syscall.EROFS }

// notYet keeps the kernel from caching the absence of a name in a past
// directory that grows (a key's first version, a new version, snapshot
// or seq): go-fuse caches an ENOENT for the mount's NegativeTimeout
// unless the lookup set an entry timeout of its own, and nothing
// invalidates it when a flush (this mount's or another's) adds the name.
func notYet(errno *syscall.Errno, out *fuse.EntryOut) {
	if *errno == syscall.ENOENT {
		out.SetEntryTimeout(noCache)
	}
}

// readOnlyDir fills out as a directory of memfs's own under .memfs.
func (r *Root) readOnlyDir(ino uint64, out *fuse.Attr) {
	out.Ino = ino
	out.Mode = syscall.S_IFDIR | 0o555
	out.Nlink = 2
	out.SetTimes(&r.started, &r.started, &r.started)
	st, _ := r.c.Stat("")
	out.Owner = fuse.Owner{Uid: st.UID, Gid: st.GID}
}

// pastTop fills out as .memfs/history, .memfs/at or .memfs/snapshots: a
// directory only the mount's owner (the user memfs runs as, who can read
// the store directly) and root may enter. The kernel enforces it on every
// path walk (default_permissions), cached entries included. The checks
// below it (a version only to a caller who may read the key now and could
// then) were found to leak through renamed and removed keys, attributes
// and cached entries to other users of an --allow-other mount; until each
// is closed, other users are kept out of the past entirely.
func (r *Root) pastTop(ino uint64, out *fuse.Attr) {
	r.readOnlyDir(ino, out)
	out.Mode = syscall.S_IFDIR | 0o500
	out.Owner = fuse.Owner{Uid: uint32(os.Geteuid()), Gid: uint32(os.Getegid())}
}

// nowVisible reports whether the caller of ctx may see key now.
func (r *Root) nowVisible(ctx context.Context, key string) bool {
	return r.c.Access().CanSee(key, callerCred(ctx))
}

// pastErrno is the errno of a failed read of the past: a damaged record
// is EIO (never empty or wrong bytes), a missing one ENOENT.
func (r *Root) pastErrno(what string, err error) syscall.Errno {
	if errno := toErrno(err); errno != syscall.EIO {
		return errno
	}
	r.log.Warn("reading history", "what", what, "err", err)
	return syscall.EIO
}

// valueHandle reads one past value, loaded at the first READ (a warm
// open, served from the page cache, loads nothing): the whole value,
// checked against its address, or EIO.
type valueHandle struct {
	root *Root
	what string
	hist History
	addr history.Addr

	mu   sync.Mutex // guards data
	data []byte     // loaded; nil until the first read
}

var _ gofs.FileReader = (*valueHandle)(nil)

func (h *valueHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock() // reads of one handle wait for the one load
	if h.data == nil {
		b, err := h.hist.Get(ctx, h.addr)
		if err != nil {
			return nil, h.root.pastErrno(h.what, err)
		}
		h.data = append([]byte{}, b...)
	}
	if off >= int64(len(h.data)) {
		return fuse.ReadResultData(nil), 0
	}
	n := copy(dest, h.data[off:])
	return fuse.ReadResultData(dest[:n]), 0
}

// openValue opens v's value for the caller of ctx, allowed when may says
// so: read-only, the page cache kept (the bytes of a version never change).
func (r *Root) openValue(ctx context.Context, hist History, v *history.Version, flags uint32, may bool) (gofs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return nil, 0, syscall.EROFS
	}
	if !may || v.Redacted {
		return nil, 0, syscall.EACCES // a redacted version's bytes are gone on purpose: refused, not missing
	}
	if v.Mode.Type() != 0 {
		return nil, 0, syscall.EINVAL
	}
	return &valueHandle{root: r, what: v.Key, hist: hist, addr: v.Addr}, fuse.FOPEN_KEEP_CACHE, 0
}

// readLink returns a past symlink's target: its value.
func (r *Root) readLink(ctx context.Context, hist History, v *history.Version) ([]byte, syscall.Errno) {
	if v.Mode&fs.ModeSymlink == 0 {
		return nil, syscall.EINVAL
	}
	if v.Redacted {
		return nil, syscall.EACCES
	}
	b, err := hist.Get(ctx, v.Addr)
	if err != nil {
		return nil, r.pastErrno(v.Key, err)
	}
	return b, 0
}

// pastXAttr serves getxattr and listxattr of a past node from its
// version (the user.memfs.* attributes history keeps).
func pastXAttr(v *history.Version, attr string, dest []byte) (uint32, syscall.Errno) {
	x, ok := v.XAttrs[attr]
	if !ok {
		return 0, syscall.ENODATA
	}
	return fillXAttr(x, dest)
}

func pastXAttrList(v *history.Version, dest []byte) (uint32, syscall.Errno) {
	var b []byte
	for _, name := range slices.Sorted(maps.Keys(v.XAttrs)) {
		b = append(append(b, name...), 0)
	}
	return fillXAttr(b, dest)
}

// thenReadable reports whether cr could read v when it was written: its
// mode and owner, and each directory above it as it was at v's seq (dirs
// maps a directory key to its version then; a directory history never
// recorded (made before history was kept) does not restrict).
func thenReadable(cr session.Cred, v *history.Version, dirs map[string]*history.Version) bool {
	if !cr.MayRead(v.Mode, v.UID, v.GID) {
		return false
	}
	for k := parentKey(v.Key); ; k = parentKey(k) {
		if d, ok := dirs[k]; ok && d != nil && !cr.MaySearch(d.Mode, d.UID, d.GID) {
			return false
		}
		if k == "" {
			return true
		}
	}
}

func parentKey(key string) string {
	p, _ := backend.Split(key)
	return p
}
