package fsnode

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/history"
)

// snapDir is .memfs/snapshots/ (run "") or one run's .memfs/snapshots/RUN/:
// a directory per snapshot (the namespace at it), per run (its
// checkpoints), and in a run latest, a symlink to its newest step. mkdir
// takes a snapshot (the engine flushes first), rmdir removes one: the
// mount's owner may (mode 0755), others not.
//
// .memfs/checkpoints/ (top "checkpoints") is the same for runs only: every
// valid run name is a directory there, empty until its first step, so
// that mkdir checkpoints/RUN/STEP checkpoints a run that has none yet (the
// kernel looks RUN up before the mkdir; snapshots/RUN is found only once
// it has a step, and mkdir snapshots/RUN takes a plain snapshot RUN).
type snapDir struct {
	gofs.Inode
	root *Root
	hist History
	top  string // "snapshots" or "checkpoints": the inodes' namespace
	run  string
}

// runsOnly reports whether d is .memfs/checkpoints/ itself.
func (d *snapDir) runsOnly() bool { return d.top == "checkpoints" && d.run == "" }

var (
	_ gofs.NodeLookuper  = (*snapDir)(nil)
	_ gofs.NodeReaddirer = (*snapDir)(nil)
	_ gofs.NodeGetattrer = (*snapDir)(nil)
	_ gofs.NodeMkdirer   = (*snapDir)(nil)
	_ gofs.NodeRmdirer   = (*snapDir)(nil)
)

func (d *snapDir) fill(out *fuse.Attr) {
	if d.run == "" {
		d.root.pastTop(pastIno(d.top, ""), out)
		out.Mode = syscall.S_IFDIR | 0o700 // mkdir takes a snapshot
		return
	}
	d.root.readOnlyDir(pastIno(d.top, d.run), out)
	out.Mode = syscall.S_IFDIR | 0o755
}

func (d *snapDir) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.fill(&out.Attr)
	return 0
}

// name is the snapshot name of entry n of d.
func (d *snapDir) name(n string) string {
	if d.run == "" {
		return n
	}
	return d.run + "/" + n
}

// entries returns d's snapshots (by their name in d) and, at the top, the
// runs.
func (d *snapDir) entries(ctx context.Context) (snaps map[string]history.Snapshot, runs []string, err error) {
	all, err := d.hist.Snapshots(ctx)
	if err != nil {
		return nil, nil, err
	}
	snaps = map[string]history.Snapshot{}
	for _, s := range all {
		switch run := s.Run(); {
		case d.run == "" && run == "":
			snaps[s.Name] = s
		case d.run == "" && run != "":
			runs = append(runs, run)
		case run == d.run:
			snaps[s.Name[len(run)+1:]] = s
		}
	}
	return snaps, slices.Compact(runs), nil // Snapshots is sorted: a run's steps are together
}

func (d *snapDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	snaps, runs, err := d.entries(ctx)
	if err != nil {
		return nil, d.root.pastErrno("snapshots", err)
	}
	var out []fuse.DirEntry
	for n, s := range snaps {
		if !d.runsOnly() {
			out = append(out, fuse.DirEntry{Name: n, Mode: syscall.S_IFDIR, Ino: d.snapIno(s)})
		}
	}
	for _, r := range runs {
		out = append(out, fuse.DirEntry{Name: r, Mode: syscall.S_IFDIR, Ino: pastIno(d.top, r)})
	}
	if d.run != "" && len(snaps) > 0 {
		out = append(out, fuse.DirEntry{Name: history.Latest, Mode: syscall.S_IFLNK, Ino: pastIno(d.top+"/latest", d.run)})
	}
	slices.SortFunc(out, func(a, b fuse.DirEntry) int { return strings.Compare(a.Name, b.Name) })
	return gofs.NewListDirStream(out), 0
}

// view names the tree of snapshot s: a name taken again at another seq
// is another tree, and the one under checkpoints/ another (the kernel
// refuses a directory with two parents).
func (d *snapDir) view(s history.Snapshot) string {
	return d.top + "/" + s.Name + "@" + strconv.FormatUint(s.Seq, 10)
}

func (d *snapDir) snapIno(s history.Snapshot) uint64 { return pastIno(d.view(s), "") }

func (d *snapDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (_ *gofs.Inode, errno syscall.Errno) {
	defer notYet(&errno, out)
	if d.run != "" && name == history.Latest {
		return d.lookupLatest(ctx, out)
	}
	full := d.name(name)
	if history.ValidSnapshotName(full) != nil {
		return nil, syscall.ENOENT
	}
	// One name's records, never every snapshot's: the kernel looks the
	// name up before each mkdir of a snapshot, and a run of an agent's
	// checkpoints can hold thousands.
	if d.runsOnly() {
		return d.runNode(ctx, name, out), 0
	}
	s, err := d.hist.ResolveSnapshot(ctx, full)
	if err == nil {
		return d.snapNode(ctx, s, out), 0
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, d.root.pastErrno("snapshot "+full, err)
	}
	if d.run != "" {
		return nil, syscall.ENOENT
	}
	if run, err := d.hist.IsRun(ctx, name); err != nil {
		return nil, d.root.pastErrno("snapshots", err)
	} else if run {
		return d.runNode(ctx, name, out), 0
	}
	return nil, syscall.ENOENT
}

// runNode is the directory of run name's checkpoints.
func (d *snapDir) runNode(ctx context.Context, name string, out *fuse.EntryOut) *gofs.Inode {
	r := &snapDir{root: d.root, hist: d.hist, top: d.top, run: name}
	r.fill(&out.Attr)
	out.SetEntryTimeout(d.root.opts.EntryTimeout)
	out.SetAttrTimeout(d.root.opts.AttrTimeout)
	return d.NewInode(ctx, r, gofs.StableAttr{Mode: syscall.S_IFDIR, Ino: out.Attr.Ino})
}

// snapNode is the root of snapshot s's namespace. Its name may be removed
// and taken again: the entry is cached as the present is, what is under
// it for long.
func (d *snapDir) snapNode(ctx context.Context, s history.Snapshot, out *fuse.EntryOut) *gofs.Inode {
	t := newPastTree(d.root, d.hist, s.Seq, d.view(s))
	t.fill("", &out.Attr)
	out.SetEntryTimeout(d.root.opts.EntryTimeout)
	out.SetAttrTimeout(pastTimeout)
	return d.NewInode(ctx, &pastNode{tree: t}, gofs.StableAttr{Mode: syscall.S_IFDIR, Ino: out.Attr.Ino})
}

func (d *snapDir) lookupLatest(ctx context.Context, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	l := &latestLink{root: d.root, hist: d.hist, ino: pastIno(d.top+"/latest", d.run), run: d.run}
	target, errno := l.target(ctx)
	if errno != 0 {
		return nil, errno
	}
	l.fill(target, &out.Attr)
	out.SetEntryTimeout(noCache)
	out.SetAttrTimeout(noCache)
	return d.NewInode(ctx, l, gofs.StableAttr{Mode: syscall.S_IFLNK, Ino: out.Attr.Ino}), 0
}

// Mkdir takes the snapshot name (RUN/name in a run's directory). In
// checkpoints/ every run is there already.
func (d *snapDir) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	full := d.name(name)
	if history.ValidSnapshotName(full) != nil {
		return nil, syscall.EINVAL
	}
	if d.runsOnly() {
		return nil, syscall.EEXIST
	}
	if err := d.hist.TakeSnapshot(ctx, full, history.WriterName(d.root.writer(ctx))); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, syscall.EEXIST
		}
		return nil, d.root.pastErrno("snapshot "+full, err)
	}
	s, err := d.hist.ResolveSnapshot(ctx, full)
	if err != nil {
		return nil, d.root.pastErrno("snapshot "+full, err)
	}
	return d.snapNode(ctx, s, out), 0
}

// Rmdir removes the snapshot name; what it pinned becomes collectable. A
// run in checkpoints/ goes with its last step, not by rmdir.
func (d *snapDir) Rmdir(ctx context.Context, name string) syscall.Errno {
	full := d.name(name)
	if history.ValidSnapshotName(full) != nil {
		return syscall.ENOENT
	}
	if d.runsOnly() {
		return syscall.EPERM
	}
	if err := d.hist.RemoveSnapshot(ctx, full); err != nil {
		return d.root.pastErrno("snapshot "+full, err)
	}
	return 0
}

// latestLink is RUN/latest: a symlink to the run's newest step, which
// changes with every checkpoint: resolved at each call, never cached.
type latestLink struct {
	gofs.Inode
	root *Root
	hist History
	ino  uint64
	run  string
}

var (
	_ gofs.NodeGetattrer  = (*latestLink)(nil)
	_ gofs.NodeReadlinker = (*latestLink)(nil)
)

// target is the newest step's name.
func (l *latestLink) target(ctx context.Context) (string, syscall.Errno) {
	s, err := l.hist.ResolveSnapshot(ctx, l.run+"/"+history.Latest)
	if err != nil {
		return "", l.root.pastErrno("snapshots", err)
	}
	return s.Name[len(l.run)+1:], 0
}

func (l *latestLink) fill(target string, out *fuse.Attr) {
	l.root.readOnlyDir(l.ino, out)
	out.Mode = syscall.S_IFLNK | 0o777
	out.Nlink = 1
	out.Size = uint64(len(target))
}

func (l *latestLink) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	target, errno := l.target(ctx)
	if errno != 0 {
		return errno
	}
	l.fill(target, &out.Attr)
	out.SetTimeout(noCache)
	return 0
}

func (l *latestLink) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	target, errno := l.target(ctx)
	return []byte(target), errno
}

// atDir is .memfs/at/: SEQ/ is the namespace at any seq up to the event
// log's head (a later one is not yet: ENOENT). It lists nothing.
type atDir struct {
	gofs.Inode
	noRemoval
	root *Root
	hist History
}

var (
	_ gofs.NodeLookuper  = (*atDir)(nil)
	_ gofs.NodeReaddirer = (*atDir)(nil)
	_ gofs.NodeGetattrer = (*atDir)(nil)
)

func (d *atDir) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.root.pastTop(pastIno("at"), &out.Attr)
	return 0
}

func (d *atDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	return gofs.NewListDirStream(nil), 0
}

func (d *atDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (_ *gofs.Inode, errno syscall.Errno) {
	defer notYet(&errno, out)
	if !isDigits(name) {
		return nil, syscall.ENOENT
	}
	seq, err := strconv.ParseUint(name, 10, 64)
	if err != nil {
		return nil, syscall.ENOENT
	}
	head, err := d.hist.Head(ctx)
	if err != nil {
		return nil, d.root.pastErrno("at", err)
	}
	if seq > head {
		return nil, syscall.ENOENT
	}
	t := newPastTree(d.root, d.hist, seq, "at/"+strconv.FormatUint(seq, 10))
	t.fill("", &out.Attr)
	out.SetEntryTimeout(pastTimeout)
	out.SetAttrTimeout(pastTimeout)
	return d.NewInode(ctx, &pastNode{tree: t}, gofs.StableAttr{Mode: syscall.S_IFDIR, Ino: out.Attr.Ino}), 0
}
