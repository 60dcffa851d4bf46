package route

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/location"
	"github.com/memfs/memfs/quota"
)

// ParseAll reads routes as --route takes them (Parse) into a Table,
// checking each store spec with reg, the stores the program knows (memfs:
// --store's, and mem:). No routes give an empty Table.
func ParseAll(specs []string, reg *location.Registry) (*Table, error) {
	var rs []Route
	for _, s := range specs {
		r, err := Parse(s)
		if err != nil {
			return nil, err
		}
		loc, err := reg.Parse(r.Store)
		if err != nil {
			return nil, fmt.Errorf("route %s: %w", r.Prefix, err)
		}
		r.Shared = !loc.Local() && r.Tier != Working // mem: is no directory, and no one else's
		rs = append(rs, r)
	}
	return NewTable(rs)
}

// ParseFlags reads the layout of the mount at mnt as memfs mount takes
// it: its routes (--route, ParseAll) and its quotas (--quota,
// quota.ParseAll), after those of the config file (Config), which the
// flags override prefix by prefix.
func ParseFlags(mnt string, routes, quotas []string, reg *location.Registry) (*Table, []quota.Limit, error) {
	c, err := ReadConfig(ConfigPath())
	if err != nil {
		return nil, nil, err
	}
	routes, quotas = c.Flags(mnt, routes, quotas)
	t, err := ParseAll(routes, reg)
	if err != nil {
		return nil, nil, fmt.Errorf("--route %w", err)
	}
	ls, err := quota.ParseAll(quotas)
	if err != nil {
		return nil, nil, fmt.Errorf("--quota %w", err)
	}
	return t, ls, nil
}

// Open opens the store of every route of t through reg (a read-only
// route's read-only, as every store with o.ReadOnly), and returns the
// Store over them and def, the default route's (NewStore), whose
// directory is defDir ("" for a store that is none). Two routes of one
// directory (or one inside the other's) are refused: a read-only route
// takes no lock that would tell. The directories it opened are t's Dirs.
// When it fails, the stores it opened are closed again; def stays the
// caller's.
func Open(ctx context.Context, t *Table, reg *location.Registry, def backend.SysStore, defDir string, o location.Options) (backend.SysStore, error) {
	var opened []backend.Store
	fail := func(err error) (backend.SysStore, error) {
		for _, st := range slices.Backward(opened) {
			st.Close()
		}
		return nil, err
	}
	dirs := map[string]string{} // a local store's directory: the route that opened it
	if defDir != "" {
		dirs[defDir] = "default"
	}
	for _, r := range t.Routes() {
		loc, err := reg.Parse(r.Store)
		if err != nil {
			return fail(fmt.Errorf("route %s: %w", r.Prefix, err))
		}
		if d := loc.Dir(); d != "" {
			// A read-only route opens its store without its lock: two
			// routes of one directory would not exclude each other.
			for other, by := range dirs {
				if d == other || strings.HasPrefix(d, other+"/") || strings.HasPrefix(other, d+"/") {
					return fail(fmt.Errorf("route %s: its store %s is also route %s's (or inside it, or holds it)", r.Prefix, d, by))
				}
			}
			dirs[d] = r.Prefix
			t.dirs = append(t.dirs, d)
		}
		ro := o
		ro.ReadOnly = o.ReadOnly || r.ReadOnly
		st, err := loc.Open(ctx, ro)
		if errors.Is(err, backend.ErrStoreInUse) {
			err = fmt.Errorf("%w (another memfs serves it, or another route of this mount names it)", err)
		}
		if err != nil {
			return fail(fmt.Errorf("route %s: %w", r.Prefix, err))
		}
		opened = append(opened, st)
	}
	st, err := NewStore(t, opened, def)
	if err != nil {
		return fail(err)
	}
	return st, nil
}
