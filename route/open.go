package route

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
		if _, err := reg.Parse(r.Store); err != nil {
			return nil, fmt.Errorf("route %s: %w", r.Prefix, err)
		}
		rs = append(rs, r)
	}
	return NewTable(rs)
}

// ParseFlags reads a mount's layout as memfs mount takes it: its routes
// (--route, ParseAll) and its quotas (--quota, quota.ParseAll).
func ParseFlags(routes, quotas []string, reg *location.Registry) (*Table, []quota.Limit, error) {
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
// Store over them and def, the default route's (NewStore). When it fails,
// the stores it opened are closed again; def stays the caller's.
func Open(ctx context.Context, t *Table, reg *location.Registry, def backend.SysStore, o location.Options) (backend.SysStore, error) {
	var opened []backend.Store
	fail := func(err error) (backend.SysStore, error) {
		for _, st := range slices.Backward(opened) {
			st.Close()
		}
		return nil, err
	}
	for _, r := range t.Routes() {
		loc, err := reg.Parse(r.Store)
		if err != nil {
			return fail(fmt.Errorf("route %s: %w", r.Prefix, err))
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
