package fsnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/packhist"
	"github.com/memfs/memfs/search"
	"github.com/memfs/memfs/session"
	"github.com/memfs/memfs/status"
)

// Answers are virtual files whose content memfs computes from their name:
// .memfs/context.md, .memfs/context.manifest.json, .memfs/context/QUERY
// (QUERY.manifest.json for its manifest) and .memfs/search/QUERY.
//
// Each caller gets the answer computed for it: the request's uid, gid and
// supplementary groups (callerCred) go to the Answer in its context, and
// the Answer includes only what that caller could read through the mount
// (session.Access.CanRead: the stored modes and owners, every directory
// on the way included). The kernel must therefore never hand one caller's
// answer to another:
//
//   - the content is computed at open, for the opener, and that handle
//     serves it (FOPEN_DIRECT_IO: no page cache shared between callers);
//   - stat reports the size of the caller's own answer (as .memfs/status
//     does: rsync and size-first readers read it whole), with attributes
//     not cached (rawFS), so that a size seen by one caller is not kept
//     for another; reads go on to the end of file
//     whatever the size said (DIRECT_IO);
//   - entries and attributes are not cached (noCache, rawFS), and every
//     lookup of a query gets a new inode.
//
// An answer is kept for a second per name and credential (or until memory
// changes), so that the lookup and the open of one command compute it once.

// Answer computes the content of an answer file from its name ("" for
// .memfs/context.md). ctx carries the caller (session.CredFrom): the
// answer must hold only what that caller may read.
type Answer func(ctx context.Context, name string) ([]byte, error)

const answerTTL = time.Second

// noCache is the entry and attribute timeout of memfs's own files: go-fuse
// replaces a timeout of 0 with the mount's default (1 s), so a node gives
// 1 ns, which the kernel rounds up to a jiffy; rawFS passes it on as 0 (no
// caching) for the answer files, computed for each caller.
const noCache = time.Nanosecond

type answerCache struct {
	mu   sync.Mutex // guards data and gen
	data map[answerKey]cachedAnswer
	gen  uint64 // bumped by clear: an answer computed across it is not kept
}

// answerKey is one name as one credential sees it.
type answerKey struct {
	name string // dir + "/" + name
	cred string // session.Cred.String
}

type cachedAnswer struct {
	at   time.Time
	data []byte
	err  error // the answer cannot be given: the file says why (answerText)
}

// get returns the answer to name for cr, computing it (without the lock
// held: an Answer may take long, and must not block other callers) when
// no fresh one is kept.
func (c *answerCache) get(ctx context.Context, fn Answer, key string, name string, cr session.Cred) ([]byte, error) {
	k := answerKey{name: key, cred: cr.String()}
	c.mu.Lock()
	if a, ok := c.data[k]; ok && time.Since(a.at) < answerTTL {
		c.mu.Unlock()
		return a.data, a.err
	}
	gen := c.gen
	c.mu.Unlock()
	b, err := fn(session.WithCred(ctx, cr), name)
	if errors.Is(err, context.Canceled) {
		return nil, err // the caller gave up: nothing to keep
	}
	c.mu.Lock()
	if c.gen != gen {
		// Memory changed while the answer was computed: it may hold
		// what was there before. Its caller gets it; nobody else does.
		c.mu.Unlock()
		return b, err
	}
	if c.data == nil {
		c.data = make(map[answerKey]cachedAnswer)
	}
	for k, a := range c.data { // keep the cache small
		if time.Since(a.at) >= answerTTL {
			delete(c.data, k)
		}
	}
	c.data[k] = cachedAnswer{at: time.Now(), data: b, err: err}
	c.mu.Unlock()
	return b, err
}

// clear drops every cached answer: memory changed.
func (c *answerCache) clear() {
	c.mu.Lock()
	clear(c.data)
	c.gen++
	c.mu.Unlock()
}

// answerFile returns the virtual file for name under dir ("context" or
// "search"; "" for context.md itself). The lookup computes the answer for
// its caller. A name that cannot be answered (a query that does not
// parse, a mode the mount cannot serve, a pack of the past it cannot
// rebuild) is a file all the same, whose text says why and what to do
// (answerText): agents read files, and "No such file or directory" told
// them the feature did not exist. Its errno, for programs, is the value of
// the extended attribute user.memfs.error (see answerNode).
func (r *Root) answerFile(ctx context.Context, fn Answer, dir, name string, ino uint64) *answerNode {
	key := dir + "/" + name
	if _, err := r.answers.get(ctx, fn, key, name, callerCred(ctx)); err != nil {
		r.log.Info("answer file cannot be answered", "dir", dir, "name", name, "err", err)
	}
	a := &answerNode{fn: fn, key: key, name: name}
	// The text for the caller in ctx: the answer, or why there is none.
	text := func(ctx context.Context) ([]byte, syscall.Errno) {
		b, err := r.answers.get(ctx, fn, key, name, callerCred(ctx))
		if errors.Is(err, context.Canceled) {
			return nil, syscall.EINTR
		}
		if err != nil {
			b = answerText(dir, err)
		}
		return b, 0
	}
	a.virtualNode = virtualNode{root: r, ino: ino, size: func() int64 { return 0 },
		// The caller's own answer's size, as .memfs/status's (kept a
		// second per caller: the open that follows a stat reads the same).
		sizeFor: func(ctx context.Context) int64 {
			b, _ := text(ctx)
			return int64(len(b))
		},
		open: func(ctx context.Context) (gofs.FileHandle, syscall.Errno) {
			b, errno := text(ctx)
			if errno != 0 {
				return nil, errno
			}
			return &staticHandle{data: b}, 0
		}}
	return a
}

// answerNode is an answer file. Besides its text, it tells programs
// whether the answer is an error: getxattr of ErrorXAttr gives the errno's
// name (EINVAL, ENOTSUP, ENOENT, EIO, ...) when it is, and ENODATA
// when the file holds an answer.
type answerNode struct {
	virtualNode
	fn        Answer
	key, name string
}

// ErrorXAttr is the extended attribute of an answer file that names the
// errno of an answer that cannot be given.
const ErrorXAttr = "user.memfs.error"

var (
	_ gofs.NodeGetxattrer  = (*answerNode)(nil)
	_ gofs.NodeListxattrer = (*answerNode)(nil)
)

// errnoName is the value of ErrorXAttr for the caller in ctx ("" when its
// answer is no error).
func (a *answerNode) errnoName(ctx context.Context) string {
	_, err := a.root.answers.get(ctx, a.fn, a.key, a.name, callerCred(ctx))
	if err == nil {
		return ""
	}
	return unix.ErrnoName(answerErrno(err))
}

func (a *answerNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	v := ""
	if attr == ErrorXAttr {
		v = a.errnoName(ctx)
	}
	if v == "" {
		return 0, syscall.ENODATA
	}
	return xattrReply(dest, []byte(v))
}

func (a *answerNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	if a.errnoName(ctx) == "" {
		return 0, 0
	}
	return xattrReply(dest, []byte(ErrorXAttr+"\x00"))
}

// xattrReply answers a getxattr or listxattr: the size alone for a size
// probe (len(dest) 0), ERANGE for a buffer too small.
func xattrReply(dest, v []byte) (uint32, syscall.Errno) {
	if len(dest) == 0 {
		return uint32(len(v)), 0
	}
	if len(dest) < len(v) {
		return uint32(len(v)), syscall.ERANGE
	}
	return uint32(copy(dest, v)), 0
}

// answerErrors maps the errors of an answer to the errno a program tests
// and what the reader can do, in order: the first match wins. An error
// none matches is toErrno's, with answerHintOther.
var answerErrors = []struct {
	err   error
	errno syscall.Errno
	hint  string
}{
	{search.ErrNoEmbedder, syscall.EOPNOTSUPP, "this mount has no embedder, so it searches by keywords only: leave out mode: (or write mode:keyword), " +
		"or put the default model in place with `memfs models install` and mount again."},
	{search.ErrQuery, syscall.EINVAL, "a search name is the query's words and filters, percent-encoded: tag:T (repeatable), source:S, agent:ID, " +
		"session:S, type:T (a memory type), importance:0.5 (at least), since:2026-11-01 or since:24h, until:..., " +
		"prefix:memory%2Fnotes (a / is written %2F), top:N, min:SCORE, mode:keyword|semantic|hybrid, format:json. Fix the word the reason names."},
	{contextpack.ErrName, syscall.EINVAL, "a context name is the query's words, percent-encoded, and max:N (characters, 1 or more), " +
		"summaries:K, type:T and session:S (only the notes of that memory type, of that session; each once) " +
		"and at:SEQ (an event-log seq: memfs log shows them). Fix the word the reason names."},
	{backend.ErrUnavailable, syscall.EIO, "the store does not answer (etcd down, or the network): what this mount loaded stays readable; " +
		"ask again once the store answers (nothing to rebuild)."},
	{packhist.ErrOutOfRange, syscall.ENOENT, "at:SEQ names no event of the log: memfs log (or .memfs/events.jsonl) shows the seqs there are."},
	{packhist.ErrNotKept, syscall.ENOENT, "memfs keeps what packs read for the last 10,000 events only: choose a later seq (memfs log shows them)."},
	{packhist.ErrNotArchived, syscall.EIO, "the sources of that pack were never kept (a crash before they were written): choose another seq (memfs log shows them)."},
	{packhist.ErrMismatch, syscall.EIO, "what memfs kept of that pack does not match the event log: choose another seq, and check the log with memfs log --verify."},
}

const answerHintOther = "the mount's log has the details, and .memfs/status the state of the mount; try again in a moment."

// answerErrno is the errno of err, an answer's error.
func answerErrno(err error) syscall.Errno {
	for _, e := range answerErrors {
		if errors.Is(err, e.err) {
			return e.errno
		}
	}
	return toErrno(err)
}

// answerText is the content of an answer file whose answer is err: the
// reason, what to do, and the errno programs read from ErrorXAttr.
func answerText(dir string, err error) []byte {
	hint := answerHintOther
	for _, e := range answerErrors {
		if errors.Is(err, e.err) {
			hint = e.hint
			break
		}
	}
	what := "search"
	if dir == "context" {
		what = "context pack"
	}
	errno := answerErrno(err)
	return fmt.Appendf(nil, "memfs: this %s cannot be answered: %v\nWhat to do: %s\nerrno: %s (%v), also in the extended attribute %s\n",
		what, err, hint, unix.ErrnoName(errno), errno, ErrorXAttr)
}

// answerDir is .memfs/search/ or .memfs/context/: every name is a query;
// the directory lists nothing.
type answerDir struct {
	gofs.Inode
	root *Root
	name string
	ino  uint64
	fn   Answer
}

var (
	_ gofs.NodeLookuper  = (*answerDir)(nil)
	_ gofs.NodeReaddirer = (*answerDir)(nil)
	_ gofs.NodeGetattrer = (*answerDir)(nil)
)

func (d *answerDir) fill(out *fuse.Attr) { d.root.readOnlyDir(d.ino, out) }

func (d *answerDir) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.fill(&out.Attr)
	return 0
}

func (d *answerDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	return gofs.NewListDirStream(nil), 0
}

func (d *answerDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if name == status.QueryFile {
		q := &queryNode{dir: d, ino: answerInoBase + d.root.answerIno.Add(1)}
		q.fill(&out.Attr)
		out.SetEntryTimeout(noCache)
		out.SetAttrTimeout(noCache)
		return d.NewInode(ctx, q, gofs.StableAttr{Mode: syscall.S_IFREG, Ino: q.ino}), 0
	}
	// A distinct inode per lookup: the answer to a name changes as
	// memory changes, and the kernel must not keep an old one. The number
	// is the one Add returned: read back with Load, two lookups at once
	// could both get the second and share one inode (one query then
	// reading the other's answer).
	v := d.root.answerFile(ctx, d.fn, d.name, name, answerInoBase+d.root.answerIno.Add(1))
	v.fill(&out.Attr)
	out.Attr.Size = uint64(v.sizeFor(ctx))
	out.SetEntryTimeout(noCache)
	out.SetAttrTimeout(noCache)
	return d.NewInode(ctx, v, gofs.StableAttr{Mode: syscall.S_IFREG, Ino: v.ino}), 0
}

// unknownID is the uid and gid of a request that names no caller (none
// comes from the kernel without one): it gets what "others" may read.
const unknownID = 1<<32 - 2

// callerCred is the credential of the request in ctx: the uid and gid the
// kernel sent (the caller's fsuid and fsgid) and the supplementary groups
// of the calling thread, read from /proc. When /proc cannot tell them
// (the thread is gone, lives in another pid namespace, or its ids no
// longer match the request's), the primary group alone is used, which
// can only deny more.
func callerCred(ctx context.Context) session.Cred {
	c, ok := fuse.FromContext(ctx)
	if !ok {
		return session.Cred{UID: unknownID, GIDs: []uint32{unknownID}}
	}
	cr := session.Cred{UID: c.Uid, GIDs: []uint32{c.Gid}}
	if c.Uid == 0 || c.Pid == 0 {
		return cr // root reads everything; pid 0: the caller is not in our pid namespace
	}
	if groups, err := procGroups(c.Pid, c.Uid, c.Gid); err == nil {
		cr.GIDs = append(cr.GIDs, groups...)
	}
	return cr
}

// procGroups returns the supplementary groups of thread tid from
// /proc/TID/status. FUSE names the calling thread, not its process;
// /proc/TID exists for every thread (unlisted), and its Groups line is
// that thread's own. The thread's fsuid and fsgid must still be uid and
// gid: a thread that has exited may have had its id reused.
func procGroups(tid, uid, gid uint32) ([]uint32, error) {
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(tid), 10) + "/status")
	if err != nil {
		return nil, fmt.Errorf("fsnode: groups of thread %d: %w", tid, err)
	}
	return parseStatusGroups(b, uid, gid)
}

// parseStatusGroups reads the Uid, Gid and Groups lines of a
// /proc/PID/status file (see proc(5)): "Uid:\treal\teffective\tsaved\tfs".
func parseStatusGroups(status []byte, uid, gid uint32) ([]uint32, error) {
	var groups []uint32
	var fsuid, fsgid int64 = -1, -1
	seen := false
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		fields := bytes.Fields(rest)
		switch string(name) {
		case "Uid", "Gid":
			if len(fields) != 4 {
				return nil, fmt.Errorf("fsnode: /proc status: %s line %q", name, line)
			}
			v, err := strconv.ParseUint(string(fields[3]), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("fsnode: /proc status: %s line %q: %w", name, line, err)
			}
			if string(name) == "Uid" {
				fsuid = int64(v)
			} else {
				fsgid = int64(v)
			}
		case "Groups":
			seen = true
			for _, f := range fields {
				v, err := strconv.ParseUint(string(f), 10, 32)
				if err != nil {
					return nil, fmt.Errorf("fsnode: /proc status: Groups line %q: %w", line, err)
				}
				groups = append(groups, uint32(v))
			}
		}
	}
	switch {
	case !seen || fsuid < 0 || fsgid < 0:
		return nil, fmt.Errorf("fsnode: /proc status: no Uid, Gid or Groups line")
	case fsuid != int64(uid) || fsgid != int64(gid):
		return nil, fmt.Errorf("fsnode: /proc status: ids %d:%d, the request's %d:%d (another thread now)", fsuid, fsgid, uid, gid)
	}
	return groups, nil
}

// maxQuery bounds the query written into a status.QueryFile.
const maxQuery = 64 << 10

// queryNode is a status.QueryFile: mode 0666, size 0, nothing cached.
type queryNode struct {
	gofs.Inode
	dir *answerDir
	ino uint64
}

var (
	_ gofs.NodeOpener    = (*queryNode)(nil)
	_ gofs.NodeGetattrer = (*queryNode)(nil)
	_ gofs.NodeSetattrer = (*queryNode)(nil)
)

func (q *queryNode) fill(out *fuse.Attr) {
	out.Ino = q.ino
	out.Mode = syscall.S_IFREG | 0o666
	out.Nlink = 1
	st, _ := q.dir.root.c.Stat("")
	out.Owner = fuse.Owner{Uid: st.UID, Gid: st.GID}
}

func (q *queryNode) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	q.fill(&out.Attr)
	out.SetTimeout(noCache)
	return 0
}

func (q *queryNode) Setattr(ctx context.Context, f gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EPERM
}

// Open takes only O_RDWR: the query is written, the answer read back.
func (q *queryNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDWR {
		return nil, 0, syscall.EINVAL
	}
	return &queryHandle{node: q, cred: callerCred(ctx)}, fuse.FOPEN_DIRECT_IO, 0
}

// queryHandle is one exchange through a status.QueryFile.
type queryHandle struct {
	node *queryNode
	cred session.Cred // the opener's: the answer holds only what it may read

	mu     sync.Mutex // guards query and answer
	query  []byte     // written so far
	answer []byte     // computed at the first read; nil before
}

var (
	_ gofs.FileReader = (*queryHandle)(nil)
	_ gofs.FileWriter = (*queryHandle)(nil)
)

// Write appends to the query; it must come before the first read, in
// order, and within maxQuery.
func (h *queryHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.answer != nil || off != int64(len(h.query)):
		return 0, syscall.EINVAL
	case len(h.query)+len(data) > maxQuery:
		return 0, syscall.EFBIG
	}
	h.query = append(h.query, data...)
	return uint32(len(data)), 0
}

// Read answers the query written (one trailing newline dropped), then
// serves that answer at any offset. A query that cannot be answered is
// its errno (answerErrno: EINVAL for one that does not parse), the errno
// its name's ErrorXAttr gives; the log says why, without the query.
func (h *queryHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.answer == nil {
		name := strings.TrimSuffix(string(h.query), "\n")
		if name == "" {
			return nil, syscall.EINVAL
		}
		d := h.node.dir
		b, err := d.root.answers.get(ctx, d.fn, d.name+"/"+name, name, h.cred)
		if err != nil {
			d.root.log.Info("query refused", "dir", d.name, "bytes", len(name), "err", err)
			return nil, answerErrno(err)
		}
		h.answer = b
	}
	if off >= int64(len(h.answer)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(dest[:copy(dest, h.answer[off:])]), 0
}
