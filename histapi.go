package memfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/session"
)

// The history API: what `memfs history`, `snapshot`, `checkpoint`,
// `revert`, `restore` and `diff` call when no mount serves the store (the
// mount serves the same under .memfs/history/, .memfs/snapshots/ and
// .memfs/at/). Reads write nothing; revert and restore write the old
// content as new versions through the session, so the flush records them
// like any change, and a flush on a shared store states the version it
// replaces: another writer's newer version goes to the conflict policy,
// never overwritten silently.

// ErrNoVersion is the error of a version or a target that history does
// not hold (in a *fs.PathError naming the key); it satisfies
// errors.Is(err, fs.ErrNotExist).
var ErrNoVersion = fmt.Errorf("no such version: %w", fs.ErrNotExist)

// Versions returns the versions of key, oldest first (those of the names
// it was renamed from included: see history.Store.Versions).
func (f *FS) Versions(ctx context.Context, key string) ([]history.Version, error) {
	return f.rec.h.Versions(ctx, key)
}

// ReadVersion returns the version of key at seq and its bytes (nil for a
// delete or a node without a value). A damaged version is an error
// (errors.Is(err, backend.ErrCorrupt)), never wrong bytes.
func (f *FS) ReadVersion(ctx context.Context, key string, seq uint64) (history.Version, []byte, error) {
	vs, err := f.Versions(ctx, key)
	if err != nil {
		return history.Version{}, nil, err
	}
	i := slices.IndexFunc(vs, func(v history.Version) bool { return v.Seq == seq })
	if i < 0 {
		return history.Version{}, nil, &fs.PathError{Op: "version " + strconv.FormatUint(seq, 10), Path: key, Err: ErrNoVersion}
	}
	data, err := f.versionData(ctx, &vs[i])
	return vs[i], data, err
}

func (f *FS) versionData(ctx context.Context, v *history.Version) ([]byte, error) {
	if v.Redacted {
		return nil, fmt.Errorf("version %d of %s: %w", v.Seq, v.Key, history.ErrRedacted)
	}
	if v.Addr.IsZero() {
		return nil, nil
	}
	return f.rec.h.Get(ctx, v.Addr)
}

// ResolveTarget returns the seq a target names: a decimal seq, or a snapshot
// name (RUN/latest included).
func (f *FS) ResolveTarget(ctx context.Context, target string) (uint64, error) {
	if seq, err := strconv.ParseUint(target, 10, 64); err == nil {
		return seq, nil
	}
	s, err := f.rec.h.ResolveSnapshot(ctx, target)
	if err != nil {
		return 0, err
	}
	return s.Seq, nil
}

// NamespaceAt returns the namespace as of target (a seq or a snapshot),
// sorted by key.
func (f *FS) NamespaceAt(ctx context.Context, target string) ([]history.Version, error) {
	seq, err := f.ResolveTarget(ctx, target)
	if err != nil {
		return nil, err
	}
	return f.rec.h.At(ctx, seq)
}

// CreateSnapshot flushes, then names the event log's head: the snapshot
// holds every write acknowledged before it. by says who took it.
func (f *FS) CreateSnapshot(ctx context.Context, name, by string) (history.Snapshot, error) {
	if err := f.historyView().TakeSnapshot(ctx, name, by); err != nil {
		return history.Snapshot{}, err
	}
	return f.rec.h.ResolveSnapshot(ctx, name)
}

// Snapshots returns the named snapshots (checkpoints RUN/STEP included).
func (f *FS) Snapshots(ctx context.Context) ([]history.Snapshot, error) {
	return f.rec.h.Snapshots(ctx)
}

// ResolveSnapshot returns the snapshot name (RUN/latest: the run's
// newest checkpoint).
func (f *FS) ResolveSnapshot(ctx context.Context, name string) (history.Snapshot, error) {
	return f.rec.h.ResolveSnapshot(ctx, name)
}

// ListSnapshots returns the snapshots which names: "" every one, "RUN/"
// the checkpoints of RUN, "RUN/latest" the run's newest
// (ResolveSnapshot).
func (f *FS) ListSnapshots(ctx context.Context, which string) ([]history.Snapshot, error) {
	if strings.HasSuffix(which, "/"+history.Latest) {
		s, err := f.ResolveSnapshot(ctx, which)
		if err != nil {
			return nil, err
		}
		return []history.Snapshot{s}, nil
	}
	ss, err := f.Snapshots(ctx)
	return slices.DeleteFunc(ss, func(s history.Snapshot) bool { return !strings.HasPrefix(s.Name, which) }), err
}

// RemoveSnapshot removes the snapshot name (its versions stay).
func (f *FS) RemoveSnapshot(ctx context.Context, name string) error {
	return f.rec.h.RemoveSnapshot(ctx, name)
}

// versionAt returns key's version as of target: "" for the one before its
// last (a deleted key: its last before the delete), else the key's
// version in the namespace at the target.
func (f *FS) versionAt(ctx context.Context, key, target string) (history.Version, error) {
	if target != "" {
		ns, err := f.NamespaceAt(ctx, target)
		if err != nil {
			return history.Version{}, err
		}
		i := slices.IndexFunc(ns, func(v history.Version) bool { return v.Key == key })
		if i < 0 {
			return history.Version{}, &fs.PathError{Op: "at " + target, Path: key, Err: ErrNoVersion}
		}
		return ns[i], nil
	}
	vs, err := f.Versions(ctx, key)
	if err != nil {
		return history.Version{}, err
	}
	gone := len(vs) == 0 || vs[len(vs)-1].Op == history.OpDelete
	v, ok, err := history.RevertTarget(key, vs, gone)
	if !ok && err == nil {
		err = &fs.PathError{Op: "previous version", Path: key, Err: ErrNoVersion}
	}
	return v, err
}

// Revert writes key's content and mode as of target (see versionAt; a
// deleted key comes back) as a new version, and flushes. It returns the
// version it went back to.
func (f *FS) Revert(ctx context.Context, key, target string) (history.Version, error) {
	v, err := f.versionAt(ctx, key, target)
	if err != nil {
		return v, err
	}
	if err := f.putVersion(ctx, key, &v); err != nil {
		return v, err
	}
	return v, f.Flush(ctx)
}

// Restore writes every file under prefix ("" for all) of the snapshot
// (or seq) target whose content or mode differs now, as new versions, and
// flushes. It returns the keys it wrote. Files under prefix that the
// snapshot lacks stay: a restore never deletes.
func (f *FS) Restore(ctx context.Context, target, prefix string) ([]string, error) {
	ns, err := f.NamespaceAt(ctx, target)
	if err != nil {
		return nil, err
	}
	var wrote []string
	for i := range ns {
		v := &ns[i]
		if !v.Mode.IsRegular() || !underPrefix(v.Key, prefix) {
			continue
		}
		if err := f.c.Resolve(ctx, v.Key); err != nil && !errors.Is(err, os.ErrNotExist) {
			return wrote, err
		}
		if e, ok := f.c.Entry(v.Key); ok && sameAsVersion(&e, v) {
			continue
		}
		if err := f.putVersion(ctx, v.Key, v); err != nil {
			return wrote, err
		}
		wrote = append(wrote, v.Key)
	}
	return wrote, f.Flush(ctx)
}

// sameAsVersion reports whether e holds what putVersion would write of v:
// its bytes, mode, user.memfs.* attributes (but those memfs maintains)
// and, when this process may chown, owner.
func sameAsVersion(e *backend.Entry, v *history.Version) bool {
	if e.Info.Mode != v.Mode || history.AddrOf(e.Value) != v.Addr ||
		os.Geteuid() == 0 && (e.Info.UID != v.UID || e.Info.GID != v.GID) {
		return false
	}
	return maps.EqualFunc(settableAttrs(e.Info.XAttrs), settableAttrs(v.XAttrs), bytes.Equal)
}

// settableAttrs returns the attributes of x that settableAttr allows.
func settableAttrs(x map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for name, val := range x {
		if settableAttr(name) {
			out[name] = val
		}
	}
	return out
}

// settableAttr reports whether name is a user.memfs.* attribute a caller
// may set (not one memfs maintains): what a revert restores.
func settableAttr(name string) bool {
	return strings.HasPrefix(name, meta.Prefix) && !meta.ReadOnly(name)
}

func underPrefix(key, prefix string) bool {
	p := strings.TrimSuffix(prefix, "/")
	return p == "" || key == p || strings.HasPrefix(key, p+"/")
}

// putVersion writes v's content, mode and user.memfs.* attributes at key
// in the session, and its owner when this process may chown (root);
// else the file keeps its owner, or a new one gets this process's.
func (f *FS) putVersion(ctx context.Context, key string, v *history.Version) error {
	if !v.Mode.IsRegular() {
		return &fs.PathError{Op: "revert", Path: key, Err: fmt.Errorf("%w: version %d is a %v, not a file", ErrNoVersion, v.Seq, v.Mode.Type())}
	}
	data, err := f.versionData(ctx, v)
	if err != nil {
		return err
	}
	if err := f.c.Resolve(ctx, key); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := f.c.Set(key, data); err != nil {
		return err
	}
	mode := v.Mode.Perm()
	attr := session.Attr{Mode: &mode}
	if os.Geteuid() == 0 {
		attr.UID, attr.GID = &v.UID, &v.GID
	}
	if _, err := f.c.SetAttr(ctx, key, attr); err != nil {
		return err
	}
	return f.putXAttrs(ctx, key, v.XAttrs)
}

// putXAttrs makes key's user.memfs.* attributes those of x, but the ones
// memfs maintains (meta.ReadOnly).
func (f *FS) putXAttrs(ctx context.Context, key string, x map[string][]byte) error {
	xa := f.c.XAttrs()
	names, err := xa.List(key)
	if err != nil {
		return err
	}
	want := settableAttrs(x)
	for _, name := range names {
		if _, keep := want[name]; !keep && settableAttr(name) {
			if err := xa.Remove(ctx, key, name); err != nil {
				return err
			}
		}
	}
	for name, value := range want {
		if now, err := xa.Get(key, name); err == nil && bytes.Equal(now, value) {
			continue
		}
		if err := xa.Set(ctx, key, name, value, 0); err != nil {
			return err
		}
	}
	return nil
}

// Diff returns the unified diff of key between a and b: each a seq or a
// snapshot name; "" for a is the version before the last (nothing, for a
// key with one version), "" for b the session's present content.
func (f *FS) Diff(ctx context.Context, key, a, b string) (string, error) {
	var old []byte
	aName := "/dev/null" // a key with one version: what it was made with
	va, err := f.versionAt(ctx, key, a)
	switch {
	case a == "" && errors.Is(err, ErrNoVersion):
	case err != nil:
		return "", err
	default:
		if old, aName, err = f.diffSide(ctx, key, &va); err != nil {
			return "", err
		}
	}
	var now []byte
	bName := key
	if b == "" {
		if err := f.c.Resolve(ctx, key); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		now, _ = f.c.Get(key)
	} else {
		vb, err := f.versionAt(ctx, key, b)
		if err != nil {
			return "", err
		}
		if now, bName, err = f.diffSide(ctx, key, &vb); err != nil {
			return "", err
		}
	}
	return unifiedDiff(aName, bName, string(old), string(now)), nil
}

// diffSide is v's bytes and name in a diff: a redacted version is named
// so, its side empty (its bytes are gone; the diff shows what is not).
func (f *FS) diffSide(ctx context.Context, key string, v *history.Version) ([]byte, string, error) {
	name := fmt.Sprintf("%s@%d", key, v.Seq)
	b, err := f.versionData(ctx, v)
	if errors.Is(err, history.ErrRedacted) {
		return nil, name + " (redacted)", nil
	}
	return b, name, err
}
