package backend

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"
)

// Version identifies the stored version of a key that a conditional save
// expects to replace: its size and modification time (nanoseconds). The
// zero Version means the key is absent.
type Version struct {
	Size  int64
	MTime int64
}

// VersionOf is the version of a stored entry with info.
func VersionOf(info Info) Version {
	return Version{Size: info.Size, MTime: info.MTime.UnixNano()}
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

// ConflictKey is the name under which another writer's version of key is
// kept when it conflicts with memfs's: the name with ".conflict-<UTC time>"
// before its extension, in the same directory
// ("notes.md" -> "notes.conflict-20261122T232400.000000000Z.md").
func ConflictKey(key string, t time.Time) string {
	dir, name := Split(key)
	ext := path.Ext(name)
	if ext == name { // ".bashrc"-like names have no extension
		ext = ""
	}
	base := strings.TrimSuffix(name, ext)
	return Join(dir, fmt.Sprintf("%s.conflict-%s%s", base, t.UTC().Format("20060102T150405.000000000Z"), ext))
}
