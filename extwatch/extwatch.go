// Package extwatch brings changes that other programs make in a directory
// store (an editor on the store, a git pull, a sync tool) into a running
// session, and through it to the mount.
//
// A Watcher watches the store's root recursively with fsnotify (new
// directories included). Events are debounced per key: a key is processed
// once it has been quiet for Options.Debounce, and re-read if it changed
// while it was read, so a file written in several steps is never served
// half-written. Then:
//
//   - memfs's own flushes coming back (same size and mtime as what the
//     session wrote or holds) are ignored;
//   - a new or changed file becomes the session's value, clean (the store
//     has it); a removed file leaves the session;
//   - a change to a key that is dirty in the session is a conflict: the
//     session's value stays under the key, and the external value is kept
//     beside it under session.ConflictKey and saved at the next flush.
//     A removal of a dirty key keeps the session's value. Nothing is lost,
//     and a conflict never blocks a flush.
//
// With an Applier (the mount's helper process), creations, removals and
// modifications are carried out through the mountpoint, so that the
// kernel emits real inotify events to watchers on the mount; without one,
// they go to the session directly and the kernel's caches are invalidated.
//
// Hidden names (memfs's temp files, lock and journal, an editor's swap
// files) are ignored.
//
// # Redaction on ingest
//
// A value read from the store goes through session.Context.Ingest before
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
// Start starts three goroutines: one takes fsnotify's events, one (the
// worker) processes the keys that are due, and one reconciles the session
// with the store once. A watch error (an overflow) starts another
// reconcile, and a new directory a walk that watches it; they run beside
// the worker. Keys are processed one at a time, on the worker: the
// Applier's methods are called from it alone, never concurrently, with no
// lock of the Watcher held, and the worker waits for each. The session
// calls its watchers on the worker too, for the changes it applies. The
// Store and the session must be safe for concurrent use (a reconcile lists
// the store and reads the session while the worker stats, loads and saves
// keys); the Logger is called from every goroutine.
//
// Close cancels the goroutines, closes the fsnotify watcher and waits for
// them all, the key being processed included (and the Applier call it is
// in). It must therefore not be called from anything the Watcher's
// goroutines call: an Applier method, the Logger, or a session watch
// callback. Close may be called more than once.
package extwatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/session"
)

// Store is the directory store being watched. Save is used only to
// rewrite, redacted, a file in which another program wrote a secret.
type Store interface {
	Root() string
	Stat(ctx context.Context, key string) (backend.Info, error)
	Load(ctx context.Context, keys ...string) ([]backend.Entry, error)
	List(ctx context.Context) ([]backend.Entry, error)
	Save(ctx context.Context, entries ...backend.Entry) error
}

// Applier carries an external change out through the mountpoint, in a
// process other than memfs's, so that the kernel emits inotify events.
type Applier interface {
	// Create makes key appear with e (dirty: it is a conflict copy that
	// the store does not hold yet).
	Create(key string, e backend.Entry, dirty bool) error
	// Touch tells watchers that key was modified (its new value is
	// already in the session): it must change nothing, whenever it runs.
	Touch(key string) error
	// Remove removes key.
	Remove(key string) error
}

// Options configures a Watcher. The zero value debounces for 50 ms and
// applies changes to the session directly.
type Options struct {
	Logger   *slog.Logger
	Debounce time.Duration
	Applier  Applier
}

// Watcher is a running watch of a store's root.
type Watcher struct {
	st   Store
	c    *session.Context
	opts Options
	log  *slog.Logger
	root string
	w    *fsnotify.Watcher

	mu      sync.Mutex // guards pending
	pending map[string]time.Time
	wake    chan struct{}

	cancel context.CancelFunc
	done   sync.WaitGroup
}

// Start begins watching st's root and returns the running Watcher. It
// reconciles the session with the store once in the background, so that a
// change made between the session's bootstrap and Start is not missed.
func Start(st Store, c *session.Context, opts Options) (*Watcher, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = 50 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watcher{st: st, c: c, opts: opts, log: opts.Logger, root: st.Root(), w: fw,
		pending: make(map[string]time.Time), wake: make(chan struct{}, 1), cancel: cancel}
	if err := w.addTree(w.root, false); err != nil {
		fw.Close()
		cancel()
		return nil, err
	}
	w.done.Add(3)
	go w.events(ctx)
	go w.worker(ctx)
	go w.reconcile(ctx)
	return w, nil
}

// Close stops the watcher.
func (w *Watcher) Close() error {
	w.cancel()
	err := w.w.Close()
	w.done.Wait()
	return err
}

// key returns the store key of path, or false for the root, a path outside
// it, or a name that lives in the session only.
func (w *Watcher) key(path string) (string, bool) {
	rel, err := filepath.Rel(w.root, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", false
	}
	k := filepath.ToSlash(rel)
	if backend.ValidateKey(k) != nil || w.c.Local(k) {
		return "", false
	}
	return k, true
}

// addTree watches dir and every directory below it; with schedule, it also
// schedules every file found (a directory that appeared with content).
func (w *Watcher) addTree(dir string, schedule bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if err := w.w.Add(p); err != nil && p == dir {
				return err
			}
			return nil
		}
		if schedule && d.Type().IsRegular() {
			if k, ok := w.key(p); ok {
				w.schedule(k)
			}
		}
		return nil
	})
}

func (w *Watcher) schedule(key string) {
	w.mu.Lock()
	w.pending[key] = time.Now().Add(w.opts.Debounce)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *Watcher) events(ctx context.Context) {
	defer w.done.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case err, ok := <-w.w.Errors:
			if !ok {
				return
			}
			// An overflow means events were lost: look at everything again.
			w.log.Warn("store watch error; reconciling", "err", err)
			w.done.Add(1)
			go w.reconcile(ctx)
		case ev, ok := <-w.w.Events:
			if !ok {
				return
			}
			k, ok := w.key(ev.Name)
			if !ok {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					w.done.Add(1)
					go func() {
						defer w.done.Done()
						w.addTree(ev.Name, true)
					}()
					continue
				}
			}
			if st, err := w.c.Stat(k); err == nil && st.IsDir && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) {
				// A directory that went away: every key under it.
				for _, e := range w.c.Entries(k + "/") {
					w.schedule(e.Key)
				}
			}
			w.schedule(k)
		}
	}
}

func (w *Watcher) worker(ctx context.Context) {
	defer w.done.Done()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		now := time.Now()
		var due []string
		next := now.Add(time.Hour)
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
		}
	}
}

// process brings the session's view of key in line with the store's.
func (w *Watcher) process(ctx context.Context, key string) {
	if _, _, err := w.c.Ingest(backend.Entry{Key: key}); err != nil {
		// A name with a secret: the session logged the rule; the key must
		// reach no log line, event or index, so nothing more is said.
		return
	}
	info, err := w.st.Stat(ctx, key)
	if errors.Is(err, backend.ErrKeyNotFound) {
		w.removed(key)
		return
	}
	if err != nil {
		w.log.Warn("external change: cannot stat", "key", key, "err", err)
		return
	}
	if !info.Mode.IsRegular() {
		// Directories (memfs's own flush touches them), symlinks and
		// special files changed by another program are indexed at the
		// next mount.
		return
	}
	if w.c.Echo(key, info) {
		return
	}
	got, err := w.st.Load(ctx, key)
	if errors.Is(err, backend.ErrKeyNotFound) {
		w.removed(key)
		return
	}
	if err != nil {
		w.log.Warn("external change: cannot read", "key", key, "err", err)
		return
	}
	e := got[0]
	// Still being written? Then wait until it settles.
	if after, err := w.st.Stat(ctx, key); err != nil || after.Size != e.Info.Size || !after.MTime.Equal(e.Info.MTime) {
		w.schedule(key)
		return
	}
	if w.c.Echo(key, e.Info) {
		return
	}
	// Nothing below sees the value as read: only what Ingest made of it.
	read := e.Info
	e, findings, err := w.c.Ingest(e)
	if err != nil {
		w.log.Warn("external change not taken in", "err", err)
		return
	}
	dirty := false // true: the store still holds the secret, the next flush rewrites it
	if len(findings) > 0 {
		for _, f := range findings {
			w.log.Warn("redacted a secret another program wrote into the store", "key", key, "rule", f.RuleID,
				"line", f.Line, "column", f.Column)
		}
		switch err := w.rewrite(ctx, &e, read); {
		case errors.Is(err, errChanged):
			w.schedule(key) // written again meanwhile: the new version is ingested instead
			return
		case err != nil:
			w.log.Error("cannot rewrite the store file redacted; memfs keeps the redacted value unflushed, the next flush writes it",
				"key", key, "err", err)
			dirty = true
		}
	}
	switch {
	case w.c.Dirty(key) || (!w.c.Has(key) && w.c.Removed(key)):
		conflict := session.ConflictKey(key, time.Now())
		w.log.Warn("external change conflicts with unflushed changes: memfs keeps its value under the key and the external one beside it",
			"key", key, "external_copy", conflict)
		// Straight into the session (dirty, journaled), not through the
		// helper: if the helper failed, the next flush would overwrite the
		// only copy of the external version.
		e.Key = conflict
		if err := w.c.Put(e); err != nil {
			w.log.Error("external change: cannot keep the conflict copy", "key", key, "err", err)
		}
	case w.c.Has(key) || w.opts.Applier == nil:
		var err error
		if dirty {
			err = w.c.Put(e)
		} else {
			_, err = w.c.ApplyExternal(e)
		}
		if err != nil {
			w.log.Error("external change: cannot apply", "key", key, "err", err)
			return
		}
		if w.opts.Applier != nil {
			w.apply(key, func() error { return w.opts.Applier.Touch(key) })
		}
	default:
		w.apply(key, func() error { return w.opts.Applier.Create(key, e, dirty) })
	}
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
	if now.Size != read.Size || !now.MTime.Equal(read.MTime) {
		return errChanged
	}
	e.Info.MTime = time.Now()
	// Announced before the write: the watcher may see the rename before
	// Save returns.
	w.c.Rewriting(e.Key, e.Info)
	if err := w.st.Save(ctx, *e); err != nil {
		return fmt.Errorf("extwatch: rewrite %s: %w", e.Key, err)
	}
	w.c.Rewritten(ctx, *e)
	return nil
}

func (w *Watcher) removed(key string) {
	if !w.c.Has(key) {
		return
	}
	if w.c.Dirty(key) {
		w.log.Warn("external removal of a key with unflushed changes: memfs keeps its value", "key", key)
		return
	}
	if w.opts.Applier != nil {
		w.apply(key, func() error { return w.opts.Applier.Remove(key) })
		return
	}
	if _, err := w.c.RemoveExternal(key); err != nil {
		w.log.Error("external removal: cannot apply", "key", key, "err", err)
	}
}

func (w *Watcher) apply(key string, fn func() error) {
	if err := fn(); err != nil {
		w.log.Error("external change: the mount helper failed", "key", key, "err", err)
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
			if !w.c.Echo(e.Key, e.Info) {
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
		if _, ok := inStore[k]; !ok && !w.c.Local(k) && !w.c.Dirty(k) {
			w.schedule(k)
		}
	}
}
