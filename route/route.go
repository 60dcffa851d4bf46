// Package route serves one namespace from several stores: each route is a
// key prefix ("skills/") with a store of its own, and the longest prefix
// that a key starts with decides where it lives; a key no route claims
// lives in the default route (the mount's --store).
//
//	memfs mount --route skills/=dir:/srv/team-skills:ro --route scratch/=mem: ~/memory
//
// A route's store holds its keys without the prefix, as a directory
// mounted at the prefix would ("skills/git/SKILL.md" is "git/SKILL.md" in
// /srv/team-skills), so an existing directory of skills can be a route as
// it is. The prefix's own directory ("skills") is an entry of the route
// above it; it is a mount point: neither it nor a directory above it can
// be removed or renamed (EBUSY).
//
// A Table is the routes of a mount: it answers what a session must check
// before a change (a read-only route refuses it, a rename or a hard link
// between two routes fails with EXDEV, as between two filesystems, so
// that mv copies and removes) and which keys live in memory only (a
// working route, mem:, whose values reach no disk: no journal, no
// history, no index). A Store (NewStore) is the backend.Store over the
// routes' stores that the session flushes to.
package route

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// Tier is what a route's store keeps.
type Tier int

const (
	// Persistent routes keep their keys in a store that survives the
	// process (badger, dir, etcd).
	Persistent Tier = iota
	// Working routes keep their keys in memory only (mem:): gone at
	// unmount, never written to a disk by memfs.
	Working
	// Indexed routes are sources to search and cite, never to write:
	// an archive, another team's notes ("?tier=indexed"). They are
	// read-only, and of two search results of one score theirs comes
	// last.
	Indexed
)

var tierNames = [...]string{Persistent: "persistent", Working: "working", Indexed: "indexed"}

func (t Tier) String() string { return tierNames[t] }

// Rank is the tier's place in the tie rule of search and context packs:
// of two results of one score, the lower rank's comes first (working,
// then persistent, then indexed).
func (t Tier) Rank() int { return [...]int{Working: 0, Persistent: 1, Indexed: 2}[t] }

// A Route is one prefix of the namespace and the store that serves it.
type Route struct {
	// Prefix is the keys' common start, ending with "/": "skills/".
	// The default route's is "".
	Prefix string
	// Store is the store's spec: "dir:/srv/team-skills", "mem:".
	Store string
	// ReadOnly routes refuse every change (EROFS through a mount), and
	// their stores are opened read-only.
	ReadOnly bool
	// Tier is Working for a mem: store, Indexed for a route that says
	// so ("?tier=indexed"), else Persistent.
	Tier Tier
	// TTL is the time to live of the route's files that set none
	// (package expire); 0 for none. The spec's "?ttl=1h".
	TTL time.Duration
	// Shared is a store other mounts write too (etcd), as ParseAll
	// found it: a mount with one runs under a conflict policy.
	Shared bool
}

// Name is the route as messages name it: its prefix, or "default".
func (r Route) Name() string {
	if r.Prefix == "" {
		return "default"
	}
	return r.Prefix
}

// String is the route as --route takes it.
func (r Route) String() string {
	var opts []string
	if r.TTL > 0 {
		opts = append(opts, "ttl="+r.TTL.String())
	}
	if r.Tier == Indexed {
		opts = append(opts, "tier="+r.Tier.String())
	}
	s := r.Prefix + "=" + r.Store
	if len(opts) > 0 {
		s += "?" + strings.Join(opts, "&")
	}
	if r.ReadOnly && r.Tier != Indexed {
		s += ":ro"
	}
	return s
}

// Parse reads a route as --route takes it: PREFIX=SPEC[?OPTIONS][:ro],
// where SPEC is a store spec, a trailing ":ro" makes the route
// read-only, and OPTIONS, joined by "&", are "ttl=1h" (a time to live
// for the route's files that set none, package expire) and
// "tier=indexed" (a source to search, never to write: read-only). The
// prefix is a key ("skills", "team/skills"), with or without its final
// "/".
func Parse(s string) (Route, error) {
	prefix, spec, ok := strings.Cut(s, "=")
	if !ok || spec == "" {
		return Route{}, fmt.Errorf("route %q: want PREFIX=STORE[?ttl=D&tier=indexed][:ro] (skills/=dir:/srv/team-skills:ro, scratch/=mem:?ttl=1h)", s)
	}
	prefix = strings.TrimSuffix(prefix, "/")
	if err := backend.CheckStoreKey(prefix); err != nil {
		return Route{}, fmt.Errorf("route %q: the prefix: %w", s, err)
	}
	r := Route{Prefix: prefix + "/", Store: spec}
	if rest, ro := strings.CutSuffix(spec, ":ro"); ro {
		r.Store, r.ReadOnly = rest, true
	}
	if r.Store == "mem:" || strings.HasPrefix(r.Store, "mem:") {
		r.Tier = Working
	}
	if i := strings.LastIndex(r.Store, "?"); i >= 0 {
		if err := r.options(r.Store[i+1:]); err != nil {
			return Route{}, fmt.Errorf("route %q: %w", s, err)
		}
		r.Store = r.Store[:i]
	}
	return r, nil
}

// options sets what the options of a route's spec say ("ttl=1h&tier=indexed").
func (r *Route) options(q string) error {
	for opt := range strings.SplitSeq(q, "&") {
		k, v, _ := strings.Cut(opt, "=")
		switch k {
		case "ttl":
			d, err := meta.ParseTTL(v)
			if err != nil {
				return err
			}
			r.TTL = d
		case "tier":
			switch {
			case v == Indexed.String() && r.Tier != Working:
				r.Tier, r.ReadOnly = Indexed, true
			case v != r.Tier.String():
				return fmt.Errorf("tier=%s: a mem: store's tier is working, another store's persistent or indexed", v)
			}
		default:
			return fmt.Errorf("unknown option %q: want ttl=DURATION or tier=indexed", opt)
		}
	}
	return nil
}

// check refuses key, of route r, when its store cannot hold it: the name
// at the route's root is one its store keeps for itself.
func (r Route) check(key string) error {
	if r.Prefix != "" && backend.IsReserved(key[len(r.Prefix):]) {
		return fmt.Errorf("%w: %w: %s at the root of route %s", backend.ErrInvalidKey, backend.ErrReserved, key[len(r.Prefix):], r.Name())
	}
	return nil
}

// ErrCrossRoute is the error of a rename or a hard link between two
// routes (EXDEV through a mount).
var ErrCrossRoute = errors.New("not in the same route")

// ErrMountPoint is the error of a removal or a rename of a route's own
// directory (EBUSY through a mount).
var ErrMountPoint = errors.New("the directory of a route")

// ReadOnlyError is the error of a change to a read-only route. It wraps
// backend.ErrReadOnly (EROFS through a mount).
type ReadOnlyError struct{ Route string }

func (e *ReadOnlyError) Error() string {
	return "route " + e.Route + " is read-only"
}

func (e *ReadOnlyError) Unwrap() error { return backend.ErrReadOnly }

// A Table is the routes of one namespace. The zero Table, and a nil one,
// has the default route only.
type Table struct {
	routes []Route  // longest prefix first; the default route is not among them
	dirs   []string // the local stores' directories, as Open opened them
}

// NewTable returns the table of routes, which must have distinct prefixes
// and none of them "" (the default route is the mount's store).
func NewTable(routes []Route) (*Table, error) {
	t := &Table{routes: slices.Clone(routes)}
	slices.SortFunc(t.routes, func(a, b Route) int {
		if d := len(b.Prefix) - len(a.Prefix); d != 0 {
			return d
		}
		return strings.Compare(a.Prefix, b.Prefix)
	})
	for i, r := range t.routes {
		if r.Prefix == "" || !strings.HasSuffix(r.Prefix, "/") {
			return nil, fmt.Errorf("route %s: a prefix ends with /", r)
		}
		if i > 0 && t.routes[i-1].Prefix == r.Prefix {
			return nil, fmt.Errorf("two routes for %s", r.Prefix)
		}
	}
	return t, nil
}

// Routes returns the routes, longest prefix first, without the default.
func (t *Table) Routes() []Route {
	if t == nil {
		return nil
	}
	return slices.Clone(t.routes)
}

// Dirs returns the directories of the routes' local stores that Open
// opened: a mountpoint must not overlap one.
func (t *Table) Dirs() []string {
	if t == nil {
		return nil
	}
	return slices.Clone(t.dirs)
}

// Empty reports whether the table has no route but the default.
func (t *Table) Empty() bool { return t == nil || len(t.routes) == 0 }

// index is the position of the route key lives in, len(t.routes) for the
// default route.
func (t *Table) index(key string) int {
	if t == nil {
		return 0
	}
	for i, r := range t.routes {
		if strings.HasPrefix(key, r.Prefix) {
			return i
		}
	}
	return len(t.routes)
}

// Of returns the route key lives in (the zero Route: the default).
func (t *Table) Of(key string) Route {
	if i := t.index(key); t != nil && i < len(t.routes) {
		return t.routes[i]
	}
	return Route{}
}

// Where is the route key lives in, as messages name it (Route.Name), and
// its tier.
func (t *Table) Where(key string) (route, tier string) {
	r := t.Of(key)
	return r.Name(), r.Tier.String()
}

// Apart reports whether a and b live in different routes.
func (t *Table) Apart(a, b string) bool { return t.index(a) != t.index(b) }

// Ephemeral reports whether key lives in a working route: its value must
// reach no disk.
func (t *Table) Ephemeral(key string) bool { return t.Of(key).Tier == Working }

// TTL is the time to live of the files of key's route that set none; 0
// for none.
func (t *Table) TTL(key string) time.Duration { return t.Of(key).TTL }

// ReadOnly reports whether key is in a read-only route.
func (t *Table) ReadOnly(key string) bool { return t.Of(key).ReadOnly }

// Shared reports whether a route's store is one other mounts write too
// (Route.Shared): the mount runs under a conflict policy, whatever its
// default route's store.
func (t *Table) Shared() bool {
	return slices.ContainsFunc(t.Routes(), func(r Route) bool { return r.Shared && !r.ReadOnly })
}

// Working returns the prefixes of the working routes.
func (t *Table) Working() []string {
	var w []string
	for _, r := range t.Routes() {
		if r.Tier == Working {
			w = append(w, r.Prefix)
		}
	}
	return w
}

// MountPoint reports whether key is a route's own directory ("skills" for
// the route "skills/") or a directory above one ("team" for the route
// "team/skills/"): moving or removing it would move or remove the route.
func (t *Table) MountPoint(key string) bool {
	if t == nil {
		return false
	}
	for _, r := range t.routes {
		if dir := r.Prefix[:len(r.Prefix)-1]; dir == key || strings.HasPrefix(dir, key+"/") {
			return true
		}
	}
	return false
}

// Refuse returns the error of op (a change) on key: a *ReadOnlyError in a
// read-only route, ErrMountPoint for a removal or rename ("rmdir",
// "delete", "rename") of a route's directory, an error wrapping
// backend.ErrReserved for a name a route's store keeps for itself at its
// root ("skills/.memfs", as ".memfs" is at the mount's root), else nil.
func (t *Table) Refuse(op, key string) error {
	r := t.Of(key)
	if r.ReadOnly {
		return &fs.PathError{Op: op, Path: key, Err: &ReadOnlyError{Route: r.Name()}}
	}
	if err := r.check(key); err != nil {
		return &fs.PathError{Op: op, Path: key, Err: err}
	}
	switch op {
	case "rmdir", "delete", "rename":
		if t.MountPoint(key) {
			return &fs.PathError{Op: op, Path: key, Err: ErrMountPoint}
		}
	}
	return nil
}

// Move returns the error of a rename or a hard link (op) from a to b: a
// change refused on either side, or ErrCrossRoute between two routes.
func (t *Table) Move(op, a, b string) error {
	if err := t.Refuse(op, a); err != nil {
		return err
	}
	if err := t.Refuse(op, b); err != nil {
		return err
	}
	if t.Apart(a, b) {
		return &fs.PathError{Op: op, Path: b, Err: ErrCrossRoute}
	}
	return nil
}
