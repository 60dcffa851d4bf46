package session

import (
	"encoding/binary"
	"hash/fnv"
	"io/fs"

	"github.com/memfs/memfs/backend"
)

// This file holds what the session knows of the versions memfs itself
// wrote to the store, so that a follower of the store (External.Echo)
// knows its own writes when they come back: the echoes part of the
// session's state, and the stamps that identify a version.

// echoes are the versions memfs wrote, per key (guarded by Context.mu).
type echoes struct {
	// written holds, per key, the versions (stamps: the whole node)
	// memfs last wrote to the store, newest last: an external watcher
	// may see an older one of them after a newer save began.
	written map[string][]stamp
}

// writtenKept is how many of memfs's own versions of a key are known.
const writtenKept = 4

// addLocked records st as a version of key memfs wrote.
func (e *echoes) addLocked(key string, st stamp) {
	w := e.written[key]
	if len(w) > 0 && w[len(w)-1] == st {
		return
	}
	if len(w) == writtenKept {
		w = append(w[:0:0], w[1:]...)
	}
	e.written[key] = append(w, st)
}

// savedLocked records the ctime the store gave st, a version of key
// memfs wrote (recorded before the save with none: pendingStampOf), once
// the save returned: the same node restored later by another writer (a
// chmod back to an earlier mode) has another ctime, and is no echo.
func (e *echoes) savedLocked(key string, st stamp) {
	if st.ctime == 0 {
		return
	}
	w := e.written[key]
	pending := st
	pending.ctime = 0
	for i := len(w) - 1; i >= 0; i-- {
		if w[i] == pending {
			w[i] = st
			if st.ctime < 0 {
				// A node of several names has no ctime, only a stamp of
				// its attributes (backend.Version): an earlier version
				// found after this one is saved is another writer's
				// restoring it (a chmod back), not an echo (seeds 14457
				// and 14541 of the two-writer model).
				e.written[key] = append(w[:0:0], w[i:]...)
			}
			return
		}
	}
}

// forgetLocked forgets the versions of key memfs wrote: the store no
// longer holds any.
func (e *echoes) forgetLocked(key string) { delete(e.written, key) }

// wroteLocked reports whether found is a version of key memfs wrote (one
// of the last writtenKept), by same.
func (e *echoes) wroteLocked(key string, found stamp, same func(mine, found stamp) bool) bool {
	for _, w := range e.written[key] {
		if same(w, found) {
			return true
		}
	}
	return false
}

// stamp identifies a stored version of a node by every attribute a
// store keeps of it (issue 26: a change of the mode, owner or attributes
// alone is a version too), but the times a reader or the store moves
// (atime, ctime) and the hard-link group's name, which each store spells
// its own way (whether the node has several names counts).
type stamp struct {
	size   int64
	mtime  int64
	mode   fs.FileMode // backend.ModeMask bits: the type and permissions
	uid    uint32
	gid    uint32
	linked bool
	xattrs uint64 // xattrsHash
	// ctime is the store's change time of the version (Version.CTime),
	// where the store reports one: 0 matches any (a version memfs is
	// still writing, or the session's own view of a file).
	ctime int64
}

// stampOf is the stamp of a stored node with info.
func stampOf(info backend.Info) stamp {
	return stamp{size: info.Size, mtime: info.MTime.UnixNano(), mode: info.Mode & backend.ModeMask,
		uid: info.UID, gid: info.GID, linked: info.Link != "", xattrs: xattrsHash(toXAttrList(info.XAttrs)),
		ctime: backend.VersionOf(info).CTime}
}

// pendingStampOf is the stamp of a version memfs is about to write with
// info: the store, not info, sets its ctime (echoes.savedLocked).
func pendingStampOf(info backend.Info) stamp {
	st := stampOf(info)
	st.ctime = 0
	return st
}

// stampLocked is the stamp of f as the session holds it.
func (f *file) stampLocked() stamp {
	return stamp{size: f.size, mtime: f.mtime, mode: f.mode & backend.ModeMask, uid: f.uid, gid: f.gid,
		linked: f.link != nil && len(f.link.names) > 1, xattrs: xattrsHash(f.xattrs)}
}

// xattrsHash is a digest of a node's attributes (FNV-1a over the sorted
// names and values), for stamps: equal lists give equal digests.
func xattrsHash(l xattrList) uint64 {
	h := fnv.New64a()
	var n [8]byte
	for _, kv := range l {
		binary.LittleEndian.PutUint64(n[:], uint64(len(kv.name)))
		h.Write(n[:])
		h.Write([]byte(kv.name))
		binary.LittleEndian.PutUint64(n[:], uint64(len(kv.value)))
		h.Write(n[:])
		h.Write(kv.value)
	}
	return h.Sum64()
}

// sameNode reports whether mine, a stamp of a version memfs holds or
// wrote, is the version found in the store. A store that cannot give a
// file away (a directory store run by a user other than root: chown
// fails, and the store keeps the file as that user's) holds the
// process's owner for every file memfs wrote, whatever the session said:
// an owner that is the process's own is then no change by another writer
// (nor could one have made it, not being root either).
func (c *Context) sameNode(mine, found stamp) bool {
	if found.uid == c.euid && c.euid != 0 {
		mine.uid, mine.gid = found.uid, found.gid
	}
	if mine.ctime == 0 || found.ctime == 0 {
		mine.ctime = found.ctime
	}
	return mine == found
}
