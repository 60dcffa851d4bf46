package route

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/memfs/memfs/backend"
)

// A part is one route's store.
type part struct {
	Route
	st backend.Store
}

// store is the backend.Store over a Table's stores: every key goes to the
// store of its route, without the route's prefix; system records (the
// event log, the search index, history) go to the default route's. What
// NewStore returns wraps it in a type that claims exactly the
// capabilities the routes' stores share (caps_gen.go).
type store struct {
	t     *Table
	limit backend.KeyLimit // the shortest of the routes'

	parts []part // as t.routes, then the default route
	sys   backend.SysStore
}

// NewStore returns the Store of t over stores: stores[i] is the store of
// t.Routes()[i], and def the default route's. It claims backend.SysStore,
// backend.SysScanner, backend.SysBatchSaver, backend.Versioned,
// backend.Walker, backend.KeyLimiter and backend.Spacer always; backend.Batcher, and
// backend.ConditionalDeleter with backend.BesideKeeper, when every route's
// store has them; backend.Watcher when any has it (the feeds of those
// that have one, merged); backend.SysSwapper, backend.Collector and
// backend.Presence when the default route's store has them. Every store
// must be a backend.Versioned. Closing it closes every store.
//
// A Batcher's Apply is atomic within a route; a batch that spans routes
// is applied route by route (no rename or link spans two: Table.Move).
// Under Batch.FailOnConflict, the versions a batch that spans routes
// expects are checked in every route before anything is written.
func NewStore(t *Table, stores []backend.Store, def backend.SysStore) (backend.SysStore, error) {
	routes := t.Routes()
	if len(stores) != len(routes) {
		return nil, fmt.Errorf("route: %d stores for %d routes", len(stores), len(routes))
	}
	s := &store{t: t, sys: def}
	for i, r := range routes {
		s.parts = append(s.parts, part{r, stores[i]})
	}
	s.parts = append(s.parts, part{Route{}, def})
	s.limit = s.KeyLimit()
	var c caps = capBatch | capCond
	for _, p := range s.parts {
		if _, ok := p.st.(backend.Versioned); !ok {
			return nil, fmt.Errorf("route %s: its store checks no versions", p.Name())
		}
		if _, ok := p.st.(backend.Batcher); !ok {
			c &^= capBatch
		}
		_, cd := p.st.(backend.ConditionalDeleter)
		_, bk := p.st.(backend.BesideKeeper)
		if !cd || !bk {
			c &^= capCond
		}
		if _, ok := p.st.(backend.Watcher); ok {
			c |= capWatch
		}
	}
	if _, ok := def.(backend.SysSwapper); ok {
		c |= capSwap
	}
	if _, ok := def.(backend.Collector); ok {
		c |= capCollect
	}
	if _, ok := def.(backend.Presence); ok {
		c |= capPresence
	}
	if c == 0 {
		return s, nil
	}
	return builders[c](s), nil
}

//go:generate go run ../internal/capgen -pkg route -recv store -ret backend.SysStore -import github.com/memfs/memfs/backend -out caps_gen.go capBatch=batchOps capCond=condOps capWatch=watchOps capSwap=swapOps capCollect=collectOps capPresence=presenceOps

// caps are the capabilities a store may claim or not.
type caps uint8

const (
	capBatch caps = 1 << iota
	capCond
	capWatch
	capSwap
	capCollect
	capPresence
)

// at is the part key lives in and the key in its store.
func (s *store) at(key string) (int, string) {
	i := s.t.index(key)
	return i, key[len(s.parts[i].Prefix):]
}

// owns reports whether the key sub of part i's store is one of its own:
// not shadowed by a longer route (a key a default store still holds
// under skills/, once skills/ is a route).
func (s *store) owns(i int, sub string) bool {
	return s.t.index(s.parts[i].Prefix+sub) == i
}

// fix makes err, an error of part i's store, name the namespace's keys.
func (s *store) fix(i int, err error) error {
	if err == nil || s.parts[i].Prefix == "" {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		pe.Path = s.parts[i].Prefix + pe.Path
	}
	var ce *backend.ConflictError
	if errors.As(err, &ce) {
		for j := range ce.Conflicts {
			ce.Conflicts[j].Key = s.parts[i].Prefix + ce.Conflicts[j].Key
		}
	}
	return fmt.Errorf("route %s: %w", s.parts[i].Name(), err)
}

// writable refuses a change of key in a read-only route, and a key its
// route's store cannot hold; before anything is written.
func (s *store) writable(op string, i int, key string) error {
	if s.parts[i].ReadOnly {
		return &fs.PathError{Op: op, Path: key, Err: &ReadOnlyError{Route: s.parts[i].Name()}}
	}
	if err := s.parts[i].check(key); err != nil {
		return &fs.PathError{Op: op, Path: key, Err: err}
	}
	return nil
}

// Walk reports what List does, a route at a time (backend.Walker): a
// session indexes 100,000 keys as they are read, never holding the whole
// listing, through a router as through its stores.
func (s *store) Walk(ctx context.Context, fn func(batch []backend.Entry) error) error {
	var fnErr error // fn's, returned as it is
	for i, p := range s.parts {
		err := backend.Walk(ctx, p.st, func(batch []backend.Entry) error {
			out := make([]backend.Entry, 0, len(batch))
			for _, e := range batch {
				if s.owns(i, e.Key) {
					e.Key = p.Prefix + e.Key
					out = append(out, e)
				}
			}
			if len(out) == 0 {
				return nil
			}
			fnErr = fn(out)
			return fnErr
		})
		if fnErr != nil {
			return fnErr
		}
		if err != nil {
			return s.fix(i, err)
		}
	}
	return nil
}

func (s *store) List(ctx context.Context) ([]backend.Entry, error) {
	var all []backend.Entry
	for i, p := range s.parts {
		ents, err := p.st.List(ctx)
		if err != nil {
			return nil, s.fix(i, err)
		}
		for _, e := range ents {
			if s.owns(i, e.Key) {
				e.Key = p.Prefix + e.Key
				all = append(all, e)
			}
		}
	}
	slices.SortFunc(all, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	return all, nil
}

// keyGroup is the keys of one part and where they stand in the call.
type keyGroup struct {
	keys []string // in the part's store
	at   []int
}

func (s *store) groupKeys(keys []string) (map[int]*keyGroup, error) {
	g := make(map[int]*keyGroup)
	for j, k := range keys {
		if err := backend.ValidateKey(k); err != nil {
			return nil, err
		}
		i, sub := s.at(k)
		if g[i] == nil {
			g[i] = &keyGroup{}
		}
		g[i].keys = append(g[i].keys, sub)
		g[i].at = append(g[i].at, j)
	}
	return g, nil
}

func (s *store) Load(ctx context.Context, keys ...string) ([]backend.Entry, error) {
	g, err := s.groupKeys(keys)
	if err != nil {
		return nil, err
	}
	out := make([]backend.Entry, len(keys))
	for i, kg := range g {
		ents, err := s.parts[i].st.Load(ctx, kg.keys...)
		if err != nil {
			return nil, s.fix(i, err)
		}
		for j, e := range ents {
			e.Key = keys[kg.at[j]]
			out[kg.at[j]] = e
		}
	}
	return out, nil
}

// entryGroup is the entries of one part, keyed in its store, and where
// they stand in the call.
type entryGroup struct {
	ents   []backend.Entry
	at     []int
	expect []backend.Version
}

func (s *store) groupEntries(op string, entries []backend.Entry, expect []backend.Version) (map[int]*entryGroup, error) {
	if err := s.limit.ValidateEntries(entries); err != nil {
		return nil, err
	}
	g := make(map[int]*entryGroup)
	links := map[string]int{} // a hard-link group: its route
	for j, e := range entries {
		i, sub := s.at(e.Key)
		if err := s.writable(op, i, e.Key); err != nil {
			return nil, err
		}
		if l := e.Info.Link; l != "" {
			if li, ok := links[l]; ok && li != i {
				return nil, &fs.PathError{Op: op, Path: e.Key, Err: ErrCrossRoute}
			}
			links[l] = i
		}
		if g[i] == nil {
			g[i] = &entryGroup{}
		}
		e.Key = sub
		g[i].ents = append(g[i].ents, e)
		g[i].at = append(g[i].at, j)
		if expect != nil {
			g[i].expect = append(g[i].expect, expect[j])
		}
	}
	return g, nil
}

// settle writes back into the caller's entries what a store writes into
// its caller's (the revision of the save, a hard-link group's name).
func (g *entryGroup) settle(entries []backend.Entry) {
	for j, e := range g.ents {
		entries[g.at[j]].Info.Rev = e.Info.Rev
		entries[g.at[j]].Info.Link = e.Info.Link
	}
}

// prefixed returns m, a map from a part's keys to its keys, in the
// namespace's keys.
func (s *store) prefixed(i int, m map[string]string, into map[string]string) {
	for k, v := range m {
		into[s.parts[i].Prefix+k] = s.parts[i].Prefix + v
	}
}

func (s *store) Save(ctx context.Context, entries ...backend.Entry) error {
	g, err := s.groupEntries("save", entries, nil)
	if err != nil {
		return err
	}
	for i, eg := range g {
		if err := s.parts[i].st.Save(ctx, eg.ents...); err != nil {
			return s.fix(i, err)
		}
		eg.settle(entries)
	}
	return nil
}

func (s *store) SaveIf(ctx context.Context, entries []backend.Entry, expect []backend.Version) (map[string]string, error) {
	if len(expect) != len(entries) {
		return nil, fmt.Errorf("route: SaveIf of %d entries with %d versions", len(entries), len(expect))
	}
	g, err := s.groupEntries("save", entries, expect)
	if err != nil {
		return nil, err
	}
	conflicts := map[string]string{}
	for i, eg := range g {
		c, err := s.parts[i].st.(backend.Versioned).SaveIf(ctx, eg.ents, eg.expect)
		s.prefixed(i, c, conflicts)
		if err != nil {
			return conflicts, s.fix(i, err)
		}
		eg.settle(entries)
	}
	return conflicts, nil
}

func (s *store) deleteGroups(keys []string) (map[int]*keyGroup, error) {
	for _, k := range keys {
		if err := backend.CheckStoreKey(k); err != nil {
			return nil, err
		}
	}
	g, err := s.groupKeys(keys)
	if err != nil {
		return nil, err
	}
	for i, kg := range g {
		for _, at := range kg.at {
			if err := s.writable("delete", i, keys[at]); err != nil {
				return nil, err
			}
		}
	}
	return g, nil
}

func (s *store) Delete(ctx context.Context, keys ...string) error {
	g, err := s.deleteGroups(keys)
	if err != nil {
		return err
	}
	for i, kg := range g {
		if err := s.parts[i].st.Delete(ctx, kg.keys...); err != nil {
			return s.fix(i, err)
		}
	}
	return nil
}

func (s *store) Close() error {
	var errs []error
	for i, p := range s.parts {
		errs = append(errs, s.fix(i, p.st.Close()))
	}
	return errors.Join(errs...)
}

// KeyLimit is the shortest of the routes' limits, each with its prefix:
// the longest key the store holds in every route.
func (s *store) KeyLimit() backend.KeyLimit {
	var l backend.KeyLimit
	for _, p := range s.parts {
		pl := backend.KeyLimitOf(p.st)
		if pl.Max == 0 {
			continue
		}
		pl.Max += len(p.Prefix)
		if l.Max == 0 || pl.Max < l.Max {
			l = pl
		}
	}
	return l
}

// Space is the default route's (df on a mount shows the root's).
func (s *store) Space(ctx context.Context) (backend.Space, error) {
	if sp, ok := s.sys.(backend.Spacer); ok {
		return sp.Space(ctx)
	}
	return backend.Space{}, fmt.Errorf("route: the default store tells no space: %w", errors.ErrUnsupported)
}

// System records are the default route's.

func (s *store) SaveSys(ctx context.Context, name string, data []byte) error {
	return s.sys.SaveSys(ctx, name, data)
}

func (s *store) LoadSys(ctx context.Context, name string) ([]byte, error) {
	return s.sys.LoadSys(ctx, name)
}

func (s *store) ListSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	return s.sys.ListSys(ctx, prefix)
}

func (s *store) DeleteSys(ctx context.Context, names ...string) error {
	return s.sys.DeleteSys(ctx, names...)
}

func (s *store) ScanSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	return backend.ScanSys(ctx, s.sys, prefix)
}

func (s *store) SaveSysBatch(ctx context.Context, recs map[string][]byte) error {
	if b, ok := s.sys.(backend.SysBatchSaver); ok {
		return b.SaveSysBatch(ctx, recs)
	}
	for _, name := range slices.Sorted(maps.Keys(recs)) {
		if err := s.sys.SaveSys(ctx, name, recs[name]); err != nil {
			return err
		}
	}
	return nil
}

// The capabilities a store claims or not (caps_gen.go).

type batchOps struct{ s *store }

// Apply applies b route by route: each route's part in one Apply of its
// store. Under FailOnConflict, a batch that spans routes first checks
// every expected version, so that a conflict in one route writes nothing
// in the others.
func (o batchOps) Apply(ctx context.Context, b backend.Batch) (map[string]string, error) {
	s := o.s
	if err := s.limit.ValidateBatch(b); err != nil {
		return nil, err
	}
	batches := map[int]*backend.Batch{}
	of := func(key, op string) (*backend.Batch, string, error) {
		i, sub := s.at(key)
		if err := s.writable(op, i, key); err != nil {
			return nil, "", err
		}
		if batches[i] == nil {
			batches[i] = &backend.Batch{FailOnConflict: b.FailOnConflict}
		}
		return batches[i], sub, nil
	}
	at := map[int][]int{} // part: where its saves stand in b.Saves
	links := map[string]*backend.Batch{}
	for j, e := range b.Saves {
		pb, sub, err := of(e.Key, "save")
		if err != nil {
			return nil, err
		}
		if l := e.Info.Link; l != "" {
			if lb, ok := links[l]; ok && lb != pb {
				return nil, &fs.PathError{Op: "save", Path: e.Key, Err: ErrCrossRoute}
			}
			links[l] = pb
		}
		if v, ok := b.Expect[e.Key]; ok {
			if pb.Expect == nil {
				pb.Expect = map[string]backend.Version{}
			}
			pb.Expect[sub] = v
		}
		e.Key = sub
		pb.Saves = append(pb.Saves, e)
		i, _ := s.at(b.Saves[j].Key)
		at[i] = append(at[i], j)
	}
	for _, k := range b.Deletes {
		pb, sub, err := of(k, "delete")
		if err != nil {
			return nil, err
		}
		if v, ok := b.ExpectDeleted[k]; ok {
			if pb.ExpectDeleted == nil {
				pb.ExpectDeleted = map[string]backend.Version{}
			}
			pb.ExpectDeleted[sub] = v
		}
		pb.Deletes = append(pb.Deletes, sub)
	}
	if b.FailOnConflict && len(batches) > 1 {
		if err := s.check(ctx, batches); err != nil {
			return nil, err
		}
	}
	conflicts := map[string]string{}
	for _, i := range slices.Sorted(maps.Keys(batches)) {
		pb := batches[i]
		c, err := s.parts[i].st.(backend.Batcher).Apply(ctx, *pb)
		s.prefixed(i, c, conflicts)
		if err != nil {
			return conflicts, s.fix(i, err)
		}
		for n, e := range pb.Saves {
			j := at[i][n]
			b.Saves[j].Info.Rev, b.Saves[j].Info.Link = e.Info.Rev, e.Info.Link
		}
	}
	return conflicts, nil
}

// check loads the versions the batches expect and fails, as Apply under
// FailOnConflict does, naming every key that holds another.
func (s *store) check(ctx context.Context, batches map[int]*backend.Batch) error {
	var ce backend.ConflictError
	for i, pb := range batches {
		expect := func(key string, want backend.Version, del bool) error {
			found, err := s.versionOf(ctx, i, key)
			if err != nil {
				return err
			}
			if del && found.IsZero() {
				return nil // a delete of a key already gone is no conflict
			}
			if !del && !want.IsZero() && found.IsZero() {
				return nil // a save of a key another writer removed is none
			}
			if !want.Matches(found) {
				ce.Conflicts = append(ce.Conflicts, backend.Conflict{Key: s.parts[i].Prefix + key, Found: found, Delete: del})
			}
			return nil
		}
		for k, v := range pb.Expect {
			if err := expect(k, v, false); err != nil {
				return err
			}
		}
		for k, v := range pb.ExpectDeleted {
			if err := expect(k, v, true); err != nil {
				return err
			}
		}
	}
	if len(ce.Conflicts) > 0 {
		slices.SortFunc(ce.Conflicts, func(a, b backend.Conflict) int { return strings.Compare(a.Key, b.Key) })
		return &ce
	}
	return nil
}

// versionOf is the stored version of key in part i's store, zero when it
// holds none.
func (s *store) versionOf(ctx context.Context, i int, key string) (backend.Version, error) {
	ents, err := s.parts[i].st.Load(ctx, key)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return backend.Version{}, nil
	}
	if err != nil {
		return backend.Version{}, s.fix(i, err)
	}
	return backend.VersionOf(ents[0].Info), nil
}

type condOps struct{ s *store }

func (o condOps) DeleteIf(ctx context.Context, keys []string, expect []backend.Version) ([]string, error) {
	s := o.s
	g, err := s.deleteGroups(keys)
	if err != nil {
		return nil, err
	}
	var kept []string
	for i, kg := range g {
		ex := make([]backend.Version, len(kg.at))
		for j, at := range kg.at {
			ex[j] = expect[at]
		}
		k, err := s.parts[i].st.(backend.ConditionalDeleter).DeleteIf(ctx, kg.keys, ex)
		for _, key := range k {
			kept = append(kept, s.parts[i].Prefix+key)
		}
		if err != nil {
			return kept, s.fix(i, err)
		}
	}
	slices.Sort(kept)
	return kept, nil
}

func (o condOps) KeepBeside(ctx context.Context, key string) (string, error) {
	s := o.s
	i, sub := s.at(key)
	if err := s.writable("keep beside", i, key); err != nil {
		return "", err
	}
	ck, err := s.parts[i].st.(backend.BesideKeeper).KeepBeside(ctx, sub)
	if ck != "" {
		ck = s.parts[i].Prefix + ck
	}
	return ck, s.fix(i, err)
}

type watchOps struct{ s *store }

// Watch merges the feeds of the routes' stores that have one, each key
// with its route's prefix; a change of a key a longer route shadows is
// left out.
func (o watchOps) Watch(ctx context.Context) (<-chan backend.Change, error) {
	s := o.s
	out := make(chan backend.Change, 64)
	var wg sync.WaitGroup
	for i, p := range s.parts {
		w, ok := p.st.(backend.Watcher)
		if !ok {
			continue
		}
		in, err := w.Watch(ctx)
		if err != nil {
			return nil, s.fix(i, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range in {
				if !c.Lost {
					if !s.owns(i, c.Key) {
						continue
					}
					c.Key = p.Prefix + c.Key
				}
				select {
				case out <- c:
				case <-ctx.Done():
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out, nil
}

// Stat is the Info of key without its value: what a follower of the
// feed reads to bring a change in (extwatch.Store).
func (o watchOps) Stat(ctx context.Context, key string) (backend.Info, error) {
	s := o.s
	i, sub := s.at(key)
	if st, ok := s.parts[i].st.(interface {
		Stat(context.Context, string) (backend.Info, error)
	}); ok {
		info, err := st.Stat(ctx, sub)
		return info, s.fix(i, err)
	}
	ents, err := s.parts[i].st.Load(ctx, sub)
	if err != nil {
		return backend.Info{}, s.fix(i, err)
	}
	return ents[0].Info, nil
}

type swapOps struct{ s *store }

func (o swapOps) SwapSys(ctx context.Context, guard string, old []byte, puts map[string][]byte, dels []string) (bool, error) {
	return o.s.sys.(backend.SysSwapper).SwapSys(ctx, guard, old, puts, dels)
}

type collectOps struct{ s *store }

func (o collectOps) Collect(ctx context.Context) (backend.Collected, error) {
	return o.s.sys.(backend.Collector).Collect(ctx)
}

func (o collectOps) Lead(ctx context.Context) (context.Context, func(), error) {
	return o.s.sys.(backend.Collector).Lead(ctx)
}

type presenceOps struct{ s *store }

func (o presenceOps) Register(ctx context.Context, p backend.Peer) (func(), error) {
	return o.s.sys.(backend.Presence).Register(ctx, p)
}

func (o presenceOps) Peers(ctx context.Context) ([]backend.Peer, error) {
	return o.s.sys.(backend.Presence).Peers(ctx)
}
