package fsnode

import (
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// rawFS is what memfs answers at the level of raw requests, before the
// node tree: reads of extended attributes outside user.*, and the
// clearing of setuid and setgid that HANDLE_KILLPRIV_V2 leaves to the
// file system.
type rawFS struct {
	fuse.RawFileSystem
}

// Lookup and GetAttr pass on the timeout noCache of an answer file (one
// computed for each caller: .memfs/context.md, its manifest, the files of
// search/ and context/) as 0: the kernel caches nothing then, where it
// rounds 1 ns (the least go-fuse lets a node give: it replaces 0 with the
// mount's default) up to a jiffy, within which a stat by the next caller
// was shown the size of the last caller's answer
// (TestMountAnswersPerCallerThroughTheKernel).
func (f rawFS) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	st := f.RawFileSystem.Lookup(cancel, h, name, out)
	if perCaller(out.Attr.Ino) {
		if out.EntryValid == 0 && out.EntryValidNsec == uint32(noCache) {
			out.EntryValidNsec = 0
		}
		if out.AttrValid == 0 && out.AttrValidNsec == uint32(noCache) {
			out.AttrValidNsec = 0
		}
	}
	return st
}

func (f rawFS) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	st := f.RawFileSystem.GetAttr(cancel, in, out)
	if perCaller(out.Attr.Ino) && out.AttrValid == 0 && out.AttrValidNsec == uint32(noCache) {
		out.AttrValidNsec = 0
	}
	return st
}

// perCaller reports whether ino is an answer file's.
func perCaller(ino uint64) bool {
	return ino == contextIno || ino == contextManifestIno || ino >= answerInoBase && ino < chunkInoBase
}

// GetXAttr answers a read of any extended attribute outside user.* with
// ENODATA before the node tree sees it: memfs keeps none (xattr.go), and
// the kernel asks for them often (ls -l asks every file for
// security.selinux and system.posix_acl_access). No lock, no lookup of the
// node.
func (f rawFS) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	if !userXAttr(attr) {
		return 0, fuse.ENOATTR
	}
	return f.RawFileSystem.GetXAttr(cancel, h, attr, dest)
}

// With HANDLE_KILLPRIV_V2 the kernel asks for no security.capability
// before each WRITE (it marks inodes S_NOSEC) and no longer sends the
// mode change that clears setuid and setgid: it flags the request
// instead, and memfs clears them as the kernel would have: setuid
// always, setgid when the group may execute (otherwise it marks
// mandatory locking, and stays). The kernel flags a WRITE or an O_TRUNC
// OPEN by a caller without CAP_FSETID, a truncate likewise, and every
// chown.

// killed is mode with setuid and setgid cleared, and whether that changed
// it.
func killed(mode uint32) (uint32, bool) {
	out := mode &^ syscall.S_ISUID
	if mode&syscall.S_IXGRP != 0 {
		out &^= syscall.S_ISGID
	}
	return out, out != mode
}

// kill clears setuid and setgid of the node of h (through its open file
// fh, if not 0) with a SETATTR of its mode by the same caller.
func (f rawFS) kill(cancel <-chan struct{}, h *fuse.InHeader, fh uint64) fuse.Status {
	in := fuse.GetAttrIn{InHeader: *h}
	if fh != 0 {
		in.Flags_, in.Fh_ = fuse.FUSE_GETATTR_FH, fh
	}
	var a fuse.AttrOut
	if st := f.RawFileSystem.GetAttr(cancel, &in, &a); !st.Ok() {
		return st
	}
	mode, changed := killed(a.Mode)
	if !changed {
		return fuse.OK
	}
	set := fuse.SetAttrIn{SetAttrInCommon: fuse.SetAttrInCommon{InHeader: *h, Valid: fuse.FATTR_MODE, Mode: mode}}
	if fh != 0 {
		set.Valid |= fuse.FATTR_FH
		set.Fh = fh
	}
	return f.RawFileSystem.SetAttr(cancel, &set, &a)
}

func (f rawFS) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	if in.WriteFlags&fuse.WRITE_KILL_SUIDGID != 0 {
		if st := f.kill(cancel, &in.InHeader, in.Fh); !st.Ok() {
			return 0, st
		}
	}
	return f.RawFileSystem.Writev(cancel, in, data)
}

// Write is only called when Writev answers ENOSYS; it clears the same.
func (f rawFS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	if in.WriteFlags&fuse.WRITE_KILL_SUIDGID != 0 {
		if st := f.kill(cancel, &in.InHeader, in.Fh); !st.Ok() {
			return 0, st
		}
	}
	return f.RawFileSystem.Write(cancel, in, data)
}

func (f rawFS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if in.Mode&fuse.OPEN_KILL_SUIDGID != 0 { // OpenIn.Mode holds the open_flags
		if st := f.kill(cancel, &in.InHeader, 0); !st.Ok() {
			return st
		}
	}
	return f.RawFileSystem.Open(cancel, in, out)
}

// SetAttr folds the clearing into the change asked for (a truncate, a
// chown), unless that sets the mode itself.
func (f rawFS) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	if in.Valid&fuse.FATTR_KILL_SUIDGID != 0 && in.Valid&fuse.FATTR_MODE == 0 {
		get := fuse.GetAttrIn{InHeader: in.InHeader}
		if in.Valid&fuse.FATTR_FH != 0 {
			get.Flags_, get.Fh_ = fuse.FUSE_GETATTR_FH, in.Fh
		}
		var a fuse.AttrOut
		if st := f.RawFileSystem.GetAttr(cancel, &get, &a); !st.Ok() {
			return st
		}
		if mode, changed := killed(a.Mode); changed {
			in.Valid |= fuse.FATTR_MODE
			in.Mode = mode
		}
	}
	return f.RawFileSystem.SetAttr(cancel, in, out)
}
