package memfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/extwatch"
	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/internal/mountinfo"
	"github.com/memfs/memfs/internal/paths"
	"github.com/memfs/memfs/repo"
	"github.com/memfs/memfs/session"
	"github.com/memfs/memfs/status"
)

// MountOptions configure Mount.
type MountOptions struct {
	// EntryTimeout is how long the kernel may cache names and missing
	// names; AttrTimeout, attributes. Zero means 1 s; a negative value,
	// not at all.
	EntryTimeout, AttrTimeout time.Duration
	// Steady has the kernel keep the names and attributes of every key
	// (fsnode.SteadyTimeout), not for EntryTimeout and AttrTimeout:
	// every change reaches it, made through the mount, or invalidated
	// when another writer made it (the store's feed) or memfs did (a
	// conflict copy, an expiry). Not for a program that changes the FS
	// through its own methods while it is mounted: the kernel would
	// not hear of those until the timeout.
	Steady bool
	// AllowOther lets other users in, held to the stored modes.
	AllowOther bool
	// Debug logs every FUSE request (sizes and redacted names only).
	Debug bool
	// NoXAttrs switches extended attributes off (ls -l is faster).
	NoXAttrs bool
	// ShowMemfs lists .memfs in the mount's root; without it .memfs is
	// reached by name only, and tree walks leave it out.
	ShowMemfs bool
	// Agent labels the writer of every change made through the mount.
	Agent string
	// FlushInterval is how often Serve flushes: 0 flushes only on fsync
	// and at the end, else at least MinFlushInterval. With one, a mount
	// of a shared store also flushes soon after a close (closeFlush).
	FlushInterval time.Duration
	// IndexAtMount opens the search index right after mounting, in the
	// background, instead of at the first search.
	IndexAtMount bool
	// Helper, when set, makes the command of the helper process that
	// carries out a store's external changes through the mountpoint (see
	// extwatch.RunHelper), so that watchers on the mount see them as
	// inotify events: memfs mount runs its own binary's hidden __apply
	// command. Without one, or when it fails, external changes reach the
	// mount without events.
	Helper func(mountpoint string) *exec.Cmd
	// OnFlush, when set, is called before each flush Serve makes with
	// why ("interval", "close", "memory", "unmount") and the number of unflushed entries;
	// the function it returns is called when the flush is over.
	OnFlush func(why string, entries int) (done func())
	// CollectInterval is how often the mount collects a shared store
	// (backend.Collector) when the store's mounts elect it: zero means
	// DefaultCollectInterval, a negative value never. A read-only mount
	// never does. A store the mount holds alone collects only history.
	CollectInterval time.Duration
	// Retention is what history keeps (history.Retention; the zero value
	// keeps the defaults), applied by the collecting mount.
	Retention history.RetentionOptions
}

// closeFlush is how long after a close of a written file a mount of a
// shared store flushes (when it flushes periodically at all): soon, so
// that the other mounts see the file within a second, as NFS's
// close-to-open consistency promises, and not at once, so that a burst of
// closes (a tool writing many files) is one flush.
const closeFlush = 100 * time.Millisecond

// refreshEvents is how often a mount of a shared store reads what other
// mounts appended to the event log.
const refreshEvents = 3 * time.Second

// server is the FUSE server fsnode.Mount returns (go-fuse stays in fsnode).
type server interface {
	Wait()
	Unmount() error
}

// Mount is a mounted FS: the FUSE server and what follows the store's
// external changes. Serve runs it; Unmount ends it from another goroutine.
type Mount struct {
	f    *FS
	dir  string
	opts MountOptions
	root *fsnode.Root
	srv  server
	ext  *extwatch.Watcher
	// app is the helper process (extwatch's), which carries out through
	// the mountpoint the changes watchers must be told of: others'
	// changes, expiry. Started at mount for a store others change, on
	// first use otherwise (helper); guarded by appMu.
	appMu    sync.Mutex
	app      *extwatch.Helper
	appTried bool
	peer     *presence  // the registration with a shared store, or nil
	gc       *collector // the collection of a shared store, or nil
	// stopExpiry stops the removal of what expires (expiry.go).
	stopExpiry func()
}

// MinFlushInterval is the shortest MountOptions.FlushInterval but 0: each
// flush walks the session, and at 1 ns an idle mount kept 60-77% of a
// core busy.
const MinFlushInterval = 100 * time.Millisecond

// Mount mounts f at dir, an existing empty directory, and returns at once;
// the kernel's requests are served from then on. Call Serve, which
// returns when the mount ends, then Close f. An FS has one mount at a
// time, and its mountpoint may not overlap the directory of its journal
// (nor, the caller sees to it, the store): memfs would serve its own
// writes to it, and deadlock.
func (f *FS) Mount(dir string, mo MountOptions) (*Mount, error) {
	if iv := mo.FlushInterval; iv < 0 || iv > 0 && iv < MinFlushInterval {
		return nil, fmt.Errorf("memfs: FlushInterval %v: want 0 (no periodic flush) or at least %v", iv, MinFlushInterval)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := CheckOverlap(dir, filepath.Dir(f.opts.JournalPath)); err != nil {
		return nil, err
	}
	for _, d := range f.opts.Routes.Dirs() {
		if err := CheckOverlap(dir, d); err != nil {
			return nil, fmt.Errorf("a route's store: %w", err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		return nil, errors.New("memfs: Mount of a closed FS")
	case f.mount != nil:
		return nil, fmt.Errorf("memfs: already mounted at %s", f.mount.dir)
	}
	readOnly := f.opts.Session.ReadOnly
	// Indexing lists the store once, and that garbage would stay resident:
	// hand it back to the system before serving.
	debug.FreeOSMemory()
	if mo.IndexAtMount {
		go func() {
			if _, err := f.index.Get(context.Background()); err != nil {
				f.index.LogOpenError(err)
			}
		}()
	}
	peer := f.register(dir, mo.Agent)
	var closed func()
	if _, shared := f.store.(backend.Presence); shared && mo.FlushInterval > 0 {
		closed = func() {
			select {
			case f.closes <- struct{}{}: // the serve loop flushes soon
			default:
			}
		}
	}
	root := fsnode.NewRoot(f.c, fsnode.Options{
		Logger:          f.log,
		EntryTimeout:    mo.EntryTimeout,
		AttrTimeout:     mo.AttrTimeout,
		NegativeTimeout: mo.EntryTimeout,
		Agent:           mo.Agent,
		Run:             SelfRun(),
		ShowMemfs:       mo.ShowMemfs,
		Steady:          f.steady(mo.Steady),
		Space:           f.space(),
		Closed:          closed,
		Check:           checkRecord,
		Events:          f.events,
		ContextPack:     f.ContextFile,
		Search:          f.index.File,
		Runs: &fsnode.Runs{List: f.RunIDs, Has: f.hasRun, File: f.runFile,
			Files: []string{RunMetaFile, RunSummariesFile, RunEventsFile}},
		Records: f.events,
		History: f.historyView(),
		Status: func(cr session.Cred, st *status.Status) {
			st.Store, st.Mountpoint, st.PID = f.opts.Name, dir, os.Getpid()
			st.Memory, st.Search, st.Peers = f.memoryStatus(), f.SearchStatus(), peer.peers()
			st.StaleIndexes = f.staleIndexes(cr)
			st.Routes, st.Quotas = f.routesStatus(), f.quotaStatus(cr)
		},
	})
	srv, err := fsnode.Mount(dir, root, fsnode.MountOptions{
		AllowOther: mo.AllowOther,
		ReadOnly:   readOnly,
		Debug:      mo.Debug,
		NoXAttrs:   mo.NoXAttrs,
		FsName:     "memfs:" + f.opts.Name,
	})
	if err != nil {
		peer.close()
		root.Close()
		return nil, fmt.Errorf("%w\n  is %s already mounted, or FUSE unavailable here?", err, dir)
	}
	m := &Mount{f: f, dir: dir, opts: mo, root: root, srv: srv, peer: peer}
	m.stopExpiry = f.startExpiry(m.helperExpire)
	if !readOnly {
		m.gc = f.startCollector(mo.CollectInterval, mo.Retention)
	}
	f.mount = m
	// A store other writers change (its Watcher feed): follow them.
	es, ok := f.store.(extwatch.Store)
	if _, w := f.store.(backend.Watcher); w && !ok {
		f.log.Warn("the store reports changes but cannot be followed (no Stat): other writers' changes show at the next mount")
	}
	if ok && !readOnly {
		wopts := extwatch.Options{Logger: f.log}
		if app := m.helper(); app != nil {
			wopts.Applier = app
		}
		if m.ext, err = extwatch.Start(es, f.c, wopts); err != nil {
			f.log.Warn("cannot watch the store for external changes", "err", err)
		}
	}
	indexed, loaded, _, _ := f.c.Stats().Counts()
	f.log.Info("mounted", "mountpoint", dir, "store", f.opts.Name, "keys", indexed, "loaded", loaded, "pid", os.Getpid())
	return m, nil
}

// Serve mounts f at dir and serves it until ctx is done, then flushes and
// unmounts (see Mount.Serve). Close f after it.
func (f *FS) Serve(ctx context.Context, dir string, mo MountOptions) error {
	m, err := f.Mount(dir, mo)
	if err != nil {
		return err
	}
	return m.Serve(ctx)
}

// Dir is the mountpoint.
func (m *Mount) Dir() string { return m.dir }

// Serve flushes every FlushInterval (on a shared store also closeFlush
// after a close of a written file) until ctx is done, then flushes and
// unmounts. A busy mountpoint (a shell in it, an open file) is retried
// every 2 s, and reported with what holds it every 30 s, until it is free:
// nothing is lost, and one cancellation is enough. Serve also returns when
// the mount is unmounted from outside (umount, fusermount -u). The
// external-change watching ends after the unmount.
func (m *Mount) Serve(ctx context.Context) error {
	served := make(chan struct{})
	go func() {
		m.srv.Wait()
		close(served)
	}()
	var tick <-chan time.Time
	if iv := m.opts.FlushInterval; iv > 0 {
		t := time.NewTicker(iv)
		defer t.Stop()
		tick = t.C
	}
	var refresh <-chan time.Time
	if _, shared := m.f.store.(backend.Presence); shared {
		// Other mounts append to the namespace's event log: what they
		// wrote shows in .memfs/events* within refreshEvents.
		t := time.NewTicker(refreshEvents)
		defer t.Stop()
		refresh = t.C
	}
	done := ctx.Done()
	var retry, soon <-chan time.Time
	var lastBusyLog time.Time
	unmount := func() bool {
		m.flush("unmount")
		err := m.Unmount()
		if err == nil {
			return true
		}
		if time.Since(lastBusyLog) > 30*time.Second {
			lastBusyLog = time.Now()
			m.f.log.Error("cannot unmount; still serving so that nothing is lost, and retrying: close what uses it",
				"mountpoint", m.dir, "err", err, "users", strings.Join(mountinfo.MountUsers(m.dir), ", "))
		}
		retry = time.After(2 * time.Second)
		return false
	}
serve:
	for {
		select {
		case <-tick:
			m.flush("interval")
		case <-m.f.closes:
			// A written file was closed (a shared store's mount,
			// see closeFlush): the closes until then join its flush.
			if soon == nil {
				soon = time.After(closeFlush)
			}
		case <-soon:
			soon = nil
			m.flush("close")
		case <-m.f.pressure:
			// Unflushed values are past the memory budget: once
			// flushed, they are clean and may go.
			m.flush("memory")
		case <-refresh:
			rctx, cancel := context.WithTimeout(context.Background(), refreshEvents)
			if err := m.f.events.Refresh(rctx); err != nil {
				m.f.log.Debug("event log not refreshed", "err", err)
			}
			cancel()
			m.f.keeper.poke() // other mounts' events of runs
		case <-done:
			done = nil // asked once; retry follows
			if unmount() {
				break serve
			}
		case <-retry:
			if unmount() {
				break serve
			}
		case <-served:
			m.f.log.Info("unmounted from outside", "mountpoint", m.dir)
			break serve
		}
	}
	<-served
	m.stopExpiry()
	m.stopExternal() // also after an unmount from outside: nothing may change the session now
	m.gc.close()
	m.peer.close()
	m.root.Close()
	m.f.mu.Lock()
	m.f.mount = nil
	m.f.mu.Unlock()
	return nil
}

// flush flushes the session, telling OnFlush; a failure is logged, and the
// data stays in memory for the next flush.
func (m *Mount) flush(why string) {
	if m.opts.OnFlush != nil {
		_, _, dirty, removed := m.f.c.Stats().Counts()
		defer m.opts.OnFlush(why, dirty+removed)()
	}
	if err := m.f.c.Flush(context.Background()); err != nil {
		m.f.log.Error("flush failed; data stays in memory and is retried", "why", why, "err", err)
	}
}

// Unmount unmounts the mountpoint; Serve then returns. As root it calls
// umount(2) itself, so that a busy mountpoint is reported as EBUSY
// (go-fuse would fall back to fusermount and report that instead).
func (m *Mount) Unmount() error {
	err := syscall.Unmount(m.dir, 0)
	if err == nil || errors.Is(err, syscall.EBUSY) {
		return err
	}
	return m.srv.Unmount()
}

func (m *Mount) stopExternal() {
	if m.ext != nil {
		m.ext.Close()
		m.ext = nil
	}
	m.appMu.Lock()
	defer m.appMu.Unlock()
	if m.app != nil {
		m.app.Close()
		m.app = nil
	}
	m.appTried = true // none again
}

// helper returns the helper process, started on first use; nil when the
// mount has none (no MountOptions.Helper, a read-only mount, one that
// would not start, or one stopped).
func (m *Mount) helper() *extwatch.Helper {
	m.appMu.Lock()
	defer m.appMu.Unlock()
	if m.app != nil || m.appTried || m.opts.Helper == nil || m.f.opts.Session.ReadOnly {
		return m.app
	}
	m.appTried = true
	app, err := extwatch.StartHelper(m.opts.Helper(m.dir))
	if err != nil {
		m.f.log.Warn("no helper process: changes not made through the mount (others', expiry) reach it, but watchers on it see no events", "err", err)
		return nil
	}
	m.app = app
	return app
}

// errNoHelper is helperExpire's error when the mount has no helper.
var errNoHelper = errors.New("no helper process")

// helperExpire has the helper remove key, expired, through the mountpoint
// (the expiry announced in the session), and returns once it has.
func (m *Mount) helperExpire(key string) error {
	if app := m.helper(); app != nil {
		return app.Expire(key)
	}
	return errNoHelper
}

// CheckOverlap refuses a mountpoint inside dir (a store, a journal's
// directory) or dir inside the mountpoint, comparing the paths with every
// symlink resolved: a link must not hide an overlap. The kernel would
// deadlock serving one from the other.
func CheckOverlap(mountpoint, dir string) error {
	m, d := paths.Resolved(mountpoint), paths.Resolved(dir)
	if paths.Within(m, d) || paths.Within(d, m) {
		return fmt.Errorf("mountpoint %s and store %s overlap (%s and %s); the kernel would deadlock serving one from the other", mountpoint, dir, m, d)
	}
	return nil
}

// checkRecord is the mount's check at close (fsnode.Options.Check): a
// repository's convention, decision or note must pass its kind's schema.
// Whether its id is its file's name is not asked here: an editor's
// temporary file (tmpXXXX.md) is renamed to its name after its close;
// memfs repo check and the pack ask it.
func checkRecord(key string, value func() []byte) error {
	_, kind, _, ok := repo.ParseKey(key)
	if !ok {
		return nil
	}
	_, err := repo.Parse(kind, value())
	return err
}
