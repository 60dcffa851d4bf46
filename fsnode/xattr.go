package fsnode

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/session"
)

// Extended attributes. Only user.* attributes exist in memfs: a name in
// any other namespace (security.*, system.*, trusted.*) is answered at once,
// without a lookup in the session: ENODATA for a read, ENOTSUP for a write.
// The kernel asks for security.capability before writes and ls(1) for
// security.selinux and system.posix_acl_access, so this path is kept short.

var (
	_ = (interface {
		Getxattr(context.Context, string, []byte) (uint32, syscall.Errno)
		Setxattr(context.Context, string, []byte, uint32) syscall.Errno
		Removexattr(context.Context, string) syscall.Errno
		Listxattr(context.Context, []byte) (uint32, syscall.Errno)
	})((*fileNode)(nil))
)

func userXAttr(name string) bool { return strings.HasPrefix(name, backend.XAttrPrefix) }

// fill copies v into dest with getxattr(2)'s size protocol: an empty dest
// asks for the size; a short one is ERANGE.
func fillXAttr(v, dest []byte) (uint32, syscall.Errno) {
	if len(dest) == 0 {
		return uint32(len(v)), 0
	}
	if len(dest) < len(v) {
		return uint32(len(v)), syscall.ERANGE
	}
	return uint32(copy(dest, v)), 0
}

// Files and directories keep user.* attributes alike (the root, which is
// no entry of the store, keeps none).

type keyer interface {
	key() (string, syscall.Errno)
}

func (n *fileNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return n.root.getxattr(n, attr, dest)
}

func (n *fileNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	return n.root.listxattr(n, dest)
}

func (n *fileNode) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return n.root.setxattr(ctx, n, attr, data, flags)
}

func (n *fileNode) Removexattr(ctx context.Context, attr string) syscall.Errno {
	return n.root.removexattr(ctx, n, attr)
}

func (d *dirNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return d.root.getxattr(d, attr, dest)
}

func (d *dirNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	return d.root.listxattr(d, dest)
}

func (d *dirNode) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return d.root.setxattr(ctx, d, attr, data, flags)
}

func (d *dirNode) Removexattr(ctx context.Context, attr string) syscall.Errno {
	return d.root.removexattr(ctx, d, attr)
}

func (r *Root) getxattr(n keyer, attr string, dest []byte) (uint32, syscall.Errno) {
	if !userXAttr(attr) {
		return 0, syscall.ENODATA
	}
	key, errno := n.key()
	if errno != 0 {
		return 0, errno
	}
	v, err := r.c.XAttrs().Get(key, attr)
	if err != nil {
		return 0, toErrno(err)
	}
	return fillXAttr(v, dest)
}

func (r *Root) listxattr(n keyer, dest []byte) (uint32, syscall.Errno) {
	key, errno := n.key()
	if errno != 0 {
		return 0, errno
	}
	names, err := r.c.XAttrs().List(key)
	if err != nil {
		return 0, toErrno(err)
	}
	var b []byte
	for _, name := range names {
		b = append(append(b, name...), 0)
	}
	return fillXAttr(b, dest)
}

func (r *Root) setxattr(ctx context.Context, n keyer, attr string, data []byte, flags uint32) syscall.Errno {
	if !userXAttr(attr) {
		return syscall.EOPNOTSUPP
	}
	key, errno := n.key()
	if errno != 0 {
		return errno
	}
	err := r.c.XAttrs().Set(r.as(ctx), key, attr, data, session.XAttrFlags(flags))
	if err != nil {
		r.log.Debug("setxattr refused", "key", key, "attr", attr, "err", err)
	}
	return xattrErrno(err)
}

func (r *Root) removexattr(ctx context.Context, n keyer, attr string) syscall.Errno {
	if !userXAttr(attr) {
		return syscall.EOPNOTSUPP
	}
	key, errno := n.key()
	if errno != 0 {
		return errno
	}
	return xattrErrno(r.c.XAttrs().Remove(r.as(ctx), key, attr))
}

// xattrErrno: a write to an attribute memfs maintains is EPERM, not the
// EROFS of a read-only session.
func xattrErrno(err error) syscall.Errno {
	if errors.Is(err, meta.ErrReadOnly) {
		return syscall.EPERM
	}
	return toErrno(err)
}

// writer describes the process behind a request.
func (r *Root) writer(ctx context.Context) meta.WriterInfo {
	w := meta.WriterInfo{Agent: r.opts.Agent}
	if c, ok := fuse.FromContext(ctx); ok {
		w.UID = c.Uid
		w.PID, w.Comm = process(c.Pid)
	}
	return w
}

// as returns ctx carrying the request's writer for the session.
func (r *Root) as(ctx context.Context) context.Context {
	return session.WithWriter(ctx, r.writer(ctx))
}

// process returns the process of thread tid (FUSE reports the calling
// thread) and its name: the thread group leader's, which is the program's
// (a thread's own name may be a worker's). A thread that has gone gives
// tid and "".
func process(tid uint32) (pid uint32, comm string) {
	if tid == 0 {
		return 0, ""
	}
	pid = tid
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(tid), 10) + "/status")
	if err != nil {
		return tid, ""
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Name:"); ok && comm == "" {
			comm = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32); err == nil {
				pid = uint32(n)
			}
			break
		}
	}
	if pid != tid {
		if c, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(pid), 10) + "/comm"); err == nil {
			comm = strings.TrimSpace(string(c))
		}
	}
	return pid, comm
}
