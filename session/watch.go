package session

import (
	"errors"
	"io/fs"
	"slices"
	"time"
)

// watchers are the Watch callbacks (guarded by Context.mu).
type watchers struct {
	fns map[int]func(Change)
	id  int // last id handed out
}

// addLocked registers fn and returns its id.
func (w *watchers) addLocked(fn func(Change)) int {
	w.id++
	w.fns[w.id] = fn
	return w.id
}

// inOrderRLocked returns the callbacks in the order they were registered.
func (w *watchers) inOrderRLocked() []func(Change) {
	if len(w.fns) == 0 {
		return nil
	}
	ids := make([]int, 0, len(w.fns))
	for id := range w.fns {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	fns := make([]func(Change), 0, len(ids))
	for _, id := range ids {
		fns = append(fns, w.fns[id])
	}
	return fns
}

// Op is the kind of a Change.
type Op string

// The kinds of change a watcher is told of.
const (
	OpCreate  Op = "create"  // a new file
	OpWrite   Op = "write"   // a file's content changed (told at Set, truncate, and Close of a writer)
	OpRemove  Op = "remove"  // a file was removed
	OpRename  Op = "rename"  // OldKey moved to Key (a file or a directory)
	OpAttr    Op = "attr"    // mode, owner or times changed
	OpMkdir   Op = "mkdir"   // a directory was made
	OpRmdir   Op = "rmdir"   // a directory was removed
	OpContent Op = "content" // the content changed behind any open handle (an external change, a reload)
	// OpConflict: another writer changed Key since the session read it,
	// and the conflict policy resolved it at a flush; OldKey is the
	// conflict copy, if any (see Options.OnConflict).
	OpConflict Op = "conflict"
)

// Origin says where a change came from.
type Origin string

const (
	// OriginLocal is a change made through the session: its API or a mount.
	OriginLocal Origin = "local"
	// OriginExternal is a change another program made in the store.
	OriginExternal Origin = "external"
	// OriginSelf is a change the session made of its own accord: the
	// removal of a file that expired (Context.Expire), a conflict copy
	// made or dropped by a flush. Like an external change, it was made
	// behind the kernel.
	OriginSelf Origin = "memfs"
)

// Change tells a watcher what happened to a key.
type Change struct {
	Time   time.Time
	Op     Op
	Key    string
	OldKey string // for OpRename
	Origin Origin
}

// Watch registers fn to be told of every change, after the change is made
// and with no lock held. fn must not block. The returned function stops it.
func (c *Context) Watch(fn func(Change)) (stop func()) {
	c.mu.Lock()
	id := c.mu.watch.addLocked(fn)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.mu.watch.fns, id)
		c.mu.Unlock()
	}
}

func (c *Context) emit(ch Change) {
	if ch.Time.IsZero() {
		ch.Time = c.now()
	}
	if ch.Origin == "" {
		ch.Origin = OriginLocal
	}
	c.mu.RLock()
	fns := c.mu.watch.inOrderRLocked()
	c.mu.RUnlock()
	for _, fn := range fns {
		fn(ch)
	}
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// emitWritten tells watchers that key was created or written.
func (c *Context) emitWritten(key string, created bool, origin Origin) {
	op := OpWrite
	if created {
		op = OpCreate
	}
	c.emit(Change{Op: op, Key: key, Origin: origin})
}
