package session

import (
	"context"
	"maps"
	"slices"

	"github.com/memfs/memfs/backend"
)

// After a flush: what the store left to another writer (issue 26).

// watchCopy is a conflict copy the session made of another writer's
// version of a key with unflushed changes (External.Apply under the
// store's own rule): its key and file, the file's generation then, and
// the store's version it copies.
type watchCopy struct {
	key string
	f   *file
	gen uint64
	of  backend.Version // the store's version it copies
	// link is the store's hard-link group of the node it copies.
	link string
}

// settle ends a flush that left versions of another writer's in the
// store: one conflict copy per conflict (dropDoubleCopies), and the
// store's copies and the keys whose delete it refused brought in where no
// watcher brought them yet (bringIn).
func (c *Context) settle(ctx context.Context, p *flushPlan, res flushResult) {
	if len(res.kept) == 0 && len(res.stayed) == 0 {
		return
	}
	c.dropDoubleCopies(p, res.kept)
	c.bringIn(ctx, slices.Concat(slices.Collect(maps.Values(res.kept)), res.stayed))
}

// dropDoubleCopies takes out of the session the conflict copies the
// watcher made of a key while the flush was saving it (after its plan),
// when the store kept its own copy of the key in that flush: the save
// found the version the watcher had seen, or a later one of the same
// writer's, and the store's copy holds it. The session's copy was never
// stored, and a file unchanged since it was made is dropped; one written
// since is a file of its own.
func (c *Context) dropDoubleCopies(p *flushPlan, kept map[string]string) {
	planned := make(map[string]bool, len(p.entries))
	for _, e := range p.entries {
		planned[e.Key] = true
	}
	var dropped []string
	c.mu.Lock()
	for _, e := range p.entries {
		wc, ok := c.mu.conflict.watchCopies[e.Key]
		if !ok {
			continue
		}
		delete(c.mu.conflict.watchCopies, e.Key)
		if _, ok := kept[e.Key]; !ok || planned[wc.key] {
			continue
		}
		if f := c.mu.tree.files[wc.key]; f == wc.f && f.gen == wc.gen {
			c.removeNameLocked(f, wc.key, nil)
			dropped = append(dropped, wc.key)
		}
	}
	gen := c.mu.pending.gen
	c.mu.Unlock()
	for _, k := range dropped {
		c.log.Info("a conflict copy the store also kept: the session's is dropped", "key", k)
		c.emit(Change{Op: OpRemove, Key: k, Origin: OriginSelf})
		if err := c.journal(gen, nil, []string{k}); err != nil {
			c.log.Error("journal append after dropping a conflict copy failed", "key", k, "err", err)
		}
	}
}

// bringIn loads keys, versions of another writer's the store holds (a
// conflict copy it kept, a delete it refused), into the session where it
// has nothing under them yet: the mount shows them now, not at the next
// mount, whether or not a watcher follows the store.
func (c *Context) bringIn(ctx context.Context, keys []string) {
	var want []string
	c.mu.RLock()
	for _, k := range keys {
		_, file := c.mu.tree.files[k]
		_, dir := c.mu.tree.dirs[k]
		_, removed := c.mu.pending.removed[k]
		if !file && !dir && !removed && !c.Local(k) {
			want = append(want, k)
		}
	}
	c.mu.RUnlock()
	if len(want) == 0 {
		return
	}
	got, _, err := backend.LoadEach(ctx, c.store, want...)
	if err != nil {
		c.log.Warn("flush: another writer's versions the store kept are not shown until they change or the next mount", "keys", want, "err", err)
		return
	}
	groups := make(map[string]bool)
	for _, e := range got {
		if _, err := c.External().Apply(e); err != nil {
			c.log.Warn("flush: another writer's version the store kept is not shown", "key", e.Key, "err", err)
		}
		if e.Info.Link != "" && !c.External().KnowsGroup(e.Info.Link, e.Key) {
			groups[e.Info.Link] = true
		}
	}
	c.joinGroups(ctx, groups)
}

// joinGroups brings into the session the store's other names of the
// hard-link groups ids, which it knows under one name each: a node that
// the store kept beside (a conflict copy) may be one that another
// program linked, under a name the session holds as a node of its own
// (the store reports no change of the name linked from). Only the
// listing tells; a store's own groups are rare, and so is this walk.
func (c *Context) joinGroups(ctx context.Context, ids map[string]bool) {
	if len(ids) == 0 {
		return
	}
	var keys []string
	err := backend.Walk(ctx, c.store, func(batch []backend.Entry) error {
		for _, e := range batch {
			if ids[e.Info.Link] && !c.inGroup(e.Key, e.Info.Link) {
				keys = append(keys, e.Key)
			}
		}
		return nil
	})
	if err == nil {
		var got []backend.Entry
		if got, _, err = backend.LoadEach(ctx, c.store, keys...); err == nil {
			for _, e := range got {
				if _, err := c.External().Apply(e); err != nil {
					c.log.Warn("flush: another name of a node the store kept is not shown as one", "key", e.Key, "err", err)
				}
			}
		}
	}
	if err != nil {
		c.log.Warn("flush: other names of a node the store kept are not shown as one until the next mount", "err", err)
	}
}

// inGroup reports whether the session's node under key is of the store's
// hard-link group id.
func (c *Context) inGroup(key, id string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, ok := c.mu.tree.files[key]
	return ok && f.link != nil && f.link.id == id
}
