package dirstore

import (
	"context"
	"errors"
	"fmt"
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
// Only regular files with one name are saved conditionally: directories,
// symlinks, fifos, sockets, devices and hard-link groups are saved as Save
// does, first (a directory the files need is there before them).
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
	var want []backend.Version
	for i := range entries {
		if last[entries[i].Key] != i {
			continue
		}
		if entries[i].Info.Mode.IsRegular() && entries[i].Info.Link == "" {
			cond = append(cond, entries[i])
			want = append(want, expect[i])
		} else {
			plain = append(plain, entries[i])
		}
	}
	if len(plain) > 0 {
		if err := s.Save(ctx, plain...); err != nil {
			return nil, err
		}
	}
	b := s.newBatch(cond)
	defer b.close()
	err := parallel(len(cond), func(i int) error { return b.writeTemp(ctx, i) })
	if err != nil {
		b.removeTemps()
		return nil, err
	}
	conflicts := map[string]string{}
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
	if err := s.syncDirs(b.dirs, sortedKeys(toSync)); err != nil {
		return conflicts, err
	}
	return conflicts, nil
}

// place renames the temp file tmpName in the directory fd to name, the
// last segment of key, which is expected to hold want (absent when zero),
// and returns the conflict key where another version found at key went, or
// "". A directory found there is removed if empty, as Save does; one that
// holds entries is put back and the save fails.
func place(fd int, tmpName, name, key string, want backend.Version) (string, error) {
	for range maxTempAttempts {
		if want == (backend.Version{}) {
			err := unix.Renameat2(fd, tmpName, fd, name, unix.RENAME_NOREPLACE)
			if err == nil {
				return "", nil
			}
			if !errors.Is(err, unix.EEXIST) {
				return "", err
			}
			// Another program created it: exchange, then keep theirs.
		}
		err := unix.Renameat2(fd, tmpName, fd, name, unix.RENAME_EXCHANGE)
		if errors.Is(err, unix.ENOENT) {
			// Another program removed it: our version takes the name.
			want = backend.Version{}
			continue
		}
		if err != nil {
			return "", err
		}
		// tmpName now names what key held.
		var st unix.Stat_t
		if err := unix.Fstatat(fd, tmpName, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			// Never leave what key held under a temp name, which the
			// next Open sweeps away: swap it back.
			unix.Renameat2(fd, tmpName, fd, name, unix.RENAME_EXCHANGE)
			return "", err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			err := ignoringEINTR(func() error { return unix.Unlinkat(fd, tmpName, unix.AT_REMOVEDIR) })
			if err == nil {
				return "", nil
			}
			unix.Renameat2(fd, tmpName, fd, name, unix.RENAME_EXCHANGE)
			if err == unix.ENOTEMPTY || err == unix.EEXIST {
				return "", fmt.Errorf("a %w (%w)", errDirNotEmpty, err)
			}
			return "", err
		}
		found := backend.Version{Size: st.Size, MTime: st.Mtim.Nano()}
		if found == want {
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
