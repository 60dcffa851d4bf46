package fsnode

import (
	"maps"
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Requests counts the FUSE requests that reach memfs, by opcode
// (MountOptions.Requests). A count stands for a time where timings are
// noisy: what the kernel answers from its caches never arrives here, so
// the counts of a workload are the design of its cost (the request-count
// tests assert them as budgets). Safe for concurrent use.
type Requests struct {
	n [numOps]atomic.Int64
}

// The opcodes counted, named as the kernel names them (FUSE_LOOKUP is
// "LOOKUP"). BATCH_FORGET counts one FORGET per inode forgotten.
type op int

const (
	opLookup op = iota
	opForget
	opGetattr
	opSetattr
	opMknod
	opMkdir
	opUnlink
	opRmdir
	opRename
	opLink
	opSymlink
	opReadlink
	opAccess
	opGetxattr
	opListxattr
	opSetxattr
	opRemovexattr
	opCreate
	opTmpfile
	opOpen
	opRead
	opLseek
	opGetlk
	opSetlk
	opSetlkw
	opRelease
	opWrite
	opCopyFileRange
	opIoctl
	opFlush
	opFsync
	opFallocate
	opOpendir
	opReaddir
	opReaddirplus
	opReleasedir
	opFsyncdir
	opStatfs
	opStatx
	numOps
)

var opNames = [numOps]string{
	"LOOKUP", "FORGET", "GETATTR", "SETATTR", "MKNOD", "MKDIR", "UNLINK",
	"RMDIR", "RENAME", "LINK", "SYMLINK", "READLINK", "ACCESS", "GETXATTR",
	"LISTXATTR", "SETXATTR", "REMOVEXATTR", "CREATE", "TMPFILE", "OPEN",
	"READ", "LSEEK", "GETLK", "SETLK", "SETLKW", "RELEASE", "WRITE",
	"COPY_FILE_RANGE", "IOCTL", "FLUSH", "FSYNC", "FALLOCATE", "OPENDIR",
	"READDIR", "READDIRPLUS", "RELEASEDIR", "FSYNCDIR", "STATFS", "STATX",
}

// Async tells the opcodes the kernel sends without waiting for the
// answer (no process blocks on them) from the rest.
func Async(op string) bool {
	return op == "FORGET" || op == "RELEASE" || op == "RELEASEDIR"
}

// Counts returns the requests counted so far, by opcode; opcodes never
// seen are left out.
func (r *Requests) Counts() RequestCounts {
	out := RequestCounts{}
	for i := range r.n {
		if v := r.n[i].Load(); v != 0 {
			out[opNames[i]] = v
		}
	}
	return out
}

func (r *Requests) add(o op) { r.n[o].Add(1) }

// RequestCounts are request counts by opcode.
type RequestCounts map[string]int64

// Sub returns the requests counted in c and not in before.
func (c RequestCounts) Sub(before RequestCounts) RequestCounts {
	out := maps.Clone(c)
	for k, v := range before {
		out[k] -= v
		if out[k] == 0 {
			delete(out, k)
		}
	}
	return out
}

// Total is the number of requests of every opcode.
func (c RequestCounts) Total() int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// Sync is the number of requests a process waited for (all but Async).
func (c RequestCounts) Sync() int64 {
	var n int64
	for k, v := range c {
		if !Async(k) {
			n += v
		}
	}
	return n
}

// countingFS passes every request to the node tree's file system and
// counts it first.
type countingFS struct {
	fuse.RawFileSystem
	n *Requests
}

func (f countingFS) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	f.n.add(opLookup)
	return f.RawFileSystem.Lookup(cancel, h, name, out)
}

func (f countingFS) Forget(nodeid, nlookup uint64) {
	f.n.add(opForget)
	f.RawFileSystem.Forget(nodeid, nlookup)
}

func (f countingFS) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	f.n.add(opGetattr)
	return f.RawFileSystem.GetAttr(cancel, in, out)
}

func (f countingFS) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	f.n.add(opSetattr)
	return f.RawFileSystem.SetAttr(cancel, in, out)
}

func (f countingFS) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	f.n.add(opMknod)
	return f.RawFileSystem.Mknod(cancel, in, name, out)
}

func (f countingFS) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	f.n.add(opMkdir)
	return f.RawFileSystem.Mkdir(cancel, in, name, out)
}

func (f countingFS) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	f.n.add(opUnlink)
	return f.RawFileSystem.Unlink(cancel, h, name)
}

func (f countingFS) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	f.n.add(opRmdir)
	return f.RawFileSystem.Rmdir(cancel, h, name)
}

func (f countingFS) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	f.n.add(opRename)
	return f.RawFileSystem.Rename(cancel, in, oldName, newName)
}

func (f countingFS) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	f.n.add(opLink)
	return f.RawFileSystem.Link(cancel, in, name, out)
}

func (f countingFS) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	f.n.add(opSymlink)
	return f.RawFileSystem.Symlink(cancel, h, target, name, out)
}

func (f countingFS) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	f.n.add(opReadlink)
	return f.RawFileSystem.Readlink(cancel, h)
}

func (f countingFS) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	f.n.add(opAccess)
	return f.RawFileSystem.Access(cancel, in)
}

func (f countingFS) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	f.n.add(opGetxattr)
	return f.RawFileSystem.GetXAttr(cancel, h, attr, dest)
}

func (f countingFS) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	f.n.add(opListxattr)
	return f.RawFileSystem.ListXAttr(cancel, h, dest)
}

func (f countingFS) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	f.n.add(opSetxattr)
	return f.RawFileSystem.SetXAttr(cancel, in, attr, data)
}

func (f countingFS) RemoveXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	f.n.add(opRemovexattr)
	return f.RawFileSystem.RemoveXAttr(cancel, h, attr)
}

func (f countingFS) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	f.n.add(opCreate)
	return f.RawFileSystem.Create(cancel, in, name, out)
}

func (f countingFS) Tmpfile(cancel <-chan struct{}, in *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	f.n.add(opTmpfile)
	return f.RawFileSystem.Tmpfile(cancel, in, out)
}

func (f countingFS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	f.n.add(opOpen)
	return f.RawFileSystem.Open(cancel, in, out)
}

func (f countingFS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	f.n.add(opRead)
	return f.RawFileSystem.Read(cancel, in, buf)
}

func (f countingFS) Lseek(cancel <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	f.n.add(opLseek)
	return f.RawFileSystem.Lseek(cancel, in, out)
}

func (f countingFS) GetLk(cancel <-chan struct{}, in *fuse.LkIn, out *fuse.LkOut) fuse.Status {
	f.n.add(opGetlk)
	return f.RawFileSystem.GetLk(cancel, in, out)
}

func (f countingFS) SetLk(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	f.n.add(opSetlk)
	return f.RawFileSystem.SetLk(cancel, in)
}

func (f countingFS) SetLkw(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	f.n.add(opSetlkw)
	return f.RawFileSystem.SetLkw(cancel, in)
}

func (f countingFS) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	f.n.add(opRelease)
	f.RawFileSystem.Release(cancel, in)
}

// Write is called only when Writev is not implemented (go-fuse asks
// Writev first): it was counted there.
func (f countingFS) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	f.n.add(opWrite)
	return f.RawFileSystem.Writev(cancel, in, data)
}

func (f countingFS) CopyFileRange(cancel <-chan struct{}, in *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	f.n.add(opCopyFileRange)
	return f.RawFileSystem.CopyFileRange(cancel, in)
}

func (f countingFS) Ioctl(cancel <-chan struct{}, in *fuse.IoctlIn, inbuf []byte, out *fuse.IoctlOut, outbuf []byte) fuse.Status {
	f.n.add(opIoctl)
	return f.RawFileSystem.Ioctl(cancel, in, inbuf, out, outbuf)
}

func (f countingFS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	f.n.add(opFlush)
	return f.RawFileSystem.Flush(cancel, in)
}

func (f countingFS) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	f.n.add(opFsync)
	return f.RawFileSystem.Fsync(cancel, in)
}

func (f countingFS) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	f.n.add(opFallocate)
	return f.RawFileSystem.Fallocate(cancel, in)
}

func (f countingFS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	f.n.add(opOpendir)
	return f.RawFileSystem.OpenDir(cancel, in, out)
}

func (f countingFS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	f.n.add(opReaddir)
	return f.RawFileSystem.ReadDir(cancel, in, out)
}

func (f countingFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	f.n.add(opReaddirplus)
	return f.RawFileSystem.ReadDirPlus(cancel, in, out)
}

func (f countingFS) ReleaseDir(in *fuse.ReleaseIn) {
	f.n.add(opReleasedir)
	f.RawFileSystem.ReleaseDir(in)
}

func (f countingFS) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	f.n.add(opFsyncdir)
	return f.RawFileSystem.FsyncDir(cancel, in)
}

func (f countingFS) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	f.n.add(opStatfs)
	return f.RawFileSystem.StatFs(cancel, h, out)
}

func (f countingFS) Statx(cancel <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	f.n.add(opStatx)
	return f.RawFileSystem.Statx(cancel, in, out)
}
