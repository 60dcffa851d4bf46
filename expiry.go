package memfs

import (
	"errors"
	"io/fs"
	"sync"
	"time"

	"github.com/memfs/memfs/expire"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/session"
)

// expiry removes the files that expire (package expire) while the FS is
// mounted: a queue of the keys that will, soonest first, read once from
// the session at the start and kept by its changes, so that the next
// deadline is one look, never a scan of every key. A due key is removed
// by session.Context.Expire, which reads its deadline again under the
// session's lock (a write that renewed it keeps it); the removal's event
// says "expire", and a flush follows soon.
//
// So that inotify watchers on the mount are told (IN_DELETE), which a
// removal behind the kernel never does, the removal is the mount helper's
// unlink through the mountpoint, announced in the session
// (session.External.AnnounceExpire), which carries it out as Expire. When
// the helper's unlink did not reach the mount (it failed, there is no
// helper), the loop takes the announcement back and calls Expire itself.
type expiry struct {
	f      *FS
	ttl    func(key string) time.Duration // a route's default, 0 for none
	remove func(key string) error         // the helper's unlink, done when it returns
	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}

	mu      sync.Mutex
	changed []session.Change // since the loop last looked
}

// startExpiry starts removing what expires, each removal through remove
// (the helper's unlink through the mountpoint, which returns once it is
// done); the function it returns stops it. A read-only session removes
// nothing.
func (f *FS) startExpiry(remove func(key string) error) func() {
	if f.opts.Session.ReadOnly {
		return func() {}
	}
	e := &expiry{f: f, ttl: f.opts.Routes.TTL, remove: remove, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	unwatch := f.c.Watch(e.onChange)
	go e.run()
	return func() {
		unwatch()
		close(e.stop)
		<-e.done
	}
}

// onChange queues a change for the loop; it must not block.
func (e *expiry) onChange(ch session.Change) {
	switch ch.Op {
	case session.OpCreate, session.OpWrite, session.OpRemove, session.OpRename, session.OpAttr, session.OpRmdir, session.OpContent:
	default:
		return
	}
	e.mu.Lock()
	e.changed = append(e.changed, ch)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *expiry) run() {
	defer close(e.done)
	var q expire.Queue
	// The files that will expire: those with an attribute that says so,
	// and those of a route with a default time to live (one pass each,
	// copying only them: never the whole namespace).
	starting := e.f.c.XAttrs().FilesWith(meta.TTL, meta.Expires)
	for _, r := range e.f.opts.Routes.Routes() {
		if r.TTL > 0 {
			starting = append(starting, e.f.c.Entries(r.Prefix)...)
		}
	}
	for _, en := range starting {
		e.place(&q, en.Key, expire.Since(en.Info.MTime, en.Info.CTime), en.Info.XAttrs)
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		e.apply(&q)
		for _, key := range q.Due(time.Now()) {
			e.expire(&q, key)
		}
		timer.Stop()
		if at, ok := q.Next(); ok {
			timer.Reset(time.Until(at))
		}
		select {
		case <-e.stop:
			return
		case <-e.wake:
		case <-timer.C:
		}
	}
}

// place puts key in q at its deadline, or takes it out when it has none.
func (e *expiry) place(q *expire.Queue, key string, changed time.Time, x map[string][]byte) {
	if at, ok, _ := expire.Deadline(changed, x, e.ttl(key)); ok {
		q.Set(key, at)
	} else {
		q.Remove(key)
	}
}

// apply reads again the deadlines of the keys changed since the loop last
// looked.
func (e *expiry) apply(q *expire.Queue) {
	e.mu.Lock()
	changed := e.changed
	e.changed = nil
	e.mu.Unlock()
	for _, ch := range changed {
		keys, dirs := e.f.touched(ch)
		for _, key := range keys {
			q.Remove(key)
			if dirs {
				q.RemovePrefix(key)
			}
			for _, en := range e.f.filesAt(key, dirs) {
				e.place(q, en.Key, expire.Since(en.Info.MTime, en.Info.CTime), en.Info.XAttrs)
			}
		}
	}
}

// expire removes key, due, if it still is: the session reads its deadline
// again under its lock. The helper's unlink does it when it can (see
// expiry).
func (e *expiry) expire(q *expire.Queue, key string) {
	deadline := func(changed time.Time, x map[string][]byte) (time.Time, bool) {
		at, ok, _ := expire.Deadline(changed, x, e.ttl(key))
		return at, ok
	}
	if ext := e.f.c.External(); !e.f.opts.Routes.ReadOnly(key) {
		ext.AnnounceExpire(key, deadline)
		err := e.remove(key)
		if !ext.TakeExpireBack(key) {
			// The mount took the helper's unlink: the file went (a
			// change tells the loop), or it was renewed meanwhile (so
			// did its change).
			if _, ok := e.f.c.Entry(key); !ok {
				e.removed(key)
			}
			return
		}
		if err != nil && !errors.Is(err, errNoHelper) {
			e.f.log.Debug("the helper did not remove an expired file: removed without telling watchers", "key", key, "err", err)
		}
	}
	removed, err := e.f.c.Expire(key, time.Now(), deadline)
	switch {
	case removed:
		e.removed(key)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		// A read-only route, a directory: it stays, and is not looked
		// at again until it changes.
		e.f.log.Warn("an expired file cannot be removed", "key", key, "err", err)
	case err == nil:
		// Renewed meanwhile: its new deadline.
		if en, ok := e.f.c.Entry(key); ok {
			e.place(q, key, expire.Since(en.Info.MTime, en.Info.CTime), en.Info.XAttrs)
		}
	}
}

// removed logs the removal of key, expired, and asks for a flush soon:
// the removal's event.
func (e *expiry) removed(key string) {
	e.f.log.Info("expired: removed", "key", key)
	select {
	case e.f.closes <- struct{}{}:
	default:
	}
}
