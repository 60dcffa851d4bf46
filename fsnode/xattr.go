package fsnode

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

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
	return r.changed(xattrErrno(err)) // tags and importance rank search and packs on every mount
}

func (r *Root) removexattr(ctx context.Context, n keyer, attr string) syscall.Errno {
	if !userXAttr(attr) {
		return syscall.EOPNOTSUPP
	}
	key, errno := n.key()
	if errno != 0 {
		return errno
	}
	return r.changed(xattrErrno(r.c.XAttrs().Remove(r.as(ctx), key, attr)))
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
	w := meta.WriterInfo{Agent: r.opts.Agent, Run: r.opts.Run}
	if c, ok := fuse.FromContext(ctx); ok {
		w.UID = c.Uid
		var run string
		w.PID, w.Comm, run = r.procs.process(c.Pid)
		if run != "" {
			w.Run = run
		}
	}
	return w
}

// as returns ctx carrying the request's writer for the session.
func (r *Root) as(ctx context.Context) context.Context {
	return session.WithWriter(ctx, r.writer(ctx))
}

// procCacheTTL is how long procCache trusts what /proc said of a thread.
// A program that creates 10,000 files reads /proc a few times, not 10,000
// (the read was a tenth of a create's CPU). The cost: a process that
// calls exec(2) within this time of an earlier request is named by its
// earlier program; a thread id is not reused within it (the kernel hands
// out pids in order up to pid_max before it wraps).
const procCacheTTL = 200 * time.Millisecond

// procCache remembers the process and name of recent calling threads.
type procCache struct {
	mu   sync.Mutex
	seen map[uint32]procEntry
	runs map[uint32]procRun         // per process: see runOf
	now  func() time.Time           // time.Now; tests move the clock
	read func(tid uint32) procEntry // readProcess; tests count the reads
}

type procEntry struct {
	pid  uint32
	comm string
	run  string // its process's MEMFS_RUN, when valid (runOf)
	at   time.Time
}

// procCacheSize bounds the threads remembered; a full cache starts over.
const procCacheSize = 1024

// process returns the process of thread tid, its program's name and its
// run (MEMFS_RUN in its environment), from the cache while it is fresh.
func (c *procCache) process(tid uint32) (pid uint32, comm, run string) {
	if tid == 0 {
		return 0, "", ""
	}
	now, read := time.Now, readProcess
	if c.now != nil {
		now = c.now
	}
	if c.read != nil {
		read = c.read
	}
	t := now()
	c.mu.Lock()
	e, ok := c.seen[tid]
	c.mu.Unlock()
	if ok && t.Sub(e.at) < procCacheTTL && t.Sub(e.at) >= 0 {
		return e.pid, e.comm, e.run
	}
	e = read(tid)
	if e.comm == "" {
		return e.pid, "", "" // gone: nothing to remember
	}
	e.at = t
	e.run = c.runOf(e.pid, tid, t)
	c.mu.Lock()
	if c.seen == nil || len(c.seen) >= procCacheSize {
		c.seen = make(map[uint32]procEntry)
	}
	c.seen[tid] = e
	c.mu.Unlock()
	return e.pid, e.comm, e.run
}

// runOf is the run of process pid (whose thread tid called), from the
// cache while it is fresh: the threads of a process share its
// environment, which is read once for all of them.
func (c *procCache) runOf(pid, tid uint32, t time.Time) string {
	c.mu.Lock()
	r, ok := c.runs[pid]
	c.mu.Unlock()
	if ok && t.Sub(r.at) < procCacheTTL && t.Sub(r.at) >= 0 {
		return r.run
	}
	r = procRun{run: processRun(tid), at: t}
	c.mu.Lock()
	if c.runs == nil || len(c.runs) >= procCacheSize {
		c.runs = make(map[uint32]procRun)
	}
	c.runs[pid] = r
	c.mu.Unlock()
	return r.run
}

type procRun struct {
	run string
	at  time.Time
}

// readProcess returns the process of thread tid (FUSE reports the calling
// thread) and its name: the thread group leader's, which is the program's
// (a thread's own name may be a worker's). A thread that has gone gives
// tid and "".
func readProcess(tid uint32) procEntry {
	e := procEntry{pid: tid}
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(tid), 10) + "/status")
	if err != nil {
		return e
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Name:"); ok && e.comm == "" {
			e.comm = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32); err == nil {
				e.pid = uint32(n)
			}
			break
		}
	}
	if e.pid != tid {
		if c, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(e.pid), 10) + "/comm"); err == nil {
			e.comm = strings.TrimSpace(string(c))
		}
	}
	return e
}

// processRun is the run the process of thread tid works for: MEMFS_RUN
// in its environment (as it was at exec), when valid; else "". The
// thread's own file is read (its process's leader may have exited), in
// pieces, and no further than environMax: a process that grew its
// environment to megabytes costs memfs no more than that. Nothing else
// of the environment is kept or told: it may hold secrets. A process
// memfs may not read the environment of (another user's, for a mount not
// run as root) has none.
func processRun(tid uint32) string {
	f, err := os.Open("/proc/" + strconv.FormatUint(uint64(tid), 10) + "/environ")
	if err != nil {
		return ""
	}
	defer f.Close()
	const name = "MEMFS_RUN="
	sc := bufio.NewScanner(io.LimitReader(f, environMax))
	sc.Buffer(make([]byte, 4096), environMax)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, 0); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte(name)); ok {
			if meta.ValidateRun(string(v)) != nil {
				return ""
			}
			return string(v)
		}
	}
	return ""
}

// environMax is the most of a process's environment processRun reads.
const environMax = 256 << 10
