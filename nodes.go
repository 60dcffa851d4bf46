package memfs

import (
	"context"
	"io/fs"
	"slices"
	"strings"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/session"
)

// RemoveName removes the name key from c. The value is loaded first: when
// the node has other names (hard links), they are saved with it, and a
// session that never loaded it would save them empty.
func RemoveName(ctx context.Context, c *session.Context, key string) error {
	if st, err := c.Stat(key); err == nil && st.Nlink > 1 {
		if err := c.Resolve(ctx, key); err != nil {
			return err
		}
	}
	return c.Delete(key)
}

// RemoveTree removes every key under dir, then the directories under it,
// children first, and dir itself when it is a directory: directories are
// entries of the store, and nothing is left behind. It returns how many
// names it removed.
func RemoveTree(ctx context.Context, c *session.Context, dir string) (int, error) {
	removed := 0
	var dirs []string
	for _, e := range Nodes(c, dir+"/") {
		if e.Info.Mode.IsDir() {
			dirs = append(dirs, e.Key)
			continue
		}
		if err := RemoveName(ctx, c, e.Key); err != nil {
			return removed, err
		}
		removed++
	}
	if st, err := c.Stat(dir); err == nil && st.IsDir {
		dirs = append([]string{dir}, dirs...)
	}
	for _, d := range slices.Backward(dirs) {
		if err := c.Rmdir(d); err != nil {
			return removed, err
		}
		removed++
	}
	return removed, nil
}

// List lists the directories and other nodes of c under prefix, sorted
// by key (Nodes); a symlink carries its target as its value.
func List(ctx context.Context, c *session.Context, prefix string) ([]backend.Entry, error) {
	entries := Nodes(c, prefix)
	for i, e := range entries {
		if e.Info.Mode.Type() == fs.ModeSymlink {
			target, err := c.Readlink(ctx, e.Key)
			if err != nil {
				return nil, err
			}
			entries[i].Value = []byte(target)
		}
	}
	slices.SortFunc(entries, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	return entries, nil
}

// Remove removes keys from c, as mountclient.Client.Remove does through a
// mount: with recursive, every key under each too (RemoveTree). A key
// that names nothing is an error that satisfies errors.Is(err,
// fs.ErrNotExist), unless missing (when not nil) returns nil for it, or
// its own error.
func Remove(ctx context.Context, c *session.Context, keys []string, recursive bool, missing func(key string) error) error {
	for _, k := range keys {
		k = strings.TrimSuffix(k, "/")
		removed := 0
		if c.Has(k) {
			if err := RemoveName(ctx, c, k); err != nil {
				return err
			}
			removed++
		}
		if recursive {
			n, err := RemoveTree(ctx, c, k)
			if err != nil {
				return err
			}
			removed += n
		}
		if removed > 0 {
			continue
		}
		if missing == nil {
			return &fs.PathError{Op: "remove", Path: k, Err: fs.ErrNotExist}
		}
		if err := missing(k); err != nil {
			return err
		}
	}
	return nil
}
