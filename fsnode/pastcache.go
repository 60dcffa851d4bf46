package fsnode

import (
	"context"
	"sync"

	"github.com/memfs/memfs/history"
)

// pastCache keeps what the view read of history (a key's versions, the
// names under a directory) for as long as its generation stays where it
// was: the event log's head, which every change moves (Names reads the
// log), and the engine's count of its changes to history that leave the
// head where it is (History.Changes): the versions of an append, written
// after it, and a collection. Listing a
// key's 1,000 versions loads 1,000 records; ls -l of them (a listing,
// then a lookup and a stat per entry) and every open's check of the
// directories then would load them over and over.
type pastCache struct {
	mu       sync.Mutex // guards the fields below
	gen      pastGen
	versions map[string][]history.Version
	names    map[string][]string
}

// pastGen is what the cache's contents hold for. Both parts are read
// before a load: a change that lands during it moves one after it, so
// what the load read is dropped at the next look.
type pastGen struct{ head, changes uint64 }

// pastGeneration returns the generation of history now.
func (r *Root) pastGeneration(ctx context.Context) (pastGen, error) {
	changes := r.opts.History.Changes()
	head, err := r.opts.History.Head(ctx)
	return pastGen{head, changes}, err
}

// maxPastCache bounds the keys kept: past it the cache starts again.
const maxPastCache = 4096

// atLocked empties the cache when the generation moved from where it was.
func (c *pastCache) atLocked(gen pastGen) {
	if gen != c.gen || c.versions == nil || len(c.versions)+len(c.names) > maxPastCache {
		c.gen, c.versions, c.names = gen, map[string][]history.Version{}, map[string][]string{}
	}
}

// versions returns key's versions (History.Versions), from the cache
// while the generation has not moved. The slice is shared: read only.
func (r *Root) versions(ctx context.Context, key string) ([]history.Version, error) {
	return cached(ctx, r, func(c *pastCache) map[string][]history.Version { return c.versions }, key,
		func() ([]history.Version, error) { return r.opts.History.Versions(ctx, key) })
}

// keptVersions returns key's versions if the cache holds them (ok).
func (r *Root) keptVersions(ctx context.Context, key string) (vs []history.Version, ok bool, err error) {
	gen, err := r.pastGeneration(ctx)
	if err != nil {
		return nil, false, err
	}
	c := &r.past
	c.mu.Lock()
	defer c.mu.Unlock()
	c.atLocked(gen)
	vs, ok = c.versions[key]
	return vs, ok, nil
}

// pastNames returns the names under dir that changes named
// (History.Names), from the cache while the generation has not moved.
func (r *Root) pastNames(ctx context.Context, dir string) ([]string, error) {
	return cached(ctx, r, func(c *pastCache) map[string][]string { return c.names }, dir,
		func() ([]string, error) { return r.opts.History.Names(ctx, dir) })
}

func cached[T any](ctx context.Context, r *Root, m func(*pastCache) map[string]T, key string, load func() (T, error)) (T, error) {
	var zero T
	gen, err := r.pastGeneration(ctx)
	if err != nil {
		return zero, err
	}
	c := &r.past
	c.mu.Lock()
	c.atLocked(gen)
	v, ok := m(c)[key]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err = load() // no lock held: a load is store I/O
	if err != nil {
		return zero, err
	}
	c.mu.Lock()
	if c.gen == gen {
		m(c)[key] = v
	}
	c.mu.Unlock()
	return v, nil
}
