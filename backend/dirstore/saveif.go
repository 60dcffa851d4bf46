package dirstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

var _ backend.Versioned = (*Store)(nil)

// SaveIf is Save with each entry expecting its key's stored version (see
// backend.Versioned). Another program may write the directory at any
// time; the check cannot be a stat before the rename (the program could
// write in between), so the entry takes the key with renameat2's
// RENAME_EXCHANGE, which swaps the two names atomically, and what it
// displaced is then looked at: the expected version is removed, any other
// is renamed to its conflict key. Nothing another program wrote is ever
// overwritten unseen. Data is durable as with Save.
//
// A version is the size, mtime and ctime (backend.Version): the kernel
// moves a node's ctime on every change, its mode, owner, attributes and
// link count included, so another program's chmod or setxattr is a
// conflict too, not a change the save reverts. The ctime a node gets
// cannot be chosen: as Save does, SaveIf writes the one each saved node
// has into the caller's entry (Info.CTime), so that backend.VersionOf of
// it is the version the store holds.
//
// Nodes with one name (regular files, symlinks, fifos, sockets, devices)
// are saved conditionally: directories and hard-link groups are saved as
// Save does, first (a directory the files need is there before them).
func (s *Store) SaveIf(ctx context.Context, entries []backend.Entry, expect []backend.Version) (map[string]string, error) {
	if err := s.writable("save"); err != nil {
		return nil, err
	}
	if len(expect) != len(entries) {
		return nil, fmt.Errorf("dirstore: SaveIf: %d entries, %d versions", len(entries), len(expect))
	}
	if err := checkEntries(entries); err != nil {
		return nil, err
	}
	// Duplicate keys: the last entry wins, as in Save.
	last := make(map[string]int, len(entries))
	for i := range entries {
		last[entries[i].Key] = i
	}
	var plain, cond []backend.Entry
	var plainIdx, condIdx []int
	var want []backend.Version
	for i := range entries {
		if last[entries[i].Key] != i {
			continue
		}
		if !entries[i].Info.Mode.IsDir() && entries[i].Info.Link == "" {
			cond = append(cond, entries[i])
			condIdx = append(condIdx, i)
			want = append(want, expect[i])
		} else {
			plain = append(plain, entries[i])
			plainIdx = append(plainIdx, i)
		}
	}
	conflicts := map[string]string{}
	if len(plain) > 0 {
		if err := s.keepLinkedBeside(ctx, plain, plainIdx, expect, conflicts); err != nil {
			return conflicts, err
		}
		if err := s.Save(ctx, plain...); err != nil {
			return conflicts, err
		}
		for j, i := range plainIdx {
			entries[i].Info.CTime, entries[i].Info.Link = plain[j].Info.CTime, plain[j].Info.Link
		}
	}
	b := s.newBatch(cond)
	defer b.close()
	err := parallel(len(cond), func(i int) error { return b.writeTemp(ctx, i) })
	if err != nil {
		b.removeTemps()
		return nil, err
	}
	toSync := map[string]bool{}
	for i := range b.items {
		it := &b.items[i]
		conflict, err := place(it.dirfd, it.tmp, it.name, it.e.Key, want[i])
		if err != nil {
			b.removeTemps()
			return conflicts, saveErr(it.e.Key, err)
		}
		it.tmp = ""
		if conflict != "" {
			conflicts[it.e.Key] = conflict
		}
		d := it.dir
		toSync[d] = true
		for it.made && d != "" {
			d, _ = backend.Split(d)
			toSync[d] = true
		}
	}
	b.noteCTimes()
	for j, i := range condIdx {
		entries[i].Info.CTime = cond[j].Info.CTime
	}
	if err := s.syncDirs(b.dirs, sortedKeys(toSync)); err != nil {
		return conflicts, err
	}
	return conflicts, nil
}

// keepLinkedBeside checks the names of nodes with several names among
// entries (plain, at their indexes idx in expect) against the versions the
// caller expects, before Save replaces them whatever they hold: a node
// another program changed since (its content, mode, owner or attributes:
// Version.Attrs, as a node with several names has no ctime to tell) or
// put at a name is moved to its conflict key, once per node (its other
// names are then replaced by the save), and listed in conflicts.
func (s *Store) keepLinkedBeside(ctx context.Context, plain []backend.Entry, idx []int, expect []backend.Version, conflicts map[string]string) error {
	want := make(map[string]backend.Version)
	var keys []string
	for j, e := range plain {
		if e.Info.Link != "" && !e.Info.Mode.IsDir() {
			keys = append(keys, e.Key)
			want[e.Key] = expect[idx[j]]
		}
	}
	if len(keys) == 0 {
		return nil
	}
	type inode struct{ dev, ino uint64 }
	moved := make(map[inode]bool)
	return s.deleteKeys(ctx, keys, func(fd int, name, key string) (bool, error) {
		n, err := snapshot(fd, name)
		if err != nil || n.st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return false, err // absent: the save takes the name; a directory: Save's rule
		}
		info := infoOf(&n.st)
		info.XAttrs = n.xattrs
		id := inode{n.st.Dev, n.st.Ino}
		if want[key].Matches(backend.VersionOf(info)) || moved[id] {
			return false, nil
		}
		ck := backend.ConflictKey(key, time.Now())
		_, cname := backend.Split(ck)
		if err := unix.Renameat2(fd, name, fd, cname, unix.RENAME_NOREPLACE); err != nil {
			return false, fmt.Errorf("keep the other version of %s as %s: %w", key, ck, err)
		}
		moved[id] = true
		conflicts[key] = ck
		return true, nil
	})
}

// place renames the temp file tmpName in the directory fd to name, the
// last segment of key, which is expected to hold want (absent when zero),
// and returns the conflict key where another version found at key went, or
// "". A directory found there is removed if empty, as Save does; one that
// holds entries is put back and the save fails.
//
// The exchange moves the ctime of what it displaces, so the version is
// read before it (the node and its attributes), and the node displaced
// must be that node, unchanged but for its ctime (unchangedSince): a
// change in between is a conflict too.
func place(fd int, tmpName, name, key string, want backend.Version) (string, error) {
	for range maxTempAttempts {
		if want.IsZero() {
			err := unix.Renameat2(fd, tmpName, fd, name, unix.RENAME_NOREPLACE)
			if err == nil {
				return "", nil
			}
			if !errors.Is(err, unix.EEXIST) {
				return "", err
			}
			// Another program created it: exchange, then keep theirs.
		}
		before, err := snapshot(fd, name)
		if errors.Is(err, unix.ENOENT) {
			// Another program removed it: our version takes the name.
			want = backend.Version{}
			continue
		}
		if err != nil {
			return "", err
		}
		err = unix.Renameat2(fd, tmpName, fd, name, unix.RENAME_EXCHANGE)
		if errors.Is(err, unix.ENOENT) {
			want = backend.Version{}
			continue
		}
		if err != nil {
			return "", err
		}
		// tmpName now names what key held.
		after, err := snapshot(fd, tmpName)
		if err != nil {
			// Never leave what key held under a temp name, which the
			// next Open sweeps away: swap it back.
			unix.Renameat2(fd, tmpName, fd, name, unix.RENAME_EXCHANGE)
			return "", err
		}
		if after.st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return "", displacedDir(fd, tmpName, name, want)
		}
		if !want.IsZero() && want.Matches(versionOf(&before.st)) && after.unchangedSince(before) {
			return "", unix.Unlinkat(fd, tmpName, 0)
		}
		conflict := backend.ConflictKey(key, time.Now())
		_, cname := backend.Split(conflict)
		if err := unix.Renameat2(fd, tmpName, fd, cname, unix.RENAME_NOREPLACE); err != nil {
			// The displaced version stays under the temp name, which
			// List never shows: put it back rather than hide it.
			unix.Renameat2(fd, tmpName, fd, name, unix.RENAME_EXCHANGE)
			return "", fmt.Errorf("keep the other version of %s as %s: %w", key, conflict, err)
		}
		return conflict, nil
	}
	return "", fmt.Errorf("%s %w", key, errChanging)
}

// displacedDir handles the directory that an exchange moved from name to
// tmpName. Where the caller expected a stored version (want: its own
// directory, which it removed, the name reused), it is removed if empty
// (removeDisplacedDir). Where the caller expected nothing, it is another
// program's, empty or not: swapped back, never removed, and the save
// fails with EEXIST (the directory keeps the name; a session moves its
// file beside it).
func displacedDir(fd int, tmpName, name string, want backend.Version) error {
	if !want.IsZero() {
		return removeDisplacedDir(fd, tmpName, name)
	}
	if err := unix.Renameat2(fd, tmpName, fd, name, unix.RENAME_EXCHANGE); err != nil {
		return fmt.Errorf("put back another program's directory: %w", err)
	}
	return fmt.Errorf("another program's directory holds the name: %w", unix.EEXIST)
}

// removeDisplacedDir removes the directory that an exchange moved from
// name to tmpName if it is empty, as Save does; one that holds entries is
// swapped back, and the save fails.
func removeDisplacedDir(fd int, tmpName, name string) error {
	err := ignoringEINTR(func() error { return unix.Unlinkat(fd, tmpName, unix.AT_REMOVEDIR) })
	if err == nil {
		return nil
	}
	unix.Renameat2(fd, tmpName, fd, name, unix.RENAME_EXCHANGE)
	if err == unix.ENOTEMPTY || err == unix.EEXIST {
		return fmt.Errorf("a %w (%w)", errDirNotEmpty, err)
	}
	return err
}

// versionOf is the backend.Version of a node as stat(2) describes it.
func versionOf(st *unix.Stat_t) backend.Version {
	return backend.Version{Size: st.Size, MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano()}
}

// deleteVersionOf is the version of a node a conditional delete compares:
// versionOf, but a symlink's without its ctime, which every Load moves
// (reading the target moves its atime, which Load puts back). A symlink
// is its target: another program changes it by making a new one, with a
// new mtime.
func deleteVersionOf(st *unix.Stat_t) backend.Version {
	v := versionOf(st)
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		v.CTime = 0
	}
	return v
}

// node is what a conditional save or delete knows of a node: its stat and,
// for a regular file, its user.* attributes.
type node struct {
	st     unix.Stat_t
	xattrs map[string][]byte
}

// snapshot reads the node name in fd, without following it.
func snapshot(fd int, name string) (node, error) {
	var n node
	if err := unix.Fstatat(fd, name, &n.st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return n, err
	}
	if n.st.Mode&unix.S_IFMT != unix.S_IFREG {
		return n, nil
	}
	x, err := pathXAttrs(fd, name)
	n.xattrs = x
	return n, err
}

// unchangedSince reports whether n, read after a rename that moved the
// node's ctime, is the node before was, with nothing else changed: the
// same inode, type and mode, owner, size, mtime and attributes.
func (n node) unchangedSince(before node) bool {
	a, b := &n.st, &before.st
	return a.Dev == b.Dev && a.Ino == b.Ino && a.Mode == b.Mode && a.Uid == b.Uid && a.Gid == b.Gid &&
		a.Size == b.Size && a.Mtim == b.Mtim && a.Nlink == b.Nlink && maps.EqualFunc(n.xattrs, before.xattrs, bytes.Equal)
}

var _ backend.BesideKeeper = (*Store)(nil)

// KeepBeside moves the file, symlink or special file at key (another
// program's, where a session saves a directory) to its conflict key, with
// RENAME_NOREPLACE, and returns that key (see backend.BesideKeeper). A
// node that became a directory meanwhile would move aside whole: nothing
// is lost either way.
func (s *Store) KeepBeside(ctx context.Context, key string) (string, error) {
	var moved string
	err := s.deleteKeys(ctx, []string{key}, func(fd int, name, key string) (bool, error) {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return false, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return false, nil
		}
		ck := backend.ConflictKey(key, time.Now())
		_, cname := backend.Split(ck)
		if err := unix.Renameat2(fd, name, fd, cname, unix.RENAME_NOREPLACE); err != nil {
			return false, err
		}
		moved = ck
		return true, nil
	})
	return moved, err
}

var _ backend.ConditionalDeleter = (*Store)(nil)

// DeleteIf is Delete with each key expecting its stored version (see
// backend.ConditionalDeleter): a node another program changed since (its
// content, mode, owner or attributes: the ctime moved) or put in its
// place stays, and is listed in kept. The check cannot be a stat before
// the unlink (the program could write in between): the node is renamed to
// a temp name first, and looked at there; one that is not the expected
// version goes back under its name (or, when another program made a new
// node there meanwhile, to its conflict key: both are kept). For that
// moment the name is absent. A zero version expects the key absent: a
// node found there is another writer's, and stays. A directory is
// deleted as Delete does. Every key kept is reported on each running
// Watch: nothing changed, so the kernel reports nothing, and a reader
// that took the key for gone must look again.
func (s *Store) DeleteIf(ctx context.Context, keys []string, expect []backend.Version) (kept []string, err error) {
	if len(expect) != len(keys) {
		return nil, fmt.Errorf("dirstore: DeleteIf: %d keys, %d versions", len(keys), len(expect))
	}
	want := make(map[string]backend.Version, len(keys))
	for i, k := range keys {
		want[k] = expect[i]
	}
	err = s.deleteKeys(ctx, keys, func(fd int, name, key string) (bool, error) {
		removed, theirs, err := removeIf(fd, name, key, want[key])
		if theirs {
			kept = append(kept, key)
		}
		return removed, err
	})
	slices.Sort(kept)
	for _, k := range kept {
		s.reportKept(k)
	}
	return kept, err
}

// removeIf removes the node name in fd, the last segment of key, if it is
// want, and reports whether it did, and whether another writer's version
// stays there (kept) instead.
func removeIf(fd int, name, key string, want backend.Version) (removed, kept bool, err error) {
	before, err := snapshot(fd, name)
	switch {
	case absentErr(err):
		return false, false, nil
	case err != nil:
		return false, false, err
	case before.st.Mode&unix.S_IFMT == unix.S_IFDIR:
		removed, err := removeNode(fd, name)
		return removed, false, err
	case !want.Matches(deleteVersionOf(&before.st)):
		return false, true, nil
	}
	tmp, err := tempName(func(n string) error { return unix.Renameat2(fd, name, fd, n, unix.RENAME_NOREPLACE) })
	if absentErr(err) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	after, err := snapshot(fd, tmp)
	if err == nil && after.unchangedSince(before) {
		return true, false, ignoringEINTR(func() error { return unix.Unlinkat(fd, tmp, 0) })
	}
	// Changed in between: theirs stays.
	err = unix.Renameat2(fd, tmp, fd, name, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EEXIST) {
		_, cname := backend.Split(backend.ConflictKey(key, time.Now()))
		err = unix.Renameat2(fd, tmp, fd, cname, unix.RENAME_NOREPLACE)
	}
	return false, err == nil, err
}
