package session

import (
	"context"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// Cred is who asks: a user id and its groups, the primary group first and
// then the supplementary ones. memfs's own files (search answers, context
// packs, the event log) answer each caller with what its Cred may read, by
// the rules the kernel applies to the files themselves.
//
// The zero Cred is uid 0, root, which may read everything: take a Cred
// from the caller (fsnode does, from the FUSE request), never build one
// by default.
type Cred struct {
	UID  uint32
	GIDs []uint32
}

// String is a canonical form of cr (uid, then the groups sorted), equal for
// two Creds exactly when they are allowed the same: a cache key.
func (cr Cred) String() string {
	gids := slices.Clone(cr.GIDs)
	slices.Sort(gids)
	gids = slices.Compact(gids)
	var b strings.Builder
	b.WriteString(strconv.FormatUint(uint64(cr.UID), 10))
	for i, g := range gids {
		if i == 0 {
			b.WriteByte(':')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(uint64(g), 10))
	}
	return b.String()
}

func (cr Cred) inGroup(gid uint32) bool { return slices.Contains(cr.GIDs, gid) }

// The permission bits a check asks for, in the "other" position.
const (
	permRead   fs.FileMode = 4
	permSearch fs.FileMode = 1
)

// allowed reports whether cr has every bit of want on an object with mode,
// uid and gid, as the kernel's generic_permission decides without ACLs:
// the owner's bits apply to the owner even when they grant less than the
// group's or others', the group's to a member, the others' to the rest.
// uid 0 is allowed read and search everywhere (CAP_DAC_OVERRIDE lets root
// read even a file of mode 000).
func (cr Cred) allowed(mode fs.FileMode, uid, gid uint32, want fs.FileMode) bool {
	if cr.UID == 0 {
		return true
	}
	var bits fs.FileMode
	switch {
	case cr.UID == uid:
		bits = mode >> 6
	case cr.inGroup(gid):
		bits = mode >> 3
	default:
		bits = mode
	}
	return bits&7&want == want
}

// MayRead reports whether cr may read an object of mode, uid and gid, by
// the rule CanRead applies to a file: for a file as it was (a mode and an
// owner that history keeps).
func (cr Cred) MayRead(mode fs.FileMode, uid, gid uint32) bool {
	return cr.allowed(mode, uid, gid, permRead)
}

// MaySearch reports whether cr may pass through a directory of mode, uid
// and gid.
func (cr Cred) MaySearch(mode fs.FileMode, uid, gid uint32) bool {
	return cr.allowed(mode, uid, gid, permSearch)
}

// searchableLocked reports whether cr may pass through directory key and
// every directory above it: each needs 'x'. The root directory "" counts:
// it is the mountpoint the caller walks through.
func (c *Context) searchableLocked(key string, cr Cred) bool {
	for k := key; ; k = parentOf(k) {
		d, ok := c.mu.tree.dirs[k]
		if !ok || !cr.allowed(d.mode, d.uid, d.gid, permSearch) {
			return false
		}
		if k == "" {
			return true
		}
	}
}

func (c *Context) canReadLocked(key string, cr Cred) bool {
	f, ok := c.mu.tree.files[key]
	return ok && cr.allowed(f.mode, f.uid, f.gid, permRead) && c.searchableLocked(parentOf(key), cr)
}

func (c *Context) canListLocked(key string, cr Cred) bool {
	d, ok := c.mu.tree.dirs[key]
	return ok && cr.allowed(d.mode, d.uid, d.gid, permRead|permSearch) && c.searchableLocked(key, cr)
}

// CanRead reports whether cr could open file key for reading through the
// mount: 'r' on the file and 'x' on every directory from the root down.
// A key that is not a file gives false. It takes the read lock and looks
// up only key and its directories.
func (a *Access) CanRead(key string, cr Cred) bool {
	c := a.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.canReadLocked(key, cr)
}

// CanList reports whether cr could list directory key ("" is the root):
// 'r' and 'x' on it, 'x' on every directory above it. A key that is not a
// directory gives false.
func (a *Access) CanList(key string, cr Cred) bool {
	c := a.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.canListLocked(key, cr)
}

// CanSee reports whether cr may learn of a change to key (a line of the
// event log or of the change feed names key, and for a write, its size
// and hash): while key is a file, when cr can read it; while it is a
// directory, when cr can list the directory holding it (where its name
// shows); once it is gone, when cr can list its nearest existing
// ancestor, where the name showed last that cr could still look.
func (a *Access) CanSee(key string, cr Cred) bool {
	c := a.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.canSeeLocked(key, cr)
}

func (c *Context) canSeeLocked(key string, cr Cred) bool {
	if _, ok := c.mu.tree.files[key]; ok {
		return c.canReadLocked(key, cr)
	}
	if key == "" {
		return c.canListLocked("", cr)
	}
	p := parentOf(key)
	for p != "" {
		if _, ok := c.mu.tree.dirs[p]; ok {
			break
		}
		p = parentOf(p)
	}
	return c.canListLocked(p, cr)
}

// Readable is CanRead for many keys under one lock: ok[i] says whether cr
// may read keys[i].
func (a *Access) Readable(cr Cred, keys ...string) []bool {
	c := a.c
	ok := make([]bool, len(keys))
	c.mu.RLock()
	defer c.mu.RUnlock()
	for i, k := range keys {
		ok[i] = c.canReadLocked(k, cr)
	}
	return ok
}

// Seeable is CanSee for many keys under one lock.
func (a *Access) Seeable(cr Cred, keys ...string) []bool {
	c := a.c
	ok := make([]bool, len(keys))
	c.mu.RLock()
	defer c.mu.RUnlock()
	for i, k := range keys {
		ok[i] = c.canSeeLocked(k, cr)
	}
	return ok
}

type credKey struct{}

// WithCred returns ctx carrying cr: the caller that a computed answer is
// for (fsnode sets it on every request that computes one).
func WithCred(ctx context.Context, cr Cred) context.Context {
	return context.WithValue(ctx, credKey{}, cr)
}

// CredFrom returns the Cred WithCred put in ctx. Without one, ok is false:
// the caller is unknown, and an answer must not be computed for it.
func CredFrom(ctx context.Context) (cr Cred, ok bool) {
	cr, ok = ctx.Value(credKey{}).(Cred)
	return cr, ok
}
