package fsnode

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/changes"
	"github.com/memfs/memfs/session"
	"github.com/memfs/memfs/status"
)

// Options configures the node tree. The zero value uses 1 s timeouts, a
// discarding logger and the time of NewRoot as the mount time.
type Options struct {
	Logger          *slog.Logger
	EntryTimeout    time.Duration // 0 means 1 s; negative, no caching
	AttrTimeout     time.Duration // 0 means 1 s; negative, no caching
	NegativeTimeout time.Duration // 0 means 1 s; negative, no caching
	// Steady, when set, reports the keys whose names and attributes the
	// kernel keeps SteadyTimeout: those only another program changes (a
	// read-only route), or every key, when the session changes only
	// through this mount, another writer (the store's feed) and memfs's
	// own accord: a change of theirs or memfs's reaches the kernel as an
	// invalidation (onChange), one through the mount the kernel knows.
	Steady func(key string) bool
	// Status, when set, fills in the engine's part of .memfs/status (the
	// store, mountpoint and process, memory, search, peers, stale
	// derived artifacts) for each reader, cr.
	Status func(cr session.Cred, st *status.Status)
	// Events, when set, is served as .memfs/events.jsonl.
	Events EventLog
	// Records, when set, serves the event log's records read-only:
	// .memfs/events/ (its chunks) and .memfs/events.head.
	Records Records
	// ContextPack, when set, answers .memfs/context.md (name ""),
	// .memfs/context/NAME, and their manifests: .memfs/context.manifest.json
	// (name ".manifest.json") and .memfs/context/NAME.manifest.json (the
	// name as it is). The manifest must describe the pack the same caller
	// reads under the name without the suffix.
	ContextPack Answer
	// Search, when set, answers .memfs/search/NAME.
	Search Answer
	// Runs, when set, serves .memfs/runs/.
	Runs *Runs
	// History, when set, serves the past read-only: .memfs/history/,
	// .memfs/snapshots/ and .memfs/at/ (see history.go).
	History History
	// Agent labels the writer of every change made through the mount
	// (user.memfs.writer, the event log); "" for none.
	Agent string
	// Run is the run of every change made through the mount by a process
	// that names none (MEMFS_RUN in its environment does); "" for none.
	Run string
	// ShowMemfs lists .memfs in the root's listing. Without it .memfs is
	// reachable by name only (as ZFS's .zfs is), so that tree walks
	// (grep -r, find, cp -a, rsync, git add -A) leave it out.
	ShowMemfs bool
	// Space, when set, tells statfs (df) the store's usage and room; a
	// Used of -1 is replaced by the bytes of the files the session
	// indexes. Without it df shows those bytes and no room.
	Space func(ctx context.Context) (backend.Space, error)
	// Closed, when set, is called when a descriptor of a file written
	// through it is closed (after the file's Commit), and after each
	// change of the namespace (mkdir, rmdir, unlink, rename, link,
	// symlink, mknod), of a mode or owner, and of a user.* attribute: a
	// mount of a shared store flushes soon after, so that the other
	// mounts see the change (close-to-open consistency), and a node
	// made private here is private there within a second.
	Closed func()
	// Check, when set, checks a file written through a descriptor at the
	// descriptor's close(2), after its Commit: it gets the file's key and
	// a way to read its value (at most MaxChecked bytes, read only when
	// asked), and returns nil for a key it does not check. Its error
	// fails the close with EINVAL, and a WARN line names the key (not the
	// error, which may quote the value); the file stays as
	// written (nothing acknowledged is lost): a repository's record whose
	// front matter is broken (repo.CheckKey).
	Check func(key string, value func() []byte) error
}

// MaxChecked is the most of a file's value Options.Check reads: a record
// is at most 1 MiB, so a byte more tells a larger one.
const MaxChecked = 1<<20 + 1

// Root is the root of a memfs mount. Build it with NewRoot and pass it to
// fs.Mount (or use Mount).
type Root struct {
	dirNode
	c        *session.Context
	opts     Options
	log      *slog.Logger
	mounting atomic.Bool // Mount has not returned yet: .memfs does not answer
	started  time.Time   // NewRoot's time: .memfs's times

	queue *notifyQueue
	stop  func()

	reads atomic.Int64 // READ requests served from the session (the rest hit the page cache)

	answers   answerCache   // contents of .memfs/context.md, context/ and search/
	answerIno atomic.Uint64 // inode numbers handed to answer files
	feed      *changes.Log  // .memfs/changes
	past      pastCache     // what .memfs/history read of the store's history
	procs     procCache     // who the calling threads are
}

// Reads returns how many READ requests reached memfs: with the kernel's
// page cache kept, a second read of an unchanged file adds none.
func (r *Root) Reads() int64 { return r.reads.Load() }

var _ fs.InodeEmbedder = (*Root)(nil)

// NewRoot returns the root node over c. Call Close when the mount has
// ended to stop watching the session.
func NewRoot(c *session.Context, opts Options) *Root {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	for _, d := range []*time.Duration{&opts.EntryTimeout, &opts.AttrTimeout, &opts.NegativeTimeout} {
		switch {
		case *d == 0:
			*d = time.Second
		case *d < 0:
			*d = 0 // the kernel caches nothing
		}
	}
	r := &Root{c: c, opts: opts, log: opts.Logger, feed: changes.New(0), started: time.Now()}
	r.root = r
	r.queue = newNotifyQueue(r)
	r.stop = c.Watch(r.onChange)
	return r
}

// Close stops the notification goroutine and the session watch.
func (r *Root) Close() {
	r.stop()
	r.queue.close()
}

// onChange is called by the session with no lock held, possibly from
// inside a request handler: it only queues.
func (r *Root) onChange(ch session.Change) {
	r.answers.clear() // search results and context packs may differ now
	// A change of another writer's, or of memfs's own accord (a conflict
	// copy, an expiry), is applied behind the kernel: what it caches of
	// the key (names and attributes are kept long: SteadyTimeout) is
	// stale. A change through the mount the kernel knows of.
	behind := ch.Origin != session.OriginLocal
	switch {
	case ch.Op == session.OpContent, behind && ch.Op == session.OpAttr:
		r.queue.push(ch.Key, false)
	case ch.Origin == session.OriginSelf && ch.Op == session.OpRemove:
		r.queue.pushItem(notifyItem{key: ch.Key, entry: true, del: true}) // an expired file, a copy dropped
		r.queue.push(parentKey(ch.Key), false)
	case behind && (ch.Op == session.OpCreate || ch.Op == session.OpRemove || ch.Op == session.OpMkdir || ch.Op == session.OpRmdir):
		r.queue.push(ch.Key, true)
		r.queue.push(parentKey(ch.Key), false) // its listing and times: the kernel drops them with a cached name only
	case behind && ch.Op == session.OpRename:
		r.queue.push(ch.OldKey, true) // not as a removal: the node lives on under Key
		r.queue.push(ch.Key, true)
		r.queue.push(parentKey(ch.OldKey), false)
		r.queue.push(parentKey(ch.Key), false)
	}
	if r.c.Local(ch.Key) && (ch.OldKey == "" || r.c.Local(ch.OldKey)) {
		return // editors' swap and temp files would drown the feed
	}
	origin := "mount"
	if ch.Origin != session.OriginLocal {
		origin = string(ch.Origin) // external, memfs
	}
	r.feed.Append(changes.Record{Time: ch.Time.UTC(), Op: string(ch.Op), Key: ch.Key, OldKey: ch.OldKey, Origin: origin})
}

// keyOf returns the session key of inode in, or false if in is no longer
// attached to the tree (removed).
func (r *Root) keyOf(in *fs.Inode) (string, bool) {
	root := r.EmbeddedInode()
	var segs []string
	for p := in; p != root; {
		name, parent := p.Parent()
		if parent == nil {
			return "", false
		}
		segs = append(segs, name)
		p = parent
	}
	slices.Reverse(segs)
	key := ""
	for _, s := range segs {
		key = backend.Join(key, s)
	}
	return key, true
}

func (r *Root) fillAttr(st session.Stat, out *fuse.Attr) {
	out.Ino = st.Ino
	out.Size = uint64(st.Size)
	out.Blocks = (uint64(st.Size) + 511) / 512
	out.Blksize = 4096
	out.Mtime, out.Mtimensec = uint64(st.MTime.Unix()), uint32(st.MTime.Nanosecond())
	out.Ctime, out.Ctimensec = uint64(st.CTime.Unix()), uint32(st.CTime.Nanosecond())
	out.Atime, out.Atimensec = uint64(st.ATime.Unix()), uint32(st.ATime.Nanosecond())
	out.Owner = fuse.Owner{Uid: st.UID, Gid: st.GID}
	out.Nlink = st.Nlink
	out.Mode = backend.UnixMode(st.Mode)
	out.Rdev = uint32(st.Rdev)
}

func (r *Root) fillEntry(st session.Stat, out *fuse.EntryOut) {
	r.fillAttr(st, &out.Attr)
	out.SetEntryTimeout(r.timeout(st.Key, r.opts.EntryTimeout))
	out.SetAttrTimeout(r.timeout(st.Key, r.opts.AttrTimeout))
}

// SteadyTimeout is how long the kernel keeps the names and attributes of
// a key Options.Steady reports.
const SteadyTimeout = time.Hour

// timeout is d, or SteadyTimeout for a steady key (Options.Steady).
func (r *Root) timeout(key string, d time.Duration) time.Duration {
	if r.opts.Steady != nil && d > 0 && r.opts.Steady(key) {
		return SteadyTimeout
	}
	return d
}

// newChild returns the inode for st under parent, reusing the existing one
// for the same inode number.
func (r *Root) newChild(ctx context.Context, parent *fs.Inode, st session.Stat) *fs.Inode {
	if st.IsDir {
		in := parent.NewInode(ctx, &dirNode{root: r}, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: st.Ino})
		if d, ok := in.Operations().(*dirNode); ok {
			var a fuse.Attr
			r.fillAttr(st, &a)
			d.last.Store(&a)
		}
		return in
	}
	return parent.NewInode(ctx, &fileNode{root: r}, fs.StableAttr{Mode: backend.UnixMode(st.Mode) & syscall.S_IFMT, Ino: st.Ino})
}

func caller(ctx context.Context) (uint32, uint32) {
	if c, ok := fuse.FromContext(ctx); ok {
		return c.Uid, c.Gid
	}
	return 0, 0
}

// notifyQueue delivers kernel cache invalidations from one goroutine: a
// notification sent from a request handler, or under a lock that a
// request may need, can deadlock the mount.
type notifyQueue struct {
	r    *Root
	mu   sync.Mutex // guards keys; with cond, wakes the goroutine (closed is atomic)
	cond *sync.Cond
	keys []notifyItem
	done chan struct{}
	// closed is set once close is called.
	closed atomic.Bool
}

func newNotifyQueue(r *Root) *notifyQueue {
	q := &notifyQueue{r: r, done: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	go q.run()
	return q
}

// notifyItem is a key whose content (or, with entry, whose name) changed
// behind the kernel; with del, a file memfs removed of its own accord
// (expired), which the kernel drops at once.
type notifyItem struct {
	key   string
	entry bool
	del   bool
}

func (q *notifyQueue) push(key string, entry bool) { q.pushItem(notifyItem{key: key, entry: entry}) }

func (q *notifyQueue) pushItem(it notifyItem) {
	q.mu.Lock()
	q.keys = append(q.keys, it)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *notifyQueue) close() {
	q.mu.Lock()
	q.closed.Store(true)
	q.mu.Unlock()
	q.cond.Signal()
	<-q.done
}

func (q *notifyQueue) run() {
	defer close(q.done)
	for {
		q.mu.Lock()
		for len(q.keys) == 0 && !q.closed.Load() {
			q.cond.Wait()
		}
		if q.closed.Load() {
			q.mu.Unlock()
			return
		}
		keys := q.keys
		q.keys = nil
		q.mu.Unlock()
		for _, it := range keys {
			if it.entry {
				q.r.invalidateEntry(it.key, it.del)
			} else {
				q.r.invalidate(it.key)
			}
		}
	}
}

// invalidate drops the kernel's cached pages and attributes of key, if the
// kernel knows the file.
func (r *Root) invalidate(key string) {
	in := r.EmbeddedInode()
	for _, seg := range splitKey(key) {
		in = in.GetChild(seg)
		if in == nil {
			return
		}
	}
	if errno := in.NotifyContent(0, 0); errno != 0 && errno != syscall.ENOENT {
		r.log.Debug("notify content", "key", key, "errno", errno)
	}
}

// invalidateEntry drops the kernel's cached name of key (or cached
// absence); with del, as a removal (FUSE_NOTIFY_DELETE: the name goes
// now, not when its entry timeout ends; the kernels seen here tell
// inotify watchers nothing of it).
func (r *Root) invalidateEntry(key string, del bool) {
	in := r.EmbeddedInode()
	segs := splitKey(key)
	for _, seg := range segs[:len(segs)-1] {
		in = in.GetChild(seg)
		if in == nil {
			return // the kernel knows nothing below: nothing cached
		}
	}
	name := segs[len(segs)-1]
	if child := in.GetChild(name); del && child != nil {
		if errno := in.NotifyDelete(name, child); errno != 0 && errno != syscall.ENOENT {
			r.log.Debug("notify delete", "key", key, "errno", errno)
		}
		return
	}
	if errno := in.NotifyEntry(name); errno != 0 && errno != syscall.ENOENT {
		r.log.Debug("notify entry", "key", key, "errno", errno)
	}
}

func splitKey(key string) []string {
	var segs []string
	for key != "" {
		dir, name := backend.Split(key)
		segs = append(segs, name)
		key = dir
	}
	slices.Reverse(segs)
	return segs
}
