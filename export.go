package memfs

import (
	"context"
	"strings"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/session"
	"github.com/memfs/memfs/tree"
)

// Export writes every node of the session under prefix (directories and
// the other nodes, except what the session keeps in memory only) under
// the directory dst, which must exist, as tree.ExportEntries does; the values
// are loaded from the store as they are written.
func (f *FS) Export(ctx context.Context, dst, prefix string, t *tree.Tally, opts tree.ExportOptions) error {
	entries := Nodes(f.c, prefix)
	return tree.ExportEntries(ctx, dst, entries, func(key string) ([]byte, error) {
		if err := f.c.Resolve(ctx, key); err != nil {
			return nil, err
		}
		v, _ := f.c.Get(key)
		return v, nil
	}, t, opts)
}

// Nodes returns every directory and every other node of c under prefix,
// directories first, parents before children, without their values,
// leaving out what c keeps in memory only (session.Context.Local).
func Nodes(c *session.Context, prefix string) []backend.Entry {
	var dirs []backend.Entry
	var walk func(key string)
	walk = func(key string) {
		ents, err := c.ReadDir(key)
		if err != nil {
			return
		}
		for _, d := range ents {
			if !d.IsDir {
				continue
			}
			k := backend.Join(key, d.Name)
			if strings.HasPrefix(k, prefix) && !c.Local(k) {
				if e, ok := dirEntry(c, k); ok {
					dirs = append(dirs, e)
				}
			}
			walk(k)
		}
	}
	walk("")
	out := dirs
	for _, e := range c.Entries(prefix) {
		if !c.Local(e.Key) {
			out = append(out, e)
		}
	}
	return out
}

// dirEntry is the directory k with its attributes.
func dirEntry(c *session.Context, k string) (backend.Entry, bool) {
	st, err := c.Stat(k)
	if err != nil {
		return backend.Entry{}, false
	}
	info := backend.Info{Mode: st.Mode, MTime: st.MTime, ATime: st.ATime, UID: st.UID, GID: st.GID}
	if names, err := c.XAttrs().List(k); err == nil {
		for _, name := range names {
			if v, err := c.XAttrs().Get(k, name); err == nil {
				if info.XAttrs == nil {
					info.XAttrs = map[string][]byte{}
				}
				info.XAttrs[name] = v
			}
		}
	}
	return backend.Entry{Key: k, Info: info}, true
}
