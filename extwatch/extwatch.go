// Package extwatch brings changes that other programs make in a store (an
// editor on a directory store, a git pull, a sync tool) into a running
// session, and through it to the mount. It holds both ends of the helper
// protocol that shows those changes to watchers on the mount.
//
// A Watcher follows the store's change feed (backend.Watcher: the
// directory store's is its fsnotify watch; a store that is no Watcher
// cannot be followed). Changes are debounced per key: a key is processed
// once it has been quiet for Options.Debounce, and re-read if it changed
// while it was read, so a file written in several steps is never served
// half-written. Then:
//
//   - memfs's own flushes coming back (the whole node as the session
//     wrote or holds it: size, mtime, mode, owner, attributes; see
//     session.External.Echo) are ignored;
//   - a new or changed file or symlink becomes the session's value, clean
//     (the store has it), a change of its mode, owner or attributes
//     alone included; a new or changed directory likewise
//     (session.External.ApplyDir: a new one moves the mtime of the
//     directory it appears in, so that the kernel's cached listing of
//     it goes), the directories above a key that the session lacks
//     first, from the top; a removed file leaves the
//     session, and a removed directory every key the session holds under
//     it;
//   - a change of the metadata alone of a key that is dirty in the
//     session is merged into it (session.External.MergeMeta: the
//     most restrictive mode wins), logged, and no conflict;
//   - any other change to a key that is dirty in the session is a conflict: the
//     session's value stays under the key, and the external value is kept
//     beside it under session.ConflictKey and saved at the next flush
//     (session.External.Apply, which makes their version the one
//     the flush replaces). A removal of a dirty key keeps the session's
//     value; a change of a key removed in the session and not flushed
//     brings it back (an edit wins over a removal). Nothing is lost, and
//     a conflict never blocks a flush.
//
// Names that live in the session only (session.Context.Local: memfs's
// reserved names, an editor's swap files) are ignored.
//
// # The helper protocol
//
// Changes applied to the session reach the mount, but behind the kernel:
// watchers on the mount get no inotify event for them (on every FUSE
// filesystem), and the serving process must never touch its own mount, or
// it can deadlock. So, with an Applier (a Helper: a process started with
// StartHelper that runs RunHelper on the mountpoint), creations, removals
// and modifications are carried out through the mountpoint:
//
//   - a new file is announced in the session with its whole value
//     (session.Context.AnnounceCreate), then the helper creates it with
//     O_CREAT|O_EXCL and the mount, recognising the announcement, makes
//     it appear with that value at once;
//   - a removal is announced (AnnounceRemove), then the helper unlinks it;
//   - a modification is applied to the session, then the helper touches
//     the file (a fallocate that keeps its size: IN_MODIFY, no change);
//   - a change of a file's or directory's mode, owner or attributes is
//     applied to the session and announced (AnnounceAttr), then the
//     helper sets session.AttrSignal on it, which the mount takes for the
//     announcement and changes nothing for (IN_ATTRIB, no change);
//   - a new directory is announced (session.External.AnnounceMkdir:
//     the directories above a key first, from the top, before the key's
//     own create), then the helper makes it, and the mount, recognising
//     the announcement (session.External.MkdirAnnounced), makes it
//     appear as the store has it (IN_CREATE), in a read-only route too.
//
// When the helper cannot take a change (a send fails: the process died),
// the Watcher says so once, gives the helper up and applies every change
// it had sent and the mount did not take, and every later one, to the
// session directly, as without an Applier: watchers see no event, but the
// mount never misses a change. The same holds when the helper's process
// exits (Helper.Exited), and for one change whose announcement was not
// taken within session.AnnounceTTL (the helper's request failed): a
// create is then applied directly and, the helper still there, touched
// through it, so that watchers see it (IN_MODIFY); a removal stays
// without an event.
//
// # Redaction on ingest
//
// A value read from the store goes through session.External.Ingest before
// anything else sees it: the session, the helper, the mount, the search
// index and the event log only ever get it redacted. When Ingest finds a
// secret, the store's copy is rewritten at once, redacted, with the same
// mode, owner and attributes, atomically (a temp file renamed over
// it, as memfs's flushes do); the session is told first (Rewriting), so
// that the watcher takes the rewrite for memfs's own write and does not
// loop, and the event log records it (a write by agent
// session.IngestAgent). One log line per finding names the key and the
// rule, never the secret. A file whose name holds a secret is not taken
// in (a log line names the rule); it stays in the store as it is.
//
// The rewrite cannot know whether the other program still has the file
// open: if it writes on after the rename, its writes go to the old,
// unlinked file and are lost to the store (and if it renames its own
// temp file over the key later, that version is ingested in turn). The
// key is looked at again just before the rename, and a change seen then
// postpones the rewrite until the file settles, which narrows the window
// but cannot close it. If the rewrite fails, the redacted value enters the
// session unflushed, so that the next flush writes it.
//
// # Concurrency
//
// Start starts three goroutines: one takes the store's change feed, one
// (the worker) processes the keys that are due, and one reconciles the
// session with the store once. A Change{Lost: true} (an overflow) starts
// another reconcile, which runs beside the worker. Keys are processed one
// at a time, on the worker: the Applier's methods are called from it
// alone, never concurrently, with no lock of the Watcher held, and the
// worker waits for each; the announcements sent and the fallback are the
// worker's too. The session calls its watchers on the worker, for the
// changes it applies. The Store and the session must be safe for
// concurrent use (a reconcile lists the store and reads the session while
// the worker stats, loads and saves keys); the Logger is called from every
// goroutine.
//
// Close cancels the goroutines and the feed, and waits for them all (the
// feed's goroutine closes its channel as it ends), the key being processed
// included (and the Applier call it is in); the worker applies, before it
// ends, what the Applier was sent and the mount did not take. Close must
// therefore not be called from anything the Watcher's goroutines call: an
// Applier method, the Logger, or a session watch callback. Close may be
// called more than once.
//
// A Helper's methods are safe for concurrent use (one mutex serializes
// the writes on the pipe). StartHelper starts one goroutine, which waits
// for the process and closes Exited; Close ends the process's input and
// waits for it. RunHelper runs on the caller's goroutine.
package extwatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/session"
)

// Store is the store being watched: its change feed (backend.Watcher),
// and the reads that bring a change in. Save is used only to rewrite,
// redacted, a file in which another program wrote a secret.
type Store interface {
	backend.Watcher
	Stat(ctx context.Context, key string) (backend.Info, error)
	Load(ctx context.Context, keys ...string) ([]backend.Entry, error)
	List(ctx context.Context) ([]backend.Entry, error)
	Save(ctx context.Context, entries ...backend.Entry) error
}

// Applier carries an external change out through the mountpoint, in a
// process other than memfs's, so that the kernel emits inotify events (a
// Helper). A create or removal is announced in the session before it is
// sent. An error says the Applier cannot take changes any more: the
// Watcher then applies them to the session directly. An Applier that also
// has a method Exited() <-chan struct{} (a Helper does) is given up as
// soon as that channel closes.
type Applier interface {
	// Mkdir makes directory key appear; the session holds it announced
	// (session.External.AnnounceMkdir).
	Mkdir(key string, mode fs.FileMode) error
	// Create makes key appear, with mode; the session holds its value
	// (session.Context.AnnounceCreate).
	Create(key string, mode fs.FileMode) error
	// Touch tells watchers that key was modified (its new value is
	// already in the session): it must change nothing, whenever it runs.
	Touch(key string) error
	// Attr tells watchers that key's mode, owner or attributes changed
	// (the session holds them already, and the change is announced:
	// session.Context.AnnounceAttr): it must change nothing, whenever
	// it runs.
	Attr(key string) error
	// Remove removes key (announced: session.Context.AnnounceRemove).
	Remove(key string) error
}

// Options configures a Watcher. The zero value debounces for 50 ms,
// applies changes to the session directly, and reads the real clock.
type Options struct {
	Logger   *slog.Logger
	Debounce time.Duration
	Applier  Applier
	// Now is the clock of what the Watcher writes (the mtime of a file
	// it rewrites redacted); nil: time.Now. Debounce and deadlines run on
	// the real clock, as timers do.
	Now func() time.Time
	// OnProcessed, if set, is called on the worker after each key it
	// processed (whatever came of it: applied, an echo, scheduled again),
	// so that a test waits for the Watcher rather than for the clock. It
	// must not block or call Close.
	OnProcessed func(key string)
}

// Watcher is a running watch of a store's root.
type Watcher struct {
	st   Store
	c    *session.Context
	opts Options
	log  *slog.Logger

	mu      sync.Mutex // guards pending and waiting
	pending map[string]time.Time
	// Keys the store holds under a name that the session has as a file
	// (another writer replaced it with a directory, and the session's
	// file has unflushed changes, or is not yet taken out): processed
	// again when the session changes that name (its flush's keep-both
	// gives the other writer's directory the name, the watcher takes it
	// in), see waitAbove.
	waiting map[string]struct{}
	wake    chan struct{}

	// The worker's alone: the Applier while it takes changes (nil once
	// it failed), and the keys with announcements sent to it, until
	// their deadline, when what it has not taken is applied directly.
	applier Applier
	exited  <-chan struct{} // the Applier's Exited, if it has one
	sent    map[string]time.Time
	// linked holds, per key, the store's hard-link group (Info.Link) of
	// the node last seen under it, while it has one: when the name holds
	// another node (the session's own save over it, or another
	// program's), the group's other names lost one (see lostName).
	linked map[string]string

	cancel    context.CancelFunc
	stopWatch func() // ends the session watch that wakes waiting keys
	done      sync.WaitGroup
}

// Start begins following st's change feed and returns the running
// Watcher. It reconciles the session with the store once in the
// background, so that a change made between the session's bootstrap and
// Start is not missed.
func Start(st Store, c *session.Context, opts Options) (*Watcher, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = 50 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	feed, err := st.Watch(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	w := &Watcher{st: st, c: c, opts: opts, log: opts.Logger,
		pending: make(map[string]time.Time), waiting: make(map[string]struct{}), wake: make(chan struct{}, 1), cancel: cancel,
		applier: opts.Applier, sent: make(map[string]time.Time), linked: make(map[string]string)}
	w.stopWatch = c.Watch(w.sessionChanged)
	if x, ok := opts.Applier.(interface{ Exited() <-chan struct{} }); ok {
		w.exited = x.Exited()
	}
	w.done.Add(3)
	go w.events(ctx, feed)
	go w.worker(ctx)
	go w.reconcile(ctx)
	return w, nil
}

// Close stops the watcher.
func (w *Watcher) Close() error {
	w.cancel()
	w.done.Wait()
	w.stopWatch()
	return nil
}

// waitAbove reports whether key is under a name the session holds as a
// file (or symlink), and if so keeps key waiting until the session
// changes that name (sessionChanged): the store's node under it cannot
// enter the session before then, and would otherwise be missed until a
// remount.
func (w *Watcher) waitAbove(key string) bool {
	if w.fileAbove(key) == "" {
		return false
	}
	w.mu.Lock()
	w.waiting[key] = struct{}{}
	w.mu.Unlock()
	// The name may have changed since the look above, before key was
	// waiting: look again.
	if w.fileAbove(key) != "" {
		return true
	}
	w.mu.Lock()
	delete(w.waiting, key)
	w.mu.Unlock()
	return false
}

// fileAbove is the nearest name above key that the session holds as
// something other than a directory, or "".
func (w *Watcher) fileAbove(key string) string {
	for p, _ := backend.Split(key); p != ""; p, _ = backend.Split(p) {
		if st, err := w.c.Stat(p); err == nil && !st.IsDir {
			return p
		}
	}
	return ""
}

// sessionChanged is the session's watch: a change of a name schedules the
// keys waiting under it (waitAbove).
func (w *Watcher) sessionChanged(ch session.Change) {
	w.mu.Lock()
	var due []string
	for k := range w.waiting {
		if under(k, ch.Key) || (ch.OldKey != "" && under(k, ch.OldKey)) {
			due = append(due, k)
			delete(w.waiting, k)
		}
	}
	w.mu.Unlock()
	for _, k := range due {
		w.schedule(k)
	}
}

// under reports whether key is below name.
func under(key, name string) bool {
	return len(key) > len(name) && key[len(name)] == '/' && key[:len(name)] == name
}

// follow reports whether key is one to follow: not a name that lives in the
// session only.
func (w *Watcher) follow(key string) bool {
	return backend.ValidateKey(key) == nil && !w.c.Local(key)
}

func (w *Watcher) schedule(key string) { w.scheduleAfter(key, w.opts.Debounce) }

// scheduleAfter has key processed once it has been quiet for d.
func (w *Watcher) scheduleAfter(key string, d time.Duration) {
	w.mu.Lock()
	w.pending[key] = time.Now().Add(d)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// events takes the store's feed until it closes (when ctx is done).
func (w *Watcher) events(ctx context.Context, feed <-chan backend.Change) {
	defer w.done.Done()
	for ch := range feed {
		switch {
		case ch.Lost:
			// Changes were lost: look at everything again.
			w.log.Warn("the store's change feed lost changes; reconciling")
			w.done.Add(1)
			go w.reconcile(ctx)
		case w.follow(ch.Key):
			w.schedule(ch.Key)
		}
	}
}

func (w *Watcher) worker(ctx context.Context) {
	defer w.done.Done()
	// What the Applier was sent and has not taken by now never will be
	// (the mount is going away): into the session directly.
	defer w.sweep(time.Time{})
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		now := time.Now()
		next := w.sweep(now)
		var due []string
		w.mu.Lock()
		for k, at := range w.pending {
			if !at.After(now) {
				due = append(due, k)
				delete(w.pending, k)
			} else if at.Before(next) {
				next = at
			}
		}
		w.mu.Unlock()
		for _, k := range due {
			if ctx.Err() != nil {
				return
			}
			w.process(ctx, k)
			if w.opts.OnProcessed != nil {
				w.opts.OnProcessed(k)
			}
		}
		if len(due) > 0 {
			continue
		}
		t.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-t.C:
		case <-w.exited:
			w.helperFailed(ErrHelperExited)
		}
	}
}

// sweep applies directly what was sent to the Applier and not taken by
// its deadline (all of it with a zero now), and returns the next deadline
// (an hour from now when there is none).
func (w *Watcher) sweep(now time.Time) time.Time {
	next := now.Add(time.Hour)
	for k, at := range w.sent {
		if !now.IsZero() && at.After(now) {
			next = minTime(next, at)
			continue
		}
		delete(w.sent, k)
		ok, err := w.c.External().ApplyAnnounced(k)
		switch {
		case err != nil:
			w.log.Error("external change: cannot apply", "key", k, "err", err)
		case ok && !now.IsZero() && w.applier != nil && w.c.Has(k):
			// A create the helper missed, applied now: the helper, still
			// there, shows it to watchers (IN_MODIFY: no change).
			w.log.Warn("the mount helper did not carry out an external change in time: applied directly, and the helper asked to touch it", "key", k)
			w.send(k, false, func(a Applier) error { return a.Touch(k) })
		case ok && !now.IsZero():
			w.log.Warn("the mount helper did not carry out an external change in time: applied directly, watchers on the mount see no event for it", "key", k)
		}
	}
	return next
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// send hands a change of key to the Applier (announced, when announced is
// true); when the Applier fails, it is given up and what it was sent is
// applied directly.
func (w *Watcher) send(key string, announced bool, fn func(Applier) error) {
	if announced {
		w.sent[key] = time.Now().Add(session.AnnounceTTL)
	}
	if err := fn(w.applier); err != nil {
		w.helperFailed(err)
	}
}

// helperFailed gives the Applier up, saying so once, and applies directly
// every change it was sent and may not have carried out.
func (w *Watcher) helperFailed(err error) {
	if w.applier == nil {
		return
	}
	w.applier, w.exited = nil, nil
	w.log.Error("the mount helper failed: external changes now reach the mount directly, and watchers on it see no events for them", "err", err)
	w.sweep(time.Time{})
}

// process brings the session's view of key in line with the store's:
// a directory (applyDir), a removal (removed), or a file or symlink read
// (read), taken in (ingest) and applied (apply).
func (w *Watcher) process(ctx context.Context, key string) {
	if _, _, err := w.c.External().Ingest(backend.Entry{Key: key}); err != nil {
		// A name with a secret: the session logged the rule; the key must
		// reach no log line, event or index, so nothing more is said.
		return
	}
	info, err := w.st.Stat(ctx, key)
	if errors.Is(err, backend.ErrKeyNotFound) {
		w.lostName(key, "")
		w.removed(key)
		return
	}
	if err != nil {
		w.log.Warn("external change: cannot stat", "key", key, "err", err)
		return
	}
	w.lostName(key, info.Link)
	if w.c.External().Echo(key, info) {
		return
	}
	if w.waitAbove(key) {
		return
	}
	if !w.applyAbove(ctx, key) {
		return
	}
	if info.Mode.IsDir() {
		w.applyDir(key, info)
		return
	}
	e, ok := w.read(ctx, key)
	if !ok {
		return
	}
	newGroup := e.Info.Link != "" && !w.c.External().KnowsGroup(e.Info.Link, key)
	// Another node took the name (a rename over it): the session's node
	// under it lost the name, which may have carried a change to its
	// other names (seed 31088 of the two-writer model).
	others := w.c.External().OtherNames(key, e.Info.Link)
	e, redacted, dirty, ok := w.ingest(ctx, e)
	if ok {
		w.apply(e, redacted, dirty)
	}
	if len(others) > 0 {
		still := w.c.External().OtherNames(key, "")
		for _, n := range others {
			if !slices.Contains(still, n) {
				w.schedule(n)
			}
		}
	}
	if e.Info.Link != "" {
		// The change came through every name of the stored node, also
		// those the session holds as a node apart.
		for _, n := range w.c.External().GroupNames(e.Info.Link, key) {
			w.schedule(n)
		}
	}
	if newGroup {
		// Another program linked a file: the store reports the new
		// name, not the one it was linked from, which the session
		// holds as a node of its own. The listing shows it in the
		// group: a reconcile brings it in.
		w.done.Add(1)
		go w.reconcile(ctx)
	}
}

// lostName notes that the store's node under key is of hard-link group
// link ("" for none) and, when the group seen there before was another,
// has the session's names of that group looked at again: the node lost
// this name, and a change made through it (their chmod just before the
// session's save took the name: seed 50775 of the two-writer model)
// shows under those names only, of which the store reports no change.
func (w *Watcher) lostName(key, link string) {
	old, ok := w.linked[key]
	switch {
	case link != "":
		w.linked[key] = link
	case ok:
		delete(w.linked, key)
	}
	if !ok || old == link {
		return
	}
	for _, n := range w.c.External().GroupNames(old, key) {
		w.schedule(n)
	}
}

// applyDir takes in a directory another writer made, or whose mode,
// owner or attributes it changed: straight into the session (the helper
// makes files only), then shown to watchers.
func (w *Watcher) applyDir(key string, info backend.Info) {
	if w.newDirThroughHelper(key, info) {
		return
	}
	_, attrs := w.c.External().Parts(key, info)
	if err := w.c.External().ApplyDir(key, info); err != nil {
		w.cannotApply(key, err)
		return
	}
	if attrs {
		w.sendAttr(key)
	}
}

// applyAbove takes in, from the top, the directories above key that the
// session lacks, each as the store has it, before key itself. The store
// reports a new directory and what it holds in no set order, and does not
// report the directories inside one moved in: applied with key, they
// would take key's attributes, or be made by the helper's create through
// the mount as the helper's own mkdir (a change to flush, and EROFS in a
// read-only route); and the listing the topmost appears in would not be
// refreshed (session.External.ApplyDir moves its mtime). It reports
// false when key is not to be processed now: a directory above it is
// gone or replaced since key's stat (key is scheduled again), cannot be
// looked at, or cannot be taken in (logged).
func (w *Watcher) applyAbove(ctx context.Context, key string) bool {
	var missing []string
	for p, _ := backend.Split(key); p != ""; p, _ = backend.Split(p) {
		if _, err := w.c.Stat(p); !errors.Is(err, fs.ErrNotExist) || w.c.External().MkdirPending(p) {
			break // held (as a directory: fileAbove found no file)
		}
		missing = append(missing, p)
	}
	for _, p := range slices.Backward(missing) {
		if !w.follow(p) {
			return false
		}
		if _, _, err := w.c.External().Ingest(backend.Entry{Key: p}); err != nil {
			return false // a name with a secret, refused and logged as in process
		}
		info, err := w.st.Stat(ctx, p)
		switch {
		case errors.Is(err, backend.ErrKeyNotFound):
			// No entry of its own: a directory the store implies by
			// the keys under it (memstore, etcd), made with key; or
			// removed since key's stat, which key's read finds.
			return true
		case err == nil && !info.Mode.IsDir():
			// Replaced since key's stat: key goes with it, which its
			// next look finds.
			w.schedule(key)
			return false
		case err != nil:
			w.log.Warn("external change: cannot stat", "key", p, "err", err)
			return false
		}
		if w.newDirThroughHelper(p, info) {
			continue
		}
		if err := w.c.External().ApplyDir(p, info); err != nil {
			// A file made above since waitAbove looked: key waits
			// for it, and p is taken in with key.
			w.cannotApply(key, err)
			return false
		}
	}
	return true
}

// newDirThroughHelper has the Applier make key, a directory another
// program made that the session lacks, announced, and reports whether it
// did.
func (w *Watcher) newDirThroughHelper(key string, info backend.Info) bool {
	if w.applier == nil {
		return false
	}
	if w.c.External().MkdirPending(key) {
		return true // sent already (as a directory above a key)
	}
	if !w.c.External().AnnounceMkdir(key, info) {
		return false
	}
	w.send(key, true, func(a Applier) error { return a.Mkdir(key, info.Mode) })
	return true
}

// read loads key, once it has settled (a key still being written is
// scheduled again), and reports whether there is anything to take in:
// not a removal, and not memfs's own version.
func (w *Watcher) read(ctx context.Context, key string) (backend.Entry, bool) {
	got, err := w.st.Load(ctx, key)
	if errors.Is(err, backend.ErrKeyNotFound) {
		w.removed(key)
		return backend.Entry{}, false
	}
	if err != nil {
		w.log.Warn("external change: cannot read", "key", key, "err", err)
		return backend.Entry{}, false
	}
	e := got[0]
	// Still being written? Then wait until it settles.
	if after, err := w.st.Stat(ctx, key); err != nil || after.Size != e.Info.Size || !after.MTime.Equal(e.Info.MTime) {
		w.schedule(key)
		return backend.Entry{}, false
	}
	return e, !w.c.External().Echo(key, e.Info)
}

// ingest redacts e as the session may hold it and, when it held a
// secret (redacted), rewrites the store's copy. dirty reports that the
// store still holds the secret (the rewrite failed: the next flush writes
// it); ok is false when e is not to be applied (refused, or written
// again).
func (w *Watcher) ingest(ctx context.Context, e backend.Entry) (_ backend.Entry, redacted, dirty, ok bool) {
	// Nothing below sees the value as read: only what Ingest made of it.
	read, key := e.Info, e.Key
	e, findings, err := w.c.External().Ingest(e)
	if err != nil {
		w.log.Warn("external change not taken in", "err", err)
		return e, false, false, false
	}
	if len(findings) == 0 {
		return e, false, false, true
	}
	for _, f := range findings {
		w.log.Warn("redacted a secret another program wrote into the store", "key", key, "rule", f.RuleID,
			"line", f.Line, "column", f.Column)
	}
	switch err := w.rewrite(ctx, &e, read); {
	case errors.Is(err, errChanged):
		w.schedule(key) // written again meanwhile: the new version is ingested instead
		return e, true, false, false
	case errors.Is(err, backend.ErrReadOnly):
		// A read-only route's (or store's): shown redacted, clean; the
		// store keeps what its owner wrote.
		w.log.Warn("a file of a read-only store holds a secret: the mount shows it redacted, the store keeps it as its owner wrote it", "key", key)
	case err != nil:
		w.log.Error("cannot rewrite the store file redacted; memfs keeps the redacted value unflushed, the next flush writes it",
			"key", key, "err", err)
		dirty = true
	}
	return e, true, dirty, true
}

// apply makes e, another writer's version of its key (redacted: a secret
// in it was), the session's, or keeps it by the conflict rules.
func (w *Watcher) apply(e backend.Entry, redacted, dirty bool) {
	key := e.Key
	switch {
	case w.c.External().Policy() != session.KeepBeside && (w.c.Pending().Dirty(key) || (!w.c.Has(key) && w.c.Pending().Removed(key))):
		// A shared store's conflict policy decides at the next flush,
		// which still expects the version ours was made on and meets
		// theirs: nothing to do here.
	case !redacted && w.c.Pending().Dirty(key) && w.c.External().MergeMeta(e):
		// A chmod, chown or setxattr of a file the session changed:
		// both kept by the session's rule, which it logged. (Not after
		// a rewrite: it moved the version the session's changes count
		// as made on, and the content did change.)
		w.sendAttr(key)
	case w.c.Pending().Dirty(key) || (!w.c.Has(key) && w.c.Pending().Removed(key)):
		w.applyConflict(e)
	default:
		w.applyClean(e, dirty)
	}
}

// applyConflict keeps e beside its key, which has unflushed changes, or
// takes it back for a key removed in the session.
func (w *Watcher) applyConflict(e backend.Entry) {
	// Straight into the session (the copy dirty, journaled), not through
	// the helper: if the helper failed, the next flush would overwrite the
	// only copy of the external version. The session takes their version
	// for the one its next save or delete replaces knowingly: one conflict
	// copy per conflict. A key removed in the session takes their version
	// back (an edit wins over an unflushed removal; nothing is kept
	// beside).
	conflict, err := w.c.External().Apply(e)
	if err != nil {
		w.log.Error("external change: cannot keep the conflict copy", "key", e.Key, "err", err)
		return
	}
	if conflict != "" {
		w.log.Warn("external change conflicts with unflushed changes: memfs keeps its value under the key and the external one beside it",
			"key", e.Key, "external_copy", conflict)
	}
}

// applyClean makes e the session's value of its key, clean (the store has
// it; dirty: the store still holds a secret the next flush rewrites), and
// shows it to watchers through the Applier.
func (w *Watcher) applyClean(e backend.Entry, dirty bool) {
	key := e.Key
	if w.applier != nil && e.Info.Mode.IsRegular() {
		// Through the mount: announced in the session, unless the
		// session has the key (the helper's create would fail), then
		// sent to the helper.
		announced, err := w.c.External().AnnounceCreate(e, dirty)
		if err != nil {
			w.log.Error("external change: cannot apply", "key", key, "err", err)
			return
		}
		if announced {
			w.send(key, true, func(a Applier) error { return a.Create(key, e.Info.Mode) })
			return
		}
	}
	content, attrs := w.c.External().Parts(key, e.Info)
	var err error
	if dirty {
		err = w.c.Put(e)
	} else {
		_, err = w.c.External().Apply(e)
	}
	if err != nil {
		w.cannotApply(key, err)
		return
	}
	if w.applier != nil && e.Info.Mode.IsRegular() && content {
		w.send(key, false, func(a Applier) error { return a.Touch(key) })
	}
	if attrs && e.Info.Mode.IsRegular() {
		w.sendAttr(key)
	}
}

// cannotApply reports err, the session's refusal of the store's version
// of key, unless the session made a name above key a file since process
// looked (its own write, racing the watcher): key then waits for that
// name to change (waitAbove).
func (w *Watcher) cannotApply(key string, err error) {
	if errors.Is(err, session.ErrNotDir) && w.waitAbove(key) {
		return
	}
	w.log.Error("external change: cannot apply", "key", key, "err", err)
}

// sendAttr has the Applier show watchers a change of key's mode, owner or
// attributes, which the session holds already (announced:
// session.Context.AnnounceAttr).
func (w *Watcher) sendAttr(key string) {
	if w.applier == nil {
		return
	}
	w.c.External().AnnounceAttr(key)
	w.send(key, false, func(a Applier) error { return a.Attr(key) })
}

// errChanged is rewrite's report that the file changed after it was read.
var errChanged = errors.New("changed since it was read")

// rewrite replaces the store's copy of e.Key, read with info read, which
// another program wrote with a secret in it, by e, its redacted version,
// and records it in the event log. The file keeps its mode, owner and
// attributes; its mtime becomes the time of the rewrite (set in e): memfs
// did change it, and a fresh stamp cannot be mistaken for a version the
// other program writes within the same clock tick.
func (w *Watcher) rewrite(ctx context.Context, e *backend.Entry, read backend.Info) error {
	// The last look before the rename: a version written since the read
	// would be lost under it (see the package doc for what remains).
	now, err := w.st.Stat(ctx, e.Key)
	if err != nil {
		return fmt.Errorf("extwatch: rewrite %s: %w", e.Key, err)
	}
	if !backend.VersionOf(read).Matches(backend.VersionOf(now)) {
		return errChanged // its content, or its mode or attributes (the rewrite would revert them)
	}
	e.Info.MTime = w.opts.Now()
	// Announced before the write: the watcher may see the rename before
	// Save returns. Without a ctime, which the store sets (a directory
	// store writes it back into the entry): announced again after, with it.
	pending := e.Info
	pending.CTime = time.Time{}
	w.c.External().Rewriting(e.Key, pending)
	saved := []backend.Entry{*e}
	if err := w.st.Save(ctx, saved...); err != nil {
		return fmt.Errorf("extwatch: rewrite %s: %w", e.Key, err)
	}
	e.Info.CTime = saved[0].Info.CTime
	w.c.External().Rewriting(e.Key, e.Info)
	w.c.External().Rewritten(ctx, *e)
	return nil
}

func (w *Watcher) removed(key string) {
	if st, err := w.c.Stat(key); err == nil && st.IsDir {
		// A directory that went away (the store reports it, not each
		// key it held): every key under it, then the directory once
		// they are gone (keys with unflushed changes stay, and keep
		// it).
		if w.c.External().RemoveDir(key) {
			return
		}
		again := false
		for _, e := range w.c.Entries(key + "/") {
			w.schedule(e.Key)
			again = again || !w.c.Pending().Dirty(e.Key)
		}
		if again {
			w.scheduleAfter(key, 2*w.opts.Debounce)
		}
		return
	}
	if !w.c.Has(key) {
		return
	}
	if w.c.Pending().Dirty(key) {
		w.log.Warn("external removal of a key with unflushed changes: memfs keeps its value", "key", key)
		return
	}
	// The node's other names lost one (seed 12307 of the two-writer
	// model).
	for _, n := range w.c.External().OtherNames(key, "") {
		w.schedule(n)
	}
	if w.applier != nil {
		w.c.External().AnnounceRemove(key)
		w.send(key, true, func(a Applier) error { return a.Remove(key) })
		return
	}
	if _, err := w.c.External().Remove(key); err != nil {
		w.log.Error("external removal: cannot apply", "key", key, "err", err)
	}
}

// reconcile compares the store's listing with the session and schedules
// every key that differs. The listing is walked, never held whole: only
// the set of its keys is kept, to find the session's keys it lacks.
func (w *Watcher) reconcile(ctx context.Context) {
	defer w.done.Done()
	inStore := make(map[string]struct{})
	err := backend.Walk(ctx, w.st, func(batch []backend.Entry) error {
		for _, e := range batch {
			inStore[e.Key] = struct{}{}
			if !w.c.External().Echo(e.Key, e.Info) {
				w.schedule(e.Key)
			}
		}
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("reconcile: cannot list the store", "err", err)
		}
		return
	}
	for _, k := range w.c.Keys() {
		if _, ok := inStore[k]; !ok && !w.c.Local(k) && !w.c.Pending().Dirty(k) {
			w.schedule(k)
		}
	}
}
