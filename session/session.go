package session

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/redact"
)

// Lock order: flushMu before mu. Never hold mu across store I/O or a call
// into a Watch callback.

// Options configures a Context. The zero value is usable: no size limit,
// a discarding logger, time.Now, writable, owner of new entries 0:0 unless
// the caller says otherwise.
type Options struct {
	// Logger receives flush failures and other events; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxFileSize is the largest value a write may produce; 0 is unlimited.
	MaxFileSize int64
	// ReadOnly makes every change fail with ErrReadOnly, but Replay's,
	// and Flush save nothing: a read-only session shows what a journal
	// holds without writing the store.
	ReadOnly bool
	// DirMode, DirUID and DirGID are the attributes of implied directories.
	// DirMode 0 means 0755.
	DirMode fs.FileMode
	DirUID  uint32
	DirGID  uint32
	// Redactor, when set, redacts every byte that leaves memory (store,
	// journal, recovery directory, and so index and event log) and
	// refuses names that contain a secret (ErrSecretName). The session
	// itself keeps the bytes as written. nil persists values as written.
	Redactor *redact.Redactor
	// Self is the writer of changes no caller is named for (the memfs
	// process itself: its commands, journal replay).
	Self *meta.WriterInfo
	// Types are the memory types user.memfs.type may be set to; the zero
	// value is meta's defaults.
	Types meta.Types
	// Events, when set, receives after each successful Flush one Event
	// per change that reached the store, in order. When it fails, the
	// events are kept and offered again after the next Flush.
	Events func(ctx context.Context, events []Event) error
	// Saving, when set, is told at each flush the entries it is about to
	// save, as the store gets them (redacted, with their derived
	// attributes), before the store's save begins; it may work on them
	// while the save runs (history writes their values' objects then),
	// and must neither keep nor change them past the Events call of the
	// same flush, which comes only if the save succeeded. (The values
	// are the session's own: nothing changes them meanwhile.)
	Saving func(ctx context.Context, entries []backend.Entry)
	// Saved, when set, is told after each successful Flush what the store
	// now holds: the entries saved, with the values as persisted
	// (redacted) and their stored Info, and the keys deleted. The slices
	// and values must not be modified. (The search index follows the
	// store through it.)
	Saved func(ctx context.Context, saved []backend.Entry, deleted []string)
	// Journal, when set, records every completed change (Set, Put,
	// Delete, Rename, SetAttr, Commit or Close of a written File) so that it
	// survives a crash of the process before the next Flush.
	Journal Journal
	// Transient lists the name patterns of files that live in the session
	// only (see IsTransient); nil means DefaultTransient, an empty
	// non-nil list persists every name.
	Transient []string
	// Derived are extended attributes computed from a file's key and
	// value at each flush, by name: Flush sets each on every entry it
	// saves for which its function returns ok, from the value as the
	// store gets it (redacted), and removes it from the others (a file
	// renamed to where it does not apply). The store gets them; the
	// session shows them once the save succeeded. The functions run
	// without the session's lock and must be safe for concurrent use.
	// contextpack.SkillAttr derives user.memfs.skill. nil derives none.
	Derived map[string]AttrFunc
	// OnConflict is what a flush does when another writer changed a key
	// since the session read it (see ConflictPolicy). The zero value,
	// KeepBeside, leaves it to the store (the other writer's version
	// kept beside the key); any other policy needs a store that is a
	// backend.Batcher and a backend.Versioned (New checks; a Context
	// made by NewContext fails every Flush otherwise), and makes every
	// flush state the version each save and delete replaces
	// (Batch.FailOnConflict) and resolve what it meets. Under Merge the
	// session keeps the value each written regular file was loaded from
	// (or last saved as) until the next flush: up to one more copy of
	// every file written since its load.
	OnConflict ConflictPolicy
	// Agent names the copies the session keeps of its own versions under
	// KeepBoth (backend.ConflictKeyBy); "" gives ConflictKey's names.
	Agent string
	// MaxMemory bounds the bytes of values the session holds (budget.go):
	// past it, clean values no File holds open are dropped, least
	// recently opened first, and load again when next opened; values
	// with unflushed changes are never dropped. 0 (or less) is no bound.
	MaxMemory int64
	// Pressure, when set, is called (without the session's lock, and
	// must not block) when MaxMemory is passed by values with unflushed
	// changes that no File holds open: a Flush would let them go. A
	// mount flushes.
	Pressure func()
	// Quota, when set, bounds what prefixes hold (quota.Tracker): a
	// write, truncate, create, put or link that would pass a limit
	// fails with its error (EDQUOT, EFBIG), and a rename between
	// prefixes of different limits with ErrCrossDevice. What a replay
	// or another writer brings in is never refused.
	Quota Quota
	// Routes, when set, are the routes of a namespace that several stores
	// serve (route.Table): every change is checked against them
	// (Routes.Refuse: a read-only route, a route's own directory), a
	// rename or a hard link too (Routes.Move: none between two routes),
	// and the keys of a working route (Routes.Ephemeral) are never
	// journaled: their values reach no disk.
	Routes Routes
	// Released, when set, is told (without the session's lock; it must
	// not block) how many bytes of values the session let go at once:
	// clean values dropped under MaxMemory, the old array of a value
	// that grew by a copy. They are garbage from then on, but the Go
	// runtime hands them back to the system only after its next
	// collection (a mount asks for one when it is large).
	Released func(bytes int64)
}

// AttrFunc computes a derived attribute (see Options.Derived) of the file
// key from its value; ok false means the file has none.
type AttrFunc func(key string, value []byte) (attr []byte, ok bool)

// file is one file known to the session. Its identity survives renames: an
// open File points at it, and key follows it.
type file struct {
	// Fields are ordered to pack: 100,000 indexed keys hold 100,000 of
	// these (a size class of 208 bytes; TestFileRecordSize).
	key    string // current key; "" once removed
	ino    uint64
	size   int64
	mtime  int64 // unix nanoseconds
	atime  int64
	ctime  int64
	mode   fs.FileMode // node type, special bits and permissions (backend.ModeMask)
	uid    uint32
	gid    uint32
	shared atomic.Bool // data is referenced outside the lock: copy before writing in place
	rdev   uint64      // device number of a device node
	link   *linkGroup  // the node's names when it has more than one
	data   []byte      // the value when loaded; a symlink's target
	gen    uint64      // generation of the latest unflushed change; 0 when clean
	xattrs xattrList   // replaced on change, never modified in place
	// from is the key under which the store holds this file's last
	// flushed version, "" if it holds none: a flush with from != key
	// is a rename.
	from string
	by   *meta.WriterInfo // who made the latest unflushed change; nil: Options.Self
	// jlen is how much of the value the store and the journal already
	// hold as it is now; unless jfull, every change since touched only
	// bytes after jlen, so the journal may record just those (an append
	// record: cheap for a file that only grows, such as a log of
	// summaries).
	jlen int64
	// base is the version of the store's copy under from, as the session
	// last saw it (listed, loaded, written or applied from outside): what
	// a flush expects to replace when the store can check (Versioned).
	base backend.Version
	// ver is bumped when content changes by any path but a File write
	// (32 bits: beside the flags it packs the record; a wrap after 2^32
	// such changes costs at most one stale kernel cache reuse).
	ver     uint32
	used    atomic.Uint32 // budget.tick when last opened: least recently opened values go first
	open    atomic.Int32  // Files holding the value open (pinned: never dropped)
	loaded  bool
	changed bool // the value changed since the last flush
	jfull   bool
}

type dir struct {
	key      string // current key; "" is the root
	ino      uint64
	mode     fs.FileMode // permissions and special bits; the type is implied
	uid, gid uint32
	mtime    int64
	atime    int64
	ctime    int64
	xattrs   xattrList
	children map[string]struct{} // names of files and directories directly inside
	subdirs  int                 // how many of them are directories: its link count is 2 + subdirs
	// gen is the generation of the latest unflushed change of the
	// directory's own attributes (in Context.mu.pending.ddirty); 0 when clean.
	gen uint64
	// base is the version of the store's entry of the directory under
	// key, as the session last listed or saved it; zero when the store
	// holds none (an implied or a new directory). A file made where the
	// directory was removed replaces that version, not another writer's.
	base backend.Version
	// battrs are base's own attributes (its mode, owner, attributes): the
	// base of a merge with another writer's change of them (mergeDirLocked).
	battrs dirAttrs
}

// linkGroup is the set of names of a node with hard links. id names the
// group in the store (backend.Info.Link).
type linkGroup struct {
	id    string
	names []string // every key of the node, f.key included
	// fresh are the names the store holds none of the node's versions
	// under (linked or renamed to since the last flush): a delete of one
	// expects it absent.
	fresh map[string]bool
}

// storedUnder reports whether the store holds a version of f, a node with
// several names, under key.
func (f *file) storedUnder(key string) bool {
	return f.from != "" && f.link != nil && len(f.link.names) > 1 && !f.link.fresh[key]
}

// Context is the session cache over one store. See the package doc.
type Context struct {
	store     backend.Store    // immutable after NewContext
	keyLimit  backend.KeyLimit // the store's, immutable after NewContext
	opts      Options          // immutable after NewContext
	transient transientSet     // Options.Transient, or the default
	log       *slog.Logger
	now       func() time.Time
	euid      uint32 // the process's effective uid (sameNode)
	// expirer is the writer of the removals Expire makes: Self, as
	// memfs-expire; its address marks their events.
	expirer *meta.WriterInfo

	flushMu sync.Mutex // serializes Flush; taken before mu

	ingested atomic.Int64 // values Resolve found a secret in (ingestload.go)

	// mu guards the session's state. One lock guards it all, as the
	// invariants span its parts (a dirty file is in the tree and in
	// pending; a flush's commit moves a key out of pending, conflict and
	// echo at once), but the parts are grouped by concern, as pebble
	// groups DB.mu, each in its own file with its own ...Locked methods.
	mu struct {
		sync.RWMutex
		tree     namespace     // tree.go: every file and directory
		pending  pendingState  // pending.go: what the next flush sends
		conflict conflictState // conflict.go: the versions flushes expect, conflict events, merge bases
		echo     echoes        // echo.go: the versions memfs wrote, to know them when they come back
		announce announcements // announce.go: the helper's changes announced and not taken
		watch    watchers      // watch.go: the Watch callbacks
		outbox   outbox        // events.go: the last flush's outcome, events to send again
		// damaged holds the keys whose stored value did not load
		// (damaged, or unreadable where the store keeps it), with the
		// error, until a load of one succeeds (see Stats.Damaged).
		damaged map[string]error
		mem     budget // the memory budget (budget.go)
	}

	// replaying lets Replay change a read-only Context: a crashed
	// session's journal is shown by a read-only mount, never flushed.
	replaying atomic.Bool
	// replayedThrough is the last generation Replay gave a change: the
	// events of changes at or below it are Event.Replayed.
	replayedThrough atomic.Uint64

	policyErr error // checkPolicy's verdict on Options.OnConflict; immutable

	views views // immutable after NewContext

	loggedMu sync.Mutex          // guards logged; never held with mu
	logged   map[uint64]struct{} // hashes of the secrets already logged (logFindings)
}

// NewContext returns an empty session over store. Call Bootstrap to index
// the store.
func NewContext(store backend.Store, opts Options) *Context {
	c := &Context{
		store:    store,
		keyLimit: backend.KeyLimitOf(store),
		opts:     opts,
		euid:     uint32(os.Geteuid()),
		log:      opts.Logger,
		now:      opts.Now,
	}
	c.expirer = &meta.WriterInfo{Comm: "memfs-expire"}
	if opts.Self != nil {
		c.expirer = &meta.WriterInfo{UID: opts.Self.UID, PID: opts.Self.PID, Comm: "memfs-expire", Agent: opts.Self.Agent}
	}
	c.mu.tree = namespace{files: make(map[string]*file), dirs: make(map[string]*dir)}
	c.mu.pending = pendingState{dirty: make(map[*file]struct{}), ddirty: make(map[*dir]struct{}),
		removed: make(map[string]uint64), gone: make(map[string]*meta.WriterInfo)}
	c.mu.conflict.bases = make(map[string]backend.Version)
	c.mu.echo.written = make(map[string][]stamp)
	c.mu.announce = announcements{creates: make(map[string]announcedCreate),
		removes: make(map[string]announcedRemove), attrs: make(map[string]announcedRemove)}
	c.mu.watch.fns = make(map[int]func(Change))
	c.mu.damaged = make(map[string]error)
	c.initViews()
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	patterns := opts.Transient
	if patterns == nil {
		patterns = DefaultTransient
	}
	c.transient = compileTransient(patterns)
	if c.now == nil {
		c.now = time.Now
	}
	if c.opts.DirMode == 0 {
		c.opts.DirMode = 0o755
	}
	c.mu.tree.dirs[""] = c.newDirLocked("", c.now().UnixNano())
	c.policyErr = checkPolicy(store, opts.OnConflict)
	c.mu.mem.max = max(opts.MaxMemory, 0)
	c.mu.mem.room = c.mu.mem.max
	if c.opts.OnConflict == Merge {
		c.mu.conflict.mergeBase = make(map[*file]mergeBase)
	}
	return c
}

// Store returns the store under the session.
func (c *Context) Store() backend.Store { return c.store }

func (c *Context) newDirLocked(key string, mtime int64) *dir {
	return &dir{key: key, ino: c.mu.tree.nextInoLocked(), mode: c.opts.DirMode, uid: c.opts.DirUID, gid: c.opts.DirGID,
		mtime: mtime, atime: mtime, ctime: mtime, children: make(map[string]struct{})}
}

// touchDirLocked records a change of directory d's entries at now: its
// mtime and ctime move, and its entry is saved at the next flush.
func (c *Context) touchDirLocked(d *dir, now int64) {
	d.mtime, d.ctime = now, now
	c.markDirDirtyLocked(d)
}

// markDirDirtyLocked schedules directory d's entry for the next flush.
func (c *Context) markDirDirtyLocked(d *dir) {
	if c.readOnlyRoute(d.key) {
		return // what it holds is its store's: the owner changed it
	}
	d.gen = c.mu.pending.nextGenLocked()
	c.mu.pending.ddirty[d] = struct{}{}
}

func (d *dir) infoLocked() backend.Info {
	return backend.Info{MTime: time.Unix(0, d.mtime), ATime: time.Unix(0, d.atime), CTime: time.Unix(0, d.ctime),
		Mode: fs.ModeDir | backend.PermBits(d.mode), UID: d.uid, GID: d.gid, XAttrs: d.xattrs.toMap()}
}

// Bootstrap lists the store once, indexes every key with its Info, and
// loads the values of keys under the given prefixes ("" loads everything;
// a prefix such as "memory/" is matched against the key). Keys already
// known to the session keep their session state. A store that can walk
// (backend.Walker) is indexed as it is read, so the whole listing is never
// held; when the walk fails, what it indexed before stays indexed. A
// value that does not load, and a key the store reports damaged, are that
// key's failure (Damaged), never Bootstrap's.
func (c *Context) Bootstrap(ctx context.Context, prefixes ...string) error {
	var load []string
	links := make(map[string]*file) // hard-link group -> its node
	err := backend.Walk(ctx, c.store, func(batch []backend.Entry) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, e := range batch {
			if c.indexLocked(e, links) && matchPrefix(e.Key, prefixes) {
				load = append(load, e.Key)
			}
		}
		return nil
	})
	if err != nil {
		return wrapf("bootstrap: %w", err)
	}
	c.loadRoot(ctx)
	c.mu.Lock()
	c.indexDamagedLocked(links)
	c.mu.Unlock()
	defer c.trimNow() // more values than the budget holds: the first ones go
	// A value that cannot be loaded is that key's failure, not the
	// mount's: resolve noted it (Damaged), and a read of it fails.
	_, err = c.resolve(ctx, load)
	return err
}

// indexLocked enters a listed entry in the session, unless the session
// knows its key already or the key is session-only, and reports whether
// it is a node with a value still to load. links maps the hard-link groups
// indexed so far to their node.
func (c *Context) indexLocked(e backend.Entry, links map[string]*file) bool {
	if _, ok := c.mu.tree.files[e.Key]; ok {
		return false
	}
	if _, ok := c.mu.pending.removed[e.Key]; ok {
		return false
	}
	if c.Local(e.Key) {
		return false // a session-only name some other program stored
	}
	if c.checkName("bootstrap", e.Key) != nil {
		// Another program stored a name with a secret: it stays in the
		// store as it is, and out of the session, so that it reaches no
		// event, index or record (as an external change of it does).
		return false
	}
	parent, err := c.mkdirAllLocked(parentOf(e.Key), e.Info.MTime.UnixNano(), false)
	if err != nil {
		c.log.Warn("bootstrap: key skipped", "key", e.Key, "err", err)
		return false
	}
	if e.Info.Mode.IsDir() {
		d, err := c.mkdirAllLocked(e.Key, e.Info.MTime.UnixNano(), false)
		if err != nil {
			c.log.Warn("bootstrap: directory skipped", "key", e.Key, "err", err)
			return false
		}
		d.setInfo(e.Info)
		d.setBase(e.Info)
		return false
	}
	if _, isDir := c.mu.tree.dirs[e.Key]; isDir {
		c.log.Warn("bootstrap: key is also a directory; skipped", "key", e.Key)
		return false
	}
	var f *file
	if e.Info.Link != "" {
		f = links[e.Info.Link]
	}
	toLoad := false
	if f != nil {
		// Another name of a node already indexed.
		f.link.names = append(f.link.names, e.Key)
	} else {
		f = &file{key: e.Key, ino: c.mu.tree.nextInoLocked(), size: e.Info.Size, mtime: e.Info.MTime.UnixNano(),
			atime: timeOr(e.Info.ATime, e.Info.MTime), ctime: timeOr(e.Info.CTime, e.Info.MTime),
			mode: e.Info.Mode & backend.ModeMask, uid: e.Info.UID, gid: e.Info.GID, rdev: e.Info.Rdev,
			xattrs: toXAttrList(e.Info.XAttrs), from: e.Key, jlen: e.Info.Size,
			base: backend.VersionOf(e.Info)}
		if !f.hasValue() {
			f.loaded = true // nothing to load: a fifo, socket or device
		}
		if e.Info.Link != "" {
			f.link = &linkGroup{id: e.Info.Link, names: []string{e.Key}}
			links[e.Info.Link] = f
		}
		toLoad = !f.loaded
	}
	c.mu.tree.files[e.Key] = f
	_, name := backend.Split(e.Key)
	parent.children[name] = struct{}{}
	return toLoad
}

func matchPrefix(key string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

func parentOf(key string) string {
	d, _ := backend.Split(key)
	return d
}

// mkdirAllLocked makes sure directory key and its ancestors exist, and
// returns it. It fails with ErrNotDir when a component is a file.
// With persist, the directories it makes are saved at the next flush (a
// bootstrap indexes implied directories of an older store, which stay
// implied until they change).
func (c *Context) mkdirAllLocked(key string, mtime int64, persist bool) (*dir, error) {
	if d, ok := c.mu.tree.dirs[key]; ok {
		return d, nil
	}
	if _, ok := c.mu.tree.files[key]; ok {
		return nil, pathErr("mkdir", key, ErrNotDir)
	}
	parent, err := c.mkdirAllLocked(parentOf(key), mtime, persist)
	if err != nil {
		return nil, err
	}
	d := c.newDirLocked(key, mtime)
	c.mu.tree.dirs[key] = d
	if persist {
		c.markDirDirtyLocked(d)
	}
	_, name := backend.Split(key)
	parent.children[name] = struct{}{}
	parent.subdirs++
	return d, nil
}

// setInfo gives d the attributes of a stored directory entry.
func (d *dir) setInfo(info backend.Info) {
	d.mode = backend.PermBits(info.Mode)
	d.uid, d.gid = info.UID, info.GID
	d.mtime = info.MTime.UnixNano()
	d.atime = timeOr(info.ATime, info.MTime)
	d.ctime = timeOr(info.CTime, info.MTime)
	d.xattrs = toXAttrList(info.XAttrs)
}

// timeOr is t in Unix nanoseconds, or def's when t is zero.
func timeOr(t, def time.Time) int64 {
	if t.IsZero() {
		return def.UnixNano()
	}
	return t.UnixNano()
}

// hasValue reports whether the node keeps a value: a regular file's
// content or a symlink's target.
func (f *file) hasValue() bool {
	return f.mode.IsRegular() || f.mode&fs.ModeSymlink != 0
}

// parentLocked returns the existing parent directory of key.
func (c *Context) parentLocked(op, key string) (*dir, error) {
	p := parentOf(key)
	if d, ok := c.mu.tree.dirs[p]; ok {
		return d, nil
	}
	// Report ENOTDIR when some ancestor is a file, ENOENT otherwise.
	for k := p; k != ""; k = parentOf(k) {
		if _, ok := c.mu.tree.files[k]; ok {
			return nil, pathErr(op, key, ErrNotDir)
		}
	}
	return nil, notExist(op, p)
}

// Resolve loads the values of keys that are indexed but not loaded. Keys
// already loaded cost nothing; a key the session does not know fails with
// fs.ErrNotExist. A key whose own load fails (its value damaged or
// unreadable, noted for Damaged; or gone from the store since it was
// listed) fails Resolve with that error once the others are loaded.
// Store I/O runs without the lock held.
func (c *Context) Resolve(ctx context.Context, keys ...string) error {
	failed, err := c.resolve(ctx, keys)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err, ok := failed[k]; ok {
			return wrapf("resolve: %w", err)
		}
	}
	return nil
}

// resolve is Resolve, which also returns the keys whose own load failed
// (backend.KeyLocal: gone, or damaged) with their errors; the others are
// loaded. err is the store's failure, or a key the session does not know.
func (c *Context) resolve(ctx context.Context, keys []string) (failed map[string]error, err error) {
	c.mu.RLock()
	var need []string
	var which []*file
	for _, k := range keys {
		f, ok := c.mu.tree.files[k]
		if !ok {
			c.mu.RUnlock()
			if err := backend.ValidateKey(k); err != nil {
				return nil, err
			}
			return nil, notExist("resolve", k)
		}
		if !f.loaded {
			need = append(need, k)
			which = append(which, f)
		}
	}
	c.mu.RUnlock()
	if len(need) == 0 {
		return nil, nil
	}
	const chunk = 512 // bound the memory of one Load call
	for start := 0; start < len(need); start += chunk {
		end := min(start+chunk, len(need))
		got, bad, err := backend.LoadEach(ctx, c.store, need[start:end]...)
		if err != nil {
			return failed, wrapf("resolve: %w", err)
		}
		secret := c.sealLoaded(got) // see ingestload.go
		var resized []string
		c.mu.Lock()
		found := c.noteFailedLocked(bad)
		i := start
		for j, e := range got {
			for _, skip := bad[need[i]]; skip; _, skip = bad[need[i]] {
				i++ // a key LoadEach left out
			}
			f := which[i]
			i++
			delete(c.mu.damaged, e.Key)
			// The file may have been written, truncated or renamed
			// while we were loading: a loaded or dirty file is newer.
			if f.loaded || f.gen != 0 {
				continue
			}
			f.data = e.Value
			f.loaded = true
			c.grewLocked(int64(cap(e.Value))) // Open trims, after pinning what it opens
			c.touchRLocked(f)                 // the last to go: a rename waits for it
			f.size = int64(len(e.Value))
			f.jlen, f.jfull = f.size, false // as the store holds it
			f.base = backend.VersionOf(e.Info)
			if slices.Contains(secret, j) { // secret indexes got
				c.ingested.Add(1)
				resized = append(resized, e.Key)
				if !c.opts.ReadOnly && !c.readOnlyRoute(e.Key) { // else held sealed, in memory only
					w := c.ingestWriter()
					f.changed, f.by, f.jfull = true, &w, true
					c.markDirtyLocked(f)
				}
			}
			c.keepMergeBaseLocked(f, f.shareRLocked(), f.xattrs, f.mode)
		}
		c.mu.Unlock()
		c.logDamaged(found)
		for k, err := range bad {
			if failed == nil {
				failed = make(map[string]error)
			}
			failed[k] = err
		}
		for _, k := range resized {
			// The kernel has the store's size: the sealed value's
			// differs.
			c.emit(Change{Op: OpContent, Key: k, Origin: OriginExternal})
		}
	}
	return failed, nil
}

// Get returns the cached value of key. It never does I/O: an unknown key, or
// a known key whose value is not loaded yet, gives nil, false. The caller
// must not modify the returned slice; later writes to the key do not change
// it.
func (c *Context) Get(key string) ([]byte, bool) {
	c.mu.RLock()
	f, ok := c.mu.tree.files[key]
	if !ok || !f.loaded {
		c.mu.RUnlock()
		return nil, false
	}
	// Writers hold the exclusive lock, so marking under the read lock is
	// enough for the next write to copy rather than change data in place.
	data := f.shareRLocked()
	c.mu.RUnlock()
	return data, true
}

// Has reports whether key is a file the session knows, loaded or not.
func (c *Context) Has(key string) bool {
	c.mu.RLock()
	_, ok := c.mu.tree.files[key]
	c.mu.RUnlock()
	return ok
}

// Keys returns every file key, sorted.
func (c *Context) Keys() []string {
	c.mu.RLock()
	keys := make([]string, 0, len(c.mu.tree.files))
	for k := range c.mu.tree.files {
		keys = append(keys, k)
	}
	c.mu.RUnlock()
	slices.Sort(keys)
	return keys
}

// Entries returns the files whose key starts with prefix, sorted by key,
// with their Info and, when loaded, their value (which the caller must not
// modify). It scans every file under the read lock; for one key, Entry.
func (c *Context) Entries(prefix string) []backend.Entry {
	c.mu.RLock()
	var out []backend.Entry
	for k, f := range c.mu.tree.files {
		if strings.HasPrefix(k, prefix) {
			out = append(out, f.entryRLocked(k))
		}
	}
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Entry returns the file key with its Info and, when loaded, its value
// (which the caller must not modify), as Entries would; false when the
// session has no file key.
func (c *Context) Entry(key string) (backend.Entry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, ok := c.mu.tree.files[key]
	if !ok {
		return backend.Entry{}, false
	}
	return f.entryRLocked(key), true
}

// entryRLocked is f under its name key, value included when loaded. The
// read lock is enough: marking f shared is atomic, and writers, which hold
// the exclusive lock, copy a shared value before changing it.
func (f *file) entryRLocked(key string) backend.Entry {
	e := backend.Entry{Key: key, Info: f.infoLocked()}
	if f.loaded {
		e.Value = f.shareRLocked()
	}
	return e
}

// shareRLocked hands out f's value to be read outside the lock (a scan's
// caller, a flush's save, a journal record): it marks the value shared,
// so that the next writer copies before changing any of its bytes, and
// clips it at its length, so that an append by the holder copies rather
// than writing into the spare capacity, which the next append of f may
// fill in place (see growLocked). Every value that leaves the lock goes
// through here. The read lock is enough: the flag is atomic, and writers
// hold the exclusive lock.
func (f *file) shareRLocked() []byte {
	f.shared.Store(true)
	return f.data[:len(f.data):len(f.data)]
}

func (f *file) infoLocked() backend.Info {
	info := backend.Info{Size: f.size, MTime: time.Unix(0, f.mtime), ATime: time.Unix(0, f.atime), CTime: time.Unix(0, f.ctime),
		Mode: f.mode, UID: f.uid, GID: f.gid, Rdev: f.rdev}
	if f.mode.IsRegular() {
		// Linux keeps user.* attributes on files and directories only.
		info.XAttrs = f.xattrs.toMap()
	}
	if f.link != nil && len(f.link.names) > 1 {
		info.Link = f.link.id
	}
	return info
}

// Set stores value under key with default metadata for a new key (mode
// 0644, owner from Options.DirUID/DirGID) or the existing key's metadata,
// marks it dirty and undoes a pending deletion. The Context takes ownership
// of value: the caller must not modify it afterwards.
func (c *Context) Set(key string, value []byte) error {
	if err := c.creatable("set", key); err != nil {
		return err
	}
	if err := c.sizeAllowed("set", key, int64(len(value))); err != nil {
		return err
	}
	c.mu.Lock()
	f, created, err := c.createLocked("set", key, 0o644, c.opts.DirUID, c.opts.DirGID, false)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	due := c.grewLocked(int64(cap(value) - cap(f.data)))
	f.data = value
	f.loaded = true
	f.shared.Store(false)
	f.size = int64(len(value))
	f.mtime = c.now().UnixNano()
	f.ver++
	f.changed = true
	c.setWriterLocked(f, nil)
	c.markDirtyLocked(f)
	c.mu.Unlock()
	c.trim(due)
	c.emitWritten(key, created, OriginLocal)
	return c.journalKey(key)
}

func (c *Context) writable(op, key string) error {
	if c.opts.ReadOnly && !c.replaying.Load() {
		return pathErr(op, key, ErrReadOnly)
	}
	if err := backend.ValidateKey(key); err != nil {
		return err
	}
	return c.routeRefuses(op, key)
}

// routeRefuses is Routes.Refuse of a change (op) of key, logged with the
// route's error but not the key (a name is checked for secrets after
// this).
func (c *Context) routeRefuses(op, key string) error {
	if c.opts.Routes == nil {
		return nil
	}
	err := c.opts.Routes.Refuse(op, key)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			c.log.Warn("a change refused by the mount's routes", "op", op, "why", pe.Err)
		}
	}
	return err
}

// Quota bounds what prefixes hold (Options.Quota; quota.Tracker
// implements it).
type Quota interface {
	// Check returns the error of a change that makes the file key hold
	// size bytes (a new file when it has none), or nil.
	Check(key string, size int64) error
	// Moves reports whether a rename from a to b crosses limits.
	Moves(a, b string) bool
}

// sizeAllowed is the check of a change (op) that makes key's file hold
// size bytes: MaxFileSize, and the quota, but for what a replay or
// another writer brings in (acknowledged already).
func (c *Context) sizeAllowed(op, key string, size int64) error {
	if c.opts.MaxFileSize > 0 && size > c.opts.MaxFileSize {
		return pathErr(op, key, ErrTooLarge)
	}
	if c.opts.Quota == nil || key == "" || op == "external" || c.replaying.Load() {
		return nil
	}
	if err := c.opts.Quota.Check(key, size); err != nil {
		c.log.Warn("a write refused by a quota", "op", op, "key", key, "err", err)
		return pathErr(op, key, err)
	}
	return nil
}

// Routes are the routes of a namespace that several stores serve
// (Options.Routes; route.Table implements it).
type Routes interface {
	// Refuse returns the error of op, a change, on key, or nil.
	Refuse(op, key string) error
	// Move returns the error of a rename or link (op) from a to b, or
	// nil.
	Move(op, a, b string) error
	// Ephemeral reports whether key's value must reach no disk.
	Ephemeral(key string) bool
	// ReadOnly reports whether key is in a read-only route: its
	// changes are refused, and what the session holds of it is always
	// what its store holds (another writer's changes), never dirty.
	ReadOnly(key string) bool
}

// readOnlyRoute reports whether key is in a read-only route.
func (c *Context) readOnlyRoute(key string) bool {
	return c.opts.Routes != nil && key != "" && c.opts.Routes.ReadOnly(key)
}

// changeable is the check of a change (op) through an open File of key
// ("" when it has no name): a read-only session, a route that refuses it.
func (c *Context) changeable(op, key string) error {
	if c.opts.ReadOnly {
		return pathErr(op, key, ErrReadOnly)
	}
	if key == "" {
		return nil
	}
	return c.routeRefuses(op, key)
}

// unjournaled reports whether key's changes stay out of the journal: a
// local name's (never stored), a working route's (never on a disk).
func (c *Context) unjournaled(key string) bool {
	return c.Local(key) || (c.opts.Routes != nil && c.opts.Routes.Ephemeral(key))
}

// movable is the check of a rename or link (op) from a to b between
// routes.
func (c *Context) movable(op, a, b string) error {
	if c.opts.Quota != nil && c.opts.Quota.Moves(a, b) {
		return pathErr(op, b, ErrCrossDevice)
	}
	if c.opts.Routes == nil {
		return nil
	}
	return c.opts.Routes.Move(op, a, b)
}

// attrWritable is writable for a change of key's attributes, which the
// root ("") has too.
func (c *Context) attrWritable(op, key string) error {
	if key == "" && (!c.opts.ReadOnly || c.replaying.Load()) {
		return nil
	}
	return c.writable(op, key)
}

// creatable is writable for a change that may give key a new name: the
// name must not contain a secret, and the store must hold a key that long
// (its KeyLimit: refused now, with ENAMETOOLONG through a mount, rather
// than by every flush).
func (c *Context) creatable(op, key string) error {
	if err := c.writable(op, key); err != nil {
		return err
	}
	if err := c.keyLimit.Check(key); err != nil {
		return err
	}
	return c.checkName(op, key)
}

// createLocked returns the file at key, creating it (and its parent
// directories) when missing. With exclusive, an existing file is an error.
func (c *Context) createLocked(op, key string, mode fs.FileMode, uid, gid uint32, exclusive bool) (*file, bool, error) {
	if f, ok := c.mu.tree.files[key]; ok {
		if exclusive {
			return nil, false, exist(op, key)
		}
		return f, false, nil
	}
	if _, ok := c.mu.tree.dirs[key]; ok {
		return nil, false, pathErr(op, key, ErrIsDir)
	}
	if err := c.sizeAllowed(op, key, 0); err != nil {
		return nil, false, err // a file more than the quota allows
	}
	now := c.now().UnixNano()
	parent, err := c.mkdirAllLocked(parentOf(key), now, true)
	if err != nil {
		return nil, false, pathErr(op, key, ErrNotDir)
	}
	f := &file{key: key, ino: c.mu.tree.nextInoLocked(), mtime: now, atime: now, ctime: now, mode: mode & backend.ModeMask, uid: uid, gid: gid, loaded: true,
		xattrs: xattrList{{name: meta.Created, value: []byte(meta.FormatTime(time.Unix(0, now)))}}}
	c.mu.tree.files[key] = f
	_, name := backend.Split(key)
	parent.children[name] = struct{}{}
	c.touchDirLocked(parent, now)
	delete(c.mu.pending.removed, key)
	return f, true, nil
}

func (c *Context) markDirtyLocked(f *file) {
	if c.readOnlyRoute(f.key) {
		return // what it holds is its store's: the owner changed it
	}
	f.gen = c.mu.pending.nextGenLocked()
	f.ctime = c.now().UnixNano()
	if f.key != "" {
		c.mu.pending.dirty[f] = struct{}{}
		// Every name the node has is saved, none deleted: a name that
		// had been removed (a file unlinked there before) is taken
		// again, by whichever name of the node.
		for _, k := range f.names() {
			delete(c.mu.pending.removed, k)
		}
	}
}

// removeNameLocked takes the name key of f out of the namespace; the node
// goes with its last name.
func (c *Context) removeNameLocked(f *file, key string, by *meta.WriterInfo) {
	if c.unlinkNameLocked(f, key) {
		return
	}
	c.expectVacatedLocked(f, key)
	f.link = nil
	f.jfull = true
	if f.from != "" {
		if by == nil {
			by = c.opts.Self
		}
		c.mu.pending.gone[f.from] = by
		c.mu.conflict.bases[f.from] = f.base
		c.keepReplacedLocked(f, f.from)
		f.from = ""
	}
	delete(c.mu.conflict.mergeBase, f)
	if f.gen == 0 {
		// The store holds this version until the next flush deletes it:
		// seen again by an external watcher, it is no external change.
		// The stamp has the stored version's ctime (0, unknown, matches
		// any), so that the same node restored there by another writer
		// is no echo.
		st := f.stampLocked()
		st.ctime = f.base.CTime
		c.mu.echo.addLocked(key, st)
	}
	delete(c.mu.tree.files, key)
	if parent, ok := c.mu.tree.dirs[parentOf(key)]; ok {
		_, name := backend.Split(key)
		delete(parent.children, name)
		c.touchDirLocked(parent, c.now().UnixNano())
	}
	delete(c.mu.pending.dirty, f)
	f.key = ""
	c.mu.pending.removeLocked(key)
}

// expectVacatedLocked records that key, a name f leaves, holds none of
// f's versions in the store (f was never stored under it): the delete of
// key expects it absent, so that it never removes what another writer
// saved there meanwhile (a conflict instead). The key f is stored under
// (from), and any name of a stored node with several names, hold its
// version: their deletes expect that. So does the key another file was
// renamed away from since the last flush: the store holds that file's
// copy there until the flush, and what the next file made at key
// replaces is that copy, not nothing.
func (c *Context) expectVacatedLocked(f *file, key string) {
	if key == f.from || f.storedUnder(key) {
		return
	}
	if c.opts.OnConflict == KeepBeside && !c.conditionalDeletes() {
		return
	}
	if _, ok := c.mu.conflict.bases[key]; !ok {
		c.mu.conflict.bases[key] = c.movedFromLocked(key)
	}
}

// movedFromLocked is the version the store holds at key of a file renamed
// away from key since it was last saved (planLocked's moved); none when
// there is no such file. A renamed file is dirty until a flush saves it
// under its new key.
func (c *Context) movedFromLocked(key string) backend.Version {
	for g := range c.mu.pending.dirty {
		if g.from == key && g.key != key {
			return g.base
		}
	}
	return backend.Version{}
}

// Delete removes the file key from the session and marks it for deletion
// from the store at the next Flush. A missing key gives fs.ErrNotExist; a
// directory gives ErrIsDir (use Rmdir).
func (c *Context) Delete(key string) error { return c.DeleteBy(key, nil) }

// DeleteBy is Delete, attributed to by (nil: Options.Self).
func (c *Context) DeleteBy(key string, by *meta.WriterInfo) error {
	_, err := c.removeIf(key, by, nil)
	return err
}

// Expire removes the file key, as Delete does, when it has expired by
// now: deadline says when, from its last change (the later of its
// modification and change times) and its attributes (ok false: never). They are read under the session's lock with the
// removal, so a write that renewed the file meanwhile keeps it. The
// removal's event says why (Event.Reason, ReasonExpire). It reports
// whether it removed the file.
func (c *Context) Expire(key string, now time.Time, deadline Deadline) (bool, error) {
	return c.removeIf(key, c.expirer, func(f *file) bool {
		at, ok := deadline(time.Unix(0, max(f.mtime, f.ctime)), f.xattrs.toMap())
		return ok && !at.After(now)
	})
}

// Deadline is when a file expires (package expire), from its last change
// (the later of its mtime and ctime) and its attributes; ok is false for
// a file that does not.
type Deadline func(changed time.Time, x map[string][]byte) (at time.Time, ok bool)

// ReasonExpire is Event.Reason of the removal of a file that expired
// (Context.Expire).
const ReasonExpire = "expire"

// removeIf is DeleteBy, when cond (nil: always) holds of the file under
// the session's lock; it reports whether it removed the file.
func (c *Context) removeIf(key string, by *meta.WriterInfo, cond func(*file) bool) (bool, error) {
	if err := c.writable("delete", key); err != nil {
		return false, err
	}
	c.mu.Lock()
	f, ok := c.mu.tree.files[key]
	if !ok {
		_, isDir := c.mu.tree.dirs[key]
		c.mu.Unlock()
		if isDir {
			return false, pathErr("delete", key, ErrIsDir)
		}
		return false, notExist("delete", key)
	}
	if cond != nil && !cond(f) {
		c.mu.Unlock()
		return false, nil
	}
	linked := f.link != nil && len(f.link.names) > 1 && f.loaded
	c.removeNameLocked(f, key, by)
	gen := c.mu.pending.gen
	c.mu.Unlock()
	origin := OriginLocal
	if by == c.expirer {
		origin = OriginSelf
	}
	c.emit(Change{Op: OpRemove, Key: key, Origin: origin})
	if err := c.journal(gen, nil, []string{key}); err != nil {
		return true, err
	}
	if linked {
		// The other names' link count and ctime.
		if err := c.journalNames(f); err != nil {
			return true, err
		}
	}
	return true, c.journalDir(gen, parentOf(key))
}

// put stores e with its own metadata, as a completed change (from
// origin: through the session, or behind the kernel).
func (c *Context) put(e backend.Entry, origin Origin) error {
	if e.Info.Mode.IsDir() {
		return c.putDir(e)
	}
	if err := c.creatable("put", e.Key); err != nil {
		return err
	}
	if err := c.sizeAllowed("put", e.Key, int64(len(e.Value))); err != nil {
		return err
	}
	c.mu.Lock()
	if f, ok := c.mu.tree.files[e.Key]; ok && f.link != nil && len(f.link.names) > 1 && f.link.id != e.Info.Link {
		// The name is one of a node's several, and e is not that node:
		// the name leaves the group (the others keep their value).
		c.unlinkNameLocked(f, e.Key)
	}
	var f *file
	var created bool
	if e.Info.Link != "" {
		// Another name of a node the session has under other names: e
		// holds that node's value and attributes, which it takes.
		if f = c.joinGroupLocked(e.Key, e.Info.Link); f != nil {
			created = true
		}
	}
	if f == nil {
		var err error
		if f, created, err = c.createLocked("put", e.Key, e.Info.Mode, e.Info.UID, e.Info.GID, false); err != nil {
			c.mu.Unlock()
			return err
		}
	}
	f.data, f.loaded, f.size = e.Value, true, int64(len(e.Value))
	f.shared.Store(false)
	f.mode, f.uid, f.gid, f.rdev = e.Info.Mode&backend.ModeMask, e.Info.UID, e.Info.GID, e.Info.Rdev
	f.mtime = e.Info.MTime.UnixNano()
	if e.Info.MTime.IsZero() {
		f.mtime = c.now().UnixNano()
	}
	// The entry's attributes replace the file's, except that a file keeps
	// its creation time when the entry has none.
	x := toXAttrList(backend.CloneXAttrs(e.Info.XAttrs))
	if created, ok := f.xattrs.get(meta.Created); ok {
		if _, has := x.get(meta.Created); !has {
			x = x.with(meta.Created, created)
		}
	}
	f.xattrs = x
	if _, ok := x.get(meta.Writer); !ok {
		c.setWriterLocked(f, nil)
	} else {
		f.by = nil
	}
	f.changed = true
	f.ver++
	if e.Info.Link != "" && f.link == nil {
		f.link = &linkGroup{id: e.Info.Link, names: []string{e.Key}}
	}
	c.markDirtyLocked(f)
	f.atime = timeOr(e.Info.ATime, time.Unix(0, f.mtime))
	if !e.Info.CTime.IsZero() {
		f.ctime = e.Info.CTime.UnixNano()
	}
	c.mu.Unlock()
	c.emitWritten(e.Key, created, origin)
	return nil
}

// Put stores entry e with its metadata (mode, owner, mtime), marks it
// dirty and records it in the journal. The Context takes ownership of
// e.Value.
func (c *Context) Put(e backend.Entry) error {
	if err := c.put(e, OriginLocal); err != nil {
		return err
	}
	return c.journalKey(e.Key)
}
