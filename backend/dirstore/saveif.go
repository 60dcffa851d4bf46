package dirstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

var _ backend.Conditional = (*Store)(nil)

// SaveIf is Save with each entry expecting its key's stored version (see
// backend.Conditional). Another program may write the directory at any
// time; the check cannot be a stat before the rename (the program could
// write in between), so the entry takes the key with renameat2's
// RENAME_EXCHANGE, which swaps the two names atomically, and what it
// displaced is then looked at: the expected version is removed, any other
// is renamed to its conflict key. Nothing another program wrote is ever
// overwritten unseen. Data is durable as with Save.
func (s *Store) SaveIf(ctx context.Context, entries []backend.Entry, expect []backend.Version) (map[string]string, error) {
	if len(expect) != len(entries) {
		return nil, fmt.Errorf("dirstore: SaveIf: %d entries, %d versions", len(entries), len(expect))
	}
	for i := range entries {
		if err := checkKey("save", entries[i].Key); err != nil {
			return nil, err
		}
		if err := backend.ValidateXAttrs(entries[i].Info.XAttrs); err != nil {
			return nil, saveErr(entries[i].Key, err)
		}
	}
	// Duplicate keys: the last entry wins, as in Save.
	last := make(map[string]int, len(entries))
	for i := range entries {
		last[entries[i].Key] = i
	}
	temps := make([]temp, len(entries))
	err := parallel(len(entries), func(i int) error {
		if last[entries[i].Key] != i {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		t, err := s.writeTemp(&entries[i], true)
		if err != nil {
			return saveErr(entries[i].Key, err)
		}
		temps[i] = t
		return nil
	})
	if err != nil {
		s.removeTemps(temps)
		return nil, err
	}
	conflicts := map[string]string{}
	dirs := map[string]bool{}
	for i := range entries {
		if temps[i].name == "" {
			continue
		}
		key := entries[i].Key
		conflict, err := s.place(temps[i].name, key, expect[i])
		if err != nil {
			s.removeTemps(temps[i:])
			return conflicts, saveErr(key, err)
		}
		temps[i].name = ""
		if conflict != "" {
			conflicts[key] = conflict
		}
		for _, d := range temps[i].dirs(key) {
			dirs[d] = true
		}
	}
	if err := s.syncDirs(sortedKeys(dirs)); err != nil {
		return conflicts, err
	}
	return conflicts, nil
}

// place renames the temp file tmp to key, which is expected to hold want
// (absent when zero), and returns the conflict key where another version
// found at key went, or "".
func (s *Store) place(tmp, key string, want backend.Version) (string, error) {
	dir, tmpName := backend.Split(tmp)
	_, name := backend.Split(key)
	if dir == "" {
		dir = "."
	}
	d, err := s.root.Open(dir)
	if err != nil {
		return "", err
	}
	defer d.Close()
	fd := int(d.Fd())
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
		found := backend.Version{Size: st.Size, MTime: st.Mtim.Nano()}
		if st.Mode&unix.S_IFMT == unix.S_IFREG && found == want {
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
	return "", fmt.Errorf("%s kept changing under the save: %w", key, os.ErrExist)
}
