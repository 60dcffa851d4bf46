package fsnode

import (
	"context"
	"errors"
	"slices"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/session"
)

// Runs serves .memfs/runs/: a directory per run, each with Files, whose
// text File answers for the caller (the name "RUN/FILE"; the caller's
// session.Cred is in its ctx).
type Runs struct {
	// List names the runs, sorted (a readdir).
	List func(ctx context.Context) ([]string, error)
	// Has reports whether run is one of them (a lookup).
	Has   func(ctx context.Context, run string) bool
	File  Answer
	Files []string
}

// runsDir is .memfs/runs/.
type runsDir struct {
	gofs.Inode
	root *Root
}

var (
	_ gofs.NodeLookuper  = (*runsDir)(nil)
	_ gofs.NodeReaddirer = (*runsDir)(nil)
	_ gofs.NodeGetattrer = (*runsDir)(nil)
)

func (d *runsDir) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.root.readOnlyDir(runsDirIno, &out.Attr)
	out.SetTimeout(noCache)
	return 0
}

// list is the runs, for the caller in ctx.
func (d *runsDir) list(ctx context.Context) ([]string, syscall.Errno) {
	ids, err := d.root.opts.Runs.List(session.WithCred(ctx, callerCred(ctx)))
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// The caller gave up (a signal interrupted it, and the kernel
		// the request): it asks again.
		return nil, syscall.EINTR
	}
	if err != nil {
		d.root.log.Warn("listing the runs", "err", err)
		return nil, syscall.EIO
	}
	return ids, 0
}

func (d *runsDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	ids, errno := d.list(ctx)
	if errno != 0 {
		return nil, errno
	}
	es := make([]fuse.DirEntry, len(ids))
	for i, id := range ids {
		es[i] = fuse.DirEntry{Name: id, Mode: syscall.S_IFDIR}
	}
	return gofs.NewListDirStream(es), 0
}

func (d *runsDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if !d.root.opts.Runs.Has(session.WithCred(ctx, callerCred(ctx)), name) {
		return nil, syscall.ENOENT
	}
	rd := &runDir{root: d.root, run: name, ino: answerInoBase + d.root.answerIno.Add(1)}
	d.root.readOnlyDir(rd.ino, &out.Attr)
	out.SetEntryTimeout(noCache)
	out.SetAttrTimeout(noCache)
	return d.NewInode(ctx, rd, gofs.StableAttr{Mode: syscall.S_IFDIR, Ino: rd.ino}), 0
}

// runDir is .memfs/runs/RUN/.
type runDir struct {
	gofs.Inode
	root *Root
	run  string
	ino  uint64
}

var (
	_ gofs.NodeLookuper  = (*runDir)(nil)
	_ gofs.NodeReaddirer = (*runDir)(nil)
	_ gofs.NodeGetattrer = (*runDir)(nil)
)

func (d *runDir) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.root.readOnlyDir(d.ino, &out.Attr)
	out.SetTimeout(noCache)
	return 0
}

func (d *runDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	files := d.root.opts.Runs.Files
	es := make([]fuse.DirEntry, len(files))
	for i, f := range files {
		es[i] = fuse.DirEntry{Name: f, Mode: syscall.S_IFREG}
	}
	return gofs.NewListDirStream(es), 0
}

func (d *runDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if !slices.Contains(d.root.opts.Runs.Files, name) {
		return nil, syscall.ENOENT
	}
	a := d.root.answerFile(ctx, d.root.opts.Runs.File, "runs", d.run+"/"+name, answerInoBase+d.root.answerIno.Add(1))
	a.fill(&out.Attr)
	out.Attr.Size = uint64(a.sizeFor(ctx))
	out.SetEntryTimeout(noCache)
	out.SetAttrTimeout(noCache)
	return d.NewInode(ctx, a, gofs.StableAttr{Mode: syscall.S_IFREG, Ino: a.ino}), 0
}
