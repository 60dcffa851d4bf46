package session

import (
	"context"
	"io/fs"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// This file keeps the announcements of the external-change helper
// protocol (package extwatch). A change another program made in the store
// is carried out through the mountpoint by a helper process, so that the
// kernel emits inotify events to watchers on the mount. The serving side
// announces each change here before it sends it to the helper; the mount
// recognises the helper's request by the announcement (not by its PID:
// FUSE reports the calling thread, and a Go process has many) and carries
// out the change the announcement holds. An announcement is taken once.
// One the helper did not take (it failed, it exited) is applied directly
// by ApplyAnnounced: the mount never misses the change, only its watchers'
// event.

// AnnounceTTL bounds how long an announcement waits for the helper's
// request: one that never comes must not later capture a user's own
// create or unlink of the key. The announcer applies what is left after
// it with ApplyAnnounced.
const AnnounceTTL = 5 * time.Second

// announcements are the changes announced for the helper and not taken
// yet (guarded by Context.mu).
type announcements struct {
	creates map[string]announcedCreate
	removes map[string]announcedRemove
	attrs   map[string]announcedRemove // AnnounceAttr's
	mkdirs  map[string]announcedMkdir  // AnnounceMkdir's; made on first use
	expires map[string]Deadline        // AnnounceExpire's; made on first use
}

// announcedMkdir is a mkdir announced for the helper: a directory another
// program made in the store, with its Info there.
type announcedMkdir struct {
	info     backend.Info
	deadline time.Time
}

// countLocked adds one announcement of key to m, live until now+AnnounceTTL.
func countLocked(m map[string]announcedRemove, key string, now time.Time) {
	a := m[key]
	m[key] = announcedRemove{n: a.n + 1, deadline: now.Add(AnnounceTTL)}
}

// takeLocked takes one of the announcements of key counted in m, and
// reports whether one was waiting and had not expired at now.
func takeLocked(m map[string]announcedRemove, key string, now time.Time) bool {
	a, ok := m[key]
	if !ok {
		return false
	}
	live := now.Before(a.deadline)
	if a.n--; a.n <= 0 || !live {
		delete(m, key)
	} else {
		m[key] = a
	}
	return live
}

// takeCreateLocked takes the create announced for key, if one is waiting
// and had not expired at now.
func (an *announcements) takeCreateLocked(key string, now time.Time) (announcedCreate, bool) {
	a, ok := an.creates[key]
	if !ok || !now.Before(a.deadline) {
		return a, false
	}
	delete(an.creates, key)
	return a, true
}

// dropLocked takes everything announced for key, expired or not.
func (an *announcements) dropLocked(key string) (md announcedMkdir, mkdir bool, cr announcedCreate, create, remove bool) {
	md, mkdir = an.mkdirs[key]
	cr, create = an.creates[key]
	_, remove = an.removes[key]
	delete(an.mkdirs, key)
	delete(an.creates, key)
	delete(an.removes, key)
	delete(an.attrs, key)
	return md, mkdir, cr, create, remove
}

// announcedCreate is a create announced for the helper.
type announcedCreate struct {
	e        backend.Entry // from Ingest
	dirty    bool          // the store does not hold e yet: a write to flush
	deadline time.Time
}

// announcedRemove counts the removals of one key announced and not taken:
// each is the helper's own request, arriving once.
type announcedRemove struct {
	n        int
	deadline time.Time // of the latest
}

// AnnounceCreate announces the helper's coming create of e.Key, a file
// another program made in the store: the mount's next create of the key
// within AnnounceTTL (CreateAnnounced) makes the file appear with e's whole
// value at once. dirty says the store does not hold e yet (the redacted
// rewrite of the store's copy failed): the file is then a change to flush,
// as Put makes. e is sealed as Ingest does (a no-op for e from Ingest), so
// that no secret waits here. AnnounceCreate announces nothing and reports
// false when the session has the key already (the helper's create would
// fail): the caller applies the change directly.
func (x *External) AnnounceCreate(e backend.Entry, dirty bool) (bool, error) {
	c := x.c
	e, _, err := x.Ingest(e)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.mu.tree.files[e.Key]; ok {
		return false, nil
	}
	if _, ok := c.mu.tree.dirs[e.Key]; ok {
		return false, nil
	}
	c.mu.announce.creates[e.Key] = announcedCreate{e: e, dirty: dirty, deadline: c.now().Add(AnnounceTTL)}
	return true, nil
}

// AnnounceRemove announces the helper's coming unlink of key, which another
// program removed from the store. Each announcement is taken once.
func (x *External) AnnounceRemove(key string) {
	c := x.c
	c.mu.Lock()
	countLocked(c.mu.announce.removes, key, c.now())
	c.mu.Unlock()
}

// AttrSignal is the attribute the helper sets on a key to show watchers
// on the mount a change of its mode, owner or attributes (IN_ATTRIB)
// that the session holds already (AnnounceAttr): memfs's read-only
// writer attribute, which every other setxattr of is refused, so that a
// request that comes after its announcement expired changes nothing
// either.
const AttrSignal = meta.Writer

// AnnounceAttr announces the helper's coming setxattr of AttrSignal on
// key: another writer changed key's mode, owner or attributes, which the
// session has applied; the helper's request, taken once within
// AnnounceTTL, succeeds and changes nothing, and the kernel tells
// watchers.
func (x *External) AnnounceAttr(key string) {
	c := x.c
	c.mu.Lock()
	countLocked(c.mu.announce.attrs, key, c.now())
	c.mu.Unlock()
}

// attrAnnounced takes one announced attribute request of key, and reports
// whether one was waiting and had not expired.
func (c *Context) attrAnnounced(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return takeLocked(c.mu.announce.attrs, key, c.now())
}

// CreateAnnounced carries out the create announced for key, if one is
// waiting and has not expired (ok): the announced entry becomes the
// session's value (clean, as External.Apply makes it, or dirty, as Put) and
// is opened. When key became dirty meanwhile (a user's create), the
// external value is kept beside it under ConflictKey and the error wraps
// fs.ErrExist. Without an announcement, ok is false: the create is a
// user's.
func (x *External) CreateAnnounced(ctx context.Context, key string) (f *File, ok bool, err error) {
	c := x.c
	if !c.announced(key, true) {
		return nil, false, nil // every create but the helper's: no exclusive lock
	}
	c.mu.Lock()
	a, ok := c.mu.announce.takeCreateLocked(key, c.now())
	c.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	conflict, err := c.applyCreate(a)
	if err != nil {
		return nil, true, err
	}
	if conflict != "" {
		// Kept under the conflict name.
		return nil, true, pathErr("create", key, fs.ErrExist)
	}
	f, err = c.Open(ctx, key)
	return f, true, err
}

// applyCreate makes an announced create the session's value, or a
// conflict copy beside it (its key returned) when the key is dirty.
func (c *Context) applyCreate(a announcedCreate) (conflict string, err error) {
	if a.dirty {
		return "", c.Put(a.e)
	}
	return c.External().Apply(a.e)
}

// RemoveAnnounced carries out one removal announced for key, if one is
// waiting and has not expired (ok), as External.Remove does: removed is
// false when the key has unflushed changes, which it keeps. An expiry
// announced (AnnounceExpire) is carried out as Context.Expire does:
// removed is false when the file is no longer due. Without an
// announcement, ok is false: the unlink is a user's.
func (x *External) RemoveAnnounced(key string) (ok, removed bool, err error) {
	c := x.c
	if !c.announced(key, false) {
		return false, false, nil
	}
	c.mu.Lock()
	deadline, expiring := c.mu.announce.expires[key]
	delete(c.mu.announce.expires, key)
	ok = expiring || takeLocked(c.mu.announce.removes, key, c.now())
	c.mu.Unlock()
	switch {
	case expiring:
		removed, err = c.Expire(key, c.now(), deadline)
	case ok:
		removed, err = x.Remove(key)
	}
	return ok, removed, err
}

// AnnounceExpire announces the helper's coming unlink of key, due to
// expire by deadline: the mount's next unlink of key (RemoveAnnounced)
// is Context.Expire's, so that the kernel tells watchers on the mount
// (IN_DELETE), which a removal behind the kernel never does. The
// announcer takes back one the helper did not carry out
// (TakeExpireBack) and expires the file itself.
func (x *External) AnnounceExpire(key string, deadline Deadline) {
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.announce.expires == nil {
		c.mu.announce.expires = make(map[string]Deadline)
	}
	c.mu.announce.expires[key] = deadline
}

// TakeExpireBack takes back the expiry of key announced and not carried
// out, and reports whether one was waiting.
func (x *External) TakeExpireBack(key string) bool {
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.mu.announce.expires[key]
	delete(c.mu.announce.expires, key)
	return ok
}

// announced reports whether a create (or a removal) of key is announced,
// under the read lock.
func (c *Context) announced(key string, create bool) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if create {
		_, ok := c.mu.announce.creates[key]
		return ok
	}
	_, ok := c.mu.announce.removes[key]
	_, expiring := c.mu.announce.expires[key]
	return ok || expiring
}

// ApplyAnnounced applies directly, expired or not, what is announced for
// key and was not taken: the helper could not carry it out (it failed, it
// exited). It reports whether anything was waiting. A create is applied
// before removals (the order the watcher announced them in, as a key is
// created before it is removed).
func (x *External) ApplyAnnounced(key string) (bool, error) {
	c := x.c
	c.mu.Lock()
	// An announced attribute goes too: the session has the change; only
	// its event is lost.
	md, mkdir, cr, create, remove := c.mu.announce.dropLocked(key)
	c.mu.Unlock()
	if mkdir {
		if err := x.ApplyDir(key, md.info); err != nil {
			return true, err
		}
	}
	if create {
		if _, err := c.applyCreate(cr); err != nil {
			return true, err
		}
	}
	if remove {
		if _, err := x.Remove(key); err != nil {
			return true, err
		}
	}
	return mkdir || create || remove, nil
}

// AnnounceMkdir announces the helper's coming mkdir of key, a directory
// another program made in the store with info: the mount's next mkdir
// of key within AnnounceTTL (MkdirAnnounced) makes it appear as the store
// has it (ApplyDir), in a read-only route too. It announces nothing and
// reports false when the session has the key, or has its mkdir
// announced already (the helper's would fail): the caller then applies
// the change directly, or leaves it to the announcement.
func (x *External) AnnounceMkdir(key string, info backend.Info) bool {
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.mu.tree.dirs[key]; ok {
		return false
	}
	if _, ok := c.mu.tree.files[key]; ok {
		return false
	}
	if _, ok := c.mu.announce.mkdirs[key]; ok {
		return false
	}
	if c.mu.announce.mkdirs == nil {
		c.mu.announce.mkdirs = make(map[string]announcedMkdir)
	}
	c.mu.announce.mkdirs[key] = announcedMkdir{info: info, deadline: c.now().Add(AnnounceTTL)}
	return true
}

// MkdirAnnounced carries out the mkdir announced for key, if one is
// waiting and has not expired (ok): the announced directory becomes the
// session's, as ApplyDir makes it. Without an announcement, ok is false:
// the mkdir is a user's. One that expired is left for ApplyAnnounced.
func (x *External) MkdirAnnounced(key string) (ok bool, err error) {
	c := x.c
	c.mu.Lock()
	a, ok := c.mu.announce.mkdirs[key]
	ok = ok && c.now().Before(a.deadline)
	if ok {
		delete(c.mu.announce.mkdirs, key)
	}
	c.mu.Unlock()
	if !ok {
		return false, nil
	}
	return true, x.ApplyDir(key, a.info)
}

// MkdirPending reports whether a mkdir of key is announced and not taken.
func (x *External) MkdirPending(key string) bool {
	c := x.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.mu.announce.mkdirs[key]
	return ok
}
