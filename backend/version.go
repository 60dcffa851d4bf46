package backend

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
)

// Version identifies the stored version of a key that a conditional save
// expects to replace: its size and modification time (nanoseconds), its
// change time where the store reports the node's own (a directory store:
// the kernel moves it on every change of the node, its mode, owner and
// attributes included), and its revision on a store that numbers its
// writes. The zero Version means the key is absent.
type Version struct {
	Size  int64
	MTime int64
	// CTime is Info.CTime in nanoseconds: 0 when unknown (a version
	// recorded without it). A node with several names (Info.Link set),
	// whose ctime moves whenever one of its names is removed or replaced,
	// has a stamp of its permissions and attributes instead, below 0
	// (attrsStamp).
	CTime int64
	// Rev is Info.Rev: 0 on a store without revisions.
	Rev int64
}

// VersionOf is the version of a stored entry with info.
func VersionOf(info Info) Version {
	v := Version{Size: info.Size, MTime: info.MTime.UnixNano(), Rev: info.Rev}
	switch {
	case info.Link != "":
		v.CTime = attrsStamp(info)
	case !info.CTime.IsZero():
		v.CTime = info.CTime.UnixNano()
	}
	return v
}

// attrsStamp stands, in the CTime of a node with several names (whose
// ctime moves with its names), for what a ctime would tell of another
// writer's chmod or setxattr: a digest (FNV-1a) of its permission bits
// and user.* attributes, by sorted name, made negative so that it is
// never taken for a time (Matches compares a stamp with a stamp only).
// The owner is left out: a store not run as root keeps its own.
func attrsStamp(info Info) int64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(info.Mode.Perm()))
	h.Write(b[:])
	for _, name := range slices.Sorted(maps.Keys(info.XAttrs)) {
		if !strings.HasPrefix(name, XAttrPrefix) {
			continue
		}
		v := info.XAttrs[name]
		binary.LittleEndian.PutUint64(b[:], uint64(len(name))<<32|uint64(len(v)))
		h.Write(b[:])
		h.Write([]byte(name))
		h.Write(v)
	}
	return int64(h.Sum64() | 1<<63)
}

// IsZero reports whether v is the version of an absent key.
func (v Version) IsZero() bool { return v == Version{} }

// Matches reports whether the stored version found is the version v that
// a save expects. When both carry a revision the revisions decide (two
// writes in one nanosecond with one size still differ); else size and
// modification time do, and the change times when both carry one (another
// writer's chmod, chown or setxattr leaves size and mtime as they were).
func (v Version) Matches(found Version) bool {
	if v.IsZero() || found.IsZero() {
		return v.IsZero() && found.IsZero()
	}
	if v.Rev != 0 && found.Rev != 0 {
		return v.Rev == found.Rev
	}
	if v.CTime != 0 && found.CTime != 0 && (v.CTime < 0) == (found.CTime < 0) && v.CTime != found.CTime {
		return false
	}
	return v.Size == found.Size && v.MTime == found.MTime
}

// Versioned is a Store whose saves state the version they replace, for
// stores that other writers change too (another program in a dir store).
// No update is ever lost: a save whose expected version no longer matches
// is a conflict, and the version found is kept beside the key.
type Versioned interface {
	// SaveIf saves entries as Save does, each expecting its key's stored
	// version to be expect[i]. When it is not (another writer changed or
	// created the key), the version found is moved to ConflictKey(key,
	// now) before the entry takes the key, in one atomic step, and the
	// result maps the key to that conflict key. A key another writer
	// removed is simply saved.
	SaveIf(ctx context.Context, entries []Entry, expect []Version) (conflicts map[string]string, err error)
}

// ConditionalDeleter is a Store whose deletes state the version they
// remove, for a store that other writers change too and that has no
// batches (a directory store; a Batcher checks Batch.ExpectDeleted).
type ConditionalDeleter interface {
	// DeleteIf removes keys as Delete does, each only while it holds
	// expect[i] (Version.Matches: a zero Version expects the key absent,
	// so that a key the caller never saw stored is never removed).
	// A key another writer changed since stays as they left it, is not
	// an error, and is listed in kept: a delete never destroys a version
	// its caller has not seen. Directories are removed as Delete does
	// (only when empty).
	DeleteIf(ctx context.Context, keys []string, expect []Version) (kept []string, err error)
}

// ErrConflict is matched (errors.Is) by a *ConflictError.
var ErrConflict = errors.New("conflicting write by another writer")

// ConflictError is returned by Batcher.Apply of a Batch with
// FailOnConflict when a key no longer holds the version the batch expects:
// nothing was written. Conflicts lists every such key.
type ConflictError struct {
	Conflicts []Conflict
}

// Conflict is one key of a ConflictError.
type Conflict struct {
	Key string
	// Found is the version the store holds (zero: the key is absent).
	Found Version
	// Delete reports that the conflicting operation was a delete
	// (Batch.ExpectDeleted), else a save (Batch.Expect).
	Delete bool
}

func (e *ConflictError) Error() string {
	if len(e.Conflicts) == 1 {
		return fmt.Sprintf("%s: %v", e.Conflicts[0].Key, ErrConflict)
	}
	return fmt.Sprintf("%d keys (%s, ...): %v", len(e.Conflicts), e.Conflicts[0].Key, ErrConflict)
}

// Is makes errors.Is(err, ErrConflict) hold.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }
