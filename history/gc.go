package history

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
)

// pendingName is the collector's record of the objects and manifests no
// version referenced at its last mark: {"time": ..., "names": [...]}.
const pendingName = root + "gc/pending"

// DefaultGrace is how long an unreferenced object stays when
// CollectOptions.Grace is 0.
const DefaultGrace = time.Hour

// CollectOptions configure a collection. The zero value applies the
// default retention and grace, at time.Now.
type CollectOptions struct {
	Retention RetentionOptions
	// Grace is the least time between the mark that finds an object or
	// manifest unreferenced and the sweep that removes it; 0:
	// DefaultGrace. A flush must write its versions within Grace of
	// finding their objects present (see the package doc, "Collection").
	Grace time.Duration
	Now   func() time.Time
	// Guard names the record every append of versions changes (the
	// event log's head, which the flush's SwapSys of events and versions
	// is guarded on). On a backend.SysSwapper the sweep deletes in
	// SwapSys calls guarded on the value it had before the mark, so that
	// a version written after the mark stops the sweep instead of losing
	// what it references. "": plain deletes (a store one process holds).
	Guard string
}

// Collected is what one Collect did.
type Collected struct {
	Versions        int  // version records found
	VersionsRemoved int  // by retention
	Pinned          int  // kept only because a snapshot references them
	Referenced      int  // objects and manifests kept versions, snapshots and indexes reference
	Unreferenced    int  // objects and manifests none references (now pending)
	Removed         int  // objects and manifests swept
	Swept           bool // false: only the mark was left (no pending record older than Grace)
}

// pending is the record under pendingName.
type pending struct {
	Time  time.Time `json:"time"`
	Names []string  `json:"names"`
}

// Collect applies retention to the version records and removes the
// objects and manifests that no kept version, snapshot or index
// references and that were already unreferenced at a mark at least Grace
// ago. It returns what it did.
//
// Why nothing referenced is ever removed:
//
//   - Order of a collection: version records retention drops go first;
//     then a complete mark (every version record, every index and the
//     values its versions name, the chunks of every marked manifest);
//     then the sweep; the pending record last. A crash (kill -9) at any
//     point leaves removed only what a complete mark found unreferenced,
//     and a pending record that is the old one (the next collection
//     sweeps from it again) or the new one.
//   - Order of a flush (history's writer): objects and manifests first,
//     the version records after them, with the event log's append. An
//     object whose version is not written yet is unreferenced, so the
//     first mark to see it only records it as pending; it is swept only
//     if still unreferenced at a mark Grace or more later. A flush takes
//     seconds, Grace an hour.
//   - A flush that finds an object present (Missing) and skips writing it
//     can reuse one that is pending, and write its version just after the
//     sweep's mark. With Guard on a shared store, each delete is a SwapSys
//     guarded on the event log's head as it was before the mark: the
//     flush's append moves it, the delete fails, Collect marks again (up
//     to three times, then leaves the rest to the next collection). The
//     guard misses an append that lands before its read when the versions
//     come after the mark, and a whole collection run between the flush's
//     Missing and its append: so the flush, after writing its versions,
//     checks their objects again and writes any that is gone (it still
//     holds the values). What remains on a shared store is a sweep whose
//     mark ran between another process's append and its versions, and
//     whose delete lands after that process's check: the version then
//     names a missing object (history reports it, Verify finds it).
//   - One process's own flushes and collections never interleave: memfs
//     holds a lock for reading from a flush's Missing to its versions and
//     for writing while it collects history. On a store one process
//     holds (badger, dir) that is the whole defence; Collect on such a
//     store must run in the process that flushes (the mount), or with no
//     mount.
//   - A damaged version, index or marked manifest stops the collection
//     before any sweep: what it references is unknown. Damaged records
//     themselves (history/damaged/) are never removed.
//
// Retention keeps, besides what Retention says, every version a snapshot
// references: each key's latest version at or before the snapshot's seq.
// The namespace at a seq that retention thinned (At) may lack versions;
// snapshots' never do.
func (s *Store) Collect(ctx context.Context, o CollectOptions) (Collected, error) {
	var c Collected
	now := time.Now()
	if o.Now != nil {
		now = o.Now()
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	g := guard{name: o.Guard}
	if err := g.read(ctx, s.sys); err != nil {
		return c, err
	}
	kept, err := s.thin(ctx, o.Retention, now, &c)
	for attempt := 0; err == nil; attempt++ {
		var marked map[string]bool
		if marked, err = s.mark(ctx, kept); err != nil {
			break
		}
		c.Referenced = len(marked)
		var unref []string
		if unref, err = s.unreferenced(ctx, marked); err != nil {
			break
		}
		if err = s.sweep(ctx, unref, now, o.Grace, g, &c); !errors.Is(err, errMoved) || attempt == sweepAttempts-1 {
			break
		}
		// Versions were written since the mark: mark again.
		if err = g.read(ctx, s.sys); err == nil {
			kept, err = s.keptNow(ctx)
		}
	}
	if errors.Is(err, errMoved) {
		return c, nil // swept nothing more: the next collection tries again
	}
	return c, err
}

// sweepAttempts is how many marks a collection makes while versions keep
// being written under it.
const sweepAttempts = 3

// errMoved: the guard changed between the mark and a delete.
var errMoved = errors.New("history: versions written during the collection")

// guard is the record whose change means a version was written.
type guard struct {
	name string
	sw   backend.SysSwapper // nil: not guarded
	old  []byte             // its value before the mark (nil: absent)
}

func (g *guard) read(ctx context.Context, sys backend.SysStore) error {
	sw, ok := sys.(backend.SysSwapper)
	if g.name == "" || !ok {
		return nil
	}
	b, err := sys.LoadSys(ctx, g.name)
	if errors.Is(err, backend.ErrKeyNotFound) {
		b, err = nil, nil
	}
	if err != nil {
		return fmt.Errorf("history: collect: %w", err)
	}
	g.sw, g.old = sw, b
	return nil
}

// del deletes names, guarded when g is.
func (g guard) del(ctx context.Context, sys backend.SysStore, names []string) error {
	if g.sw == nil {
		return sys.DeleteSys(ctx, names...)
	}
	ok, err := g.sw.SwapSys(ctx, g.name, g.old, nil, names)
	if err == nil && !ok {
		return errMoved
	}
	return err
}

// keptNow returns the addresses of every version record there is.
func (s *Store) keptNow(ctx context.Context) (map[Addr]bool, error) {
	byKey, err := s.allVersions(ctx)
	if err != nil {
		return nil, err
	}
	kept := map[Addr]bool{}
	for _, vs := range byKey {
		for _, v := range vs {
			kept[v.Addr] = true
		}
	}
	return kept, nil
}

// thin deletes the version records retention does not keep, and returns
// the addresses of the versions it keeps.
func (s *Store) thin(ctx context.Context, r RetentionOptions, now time.Time, c *Collected) (map[Addr]bool, error) {
	byKey, err := s.allVersions(ctx)
	if err != nil {
		return nil, err
	}
	snaps, err := s.Snapshots(ctx)
	if err != nil {
		return nil, err
	}
	kept := map[Addr]bool{}
	var doomed []string
	for _, vs := range byKey {
		c.Versions += len(vs)
		keep := r.For(vs[len(vs)-1].Key).keep(vs, now)
		for _, sn := range snaps {
			// The key's version at the snapshot: the latest at or before its seq.
			i, _ := slices.BinarySearchFunc(vs, sn.Seq+1, func(v Version, sq uint64) int { return cmp.Compare(v.Seq, sq) })
			if i > 0 && !keep[i-1] {
				keep[i-1] = true
				c.Pinned++
			}
		}
		for i := range vs {
			if keep[i] {
				kept[vs[i].Addr] = true
			} else {
				doomed = append(doomed, versionName(vs[i].Key, vs[i].Seq))
			}
		}
	}
	slices.Sort(doomed)
	for start := 0; start < len(doomed); start += writeBatch {
		batch := doomed[start:min(len(doomed), start+writeBatch)]
		if err := s.sys.DeleteSys(ctx, batch...); err != nil {
			return nil, fmt.Errorf("history: collect: %w", err)
		}
		c.VersionsRemoved += len(batch)
	}
	return kept, nil
}

// allVersions returns every version record, by the key-hash directory it
// is under, each list in seq order. A record that does not decode fails it.
func (s *Store) allVersions(ctx context.Context) (map[string][]Version, error) {
	ents, err := backend.ScanSys(ctx, s.sys, versionPrefix)
	if err != nil {
		return nil, fmt.Errorf("history: collect: %w", err)
	}
	out := map[string][]Version{}
	for _, e := range ents {
		kh, seq, ok := strings.Cut(strings.TrimPrefix(e.Key, versionPrefix), "/")
		if !ok || len(seq) != seqDigits {
			continue // not a version record
		}
		var v Version
		if err := decodeVersion(e.Key, e.Value, &v); err != nil {
			return nil, err
		}
		out[kh] = append(out[kh], v) // ScanSys is sorted by name: by seq
	}
	return out, nil
}

// mark returns the names of the objects and manifests that kept (the
// addresses of kept versions) and every index reference: an index's
// value and the values of the versions it holds, and a manifest's chunks.
func (s *Store) mark(ctx context.Context, kept map[Addr]bool) (map[string]bool, error) {
	if err := s.markIndexes(ctx, kept); err != nil {
		return nil, err
	}
	mans, err := s.manifests(ctx)
	if err != nil {
		return nil, err
	}
	marked := map[string]bool{}
	for a := range kept {
		if a.IsZero() {
			continue
		}
		names, err := valueNames(mans, a)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			marked[n] = true
		}
	}
	return marked, nil
}

// manifests returns every manifest record, by name.
func (s *Store) manifests(ctx context.Context) (map[string][]byte, error) {
	ents, err := backend.ScanSys(ctx, s.sys, manifestPrefix)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	out := make(map[string][]byte, len(ents))
	for _, m := range ents {
		out[m.Key] = m.Value
	}
	return out, nil
}

// valueNames returns the names of the records that hold the value at a:
// its object, or its manifest (in mans) and its chunks' objects. A
// manifest that does not decode gives the names known and an error.
func valueNames(mans map[string][]byte, a Addr) ([]string, error) {
	names := []string{objectName(a)}
	mn := manifestName(a)
	b, ok := mans[mn]
	if !ok {
		return names, nil
	}
	names = append(names, mn)
	m, err := decodeManifest(b)
	if err != nil {
		return names, &fs.PathError{Op: "collect", Path: mn, Err: fmt.Errorf("%w: %v", backend.ErrCorrupt, err)}
	}
	for _, ch := range m.chunks {
		names = append(names, objectName(ch.addr))
	}
	return names, nil
}

// markIndexes adds to kept the value of every index and the values of the
// versions each holds (At reads them from it).
func (s *Store) markIndexes(ctx context.Context, kept map[Addr]bool) error {
	ents, err := backend.ScanSys(ctx, s.sys, indexPrefix)
	if err != nil {
		return fmt.Errorf("history: collect: %w", err)
	}
	for _, e := range ents {
		a, err := ParseAddr(string(e.Value))
		if err != nil {
			return &fs.PathError{Op: "collect", Path: e.Key, Err: fmt.Errorf("%w: %v", backend.ErrCorrupt, err)}
		}
		kept[a] = true
		data, err := s.Get(ctx, a)
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		for dec.More() {
			var v Version
			if err := dec.Decode(&v); err != nil {
				return &fs.PathError{Op: "collect", Path: e.Key, Err: fmt.Errorf("%w: %v", backend.ErrCorrupt, err)}
			}
			kept[v.Addr] = true
		}
	}
	return nil
}

// unreferenced lists the objects and manifests not in marked.
func (s *Store) unreferenced(ctx context.Context, marked map[string]bool) ([]string, error) {
	var out []string
	for _, p := range []string{objectPrefix, manifestPrefix} {
		ents, err := s.sys.ListSys(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("history: collect: %w", err)
		}
		for _, e := range ents {
			if !marked[e.Key] {
				out = append(out, e.Key)
			}
		}
	}
	return out, nil
}

// sweep removes what unref and a pending record at least grace old share,
// then records unref (what is left of it) as pending; with a younger
// pending record it removes nothing and leaves that record.
func (s *Store) sweep(ctx context.Context, unref []string, now time.Time, grace time.Duration, g guard, c *Collected) error {
	c.Unreferenced = len(unref)
	var p pending
	b, err := s.sys.LoadSys(ctx, pendingName)
	switch {
	case errors.Is(err, backend.ErrKeyNotFound):
	case err != nil:
		return fmt.Errorf("history: collect: %w", err)
	default:
		if err := json.Unmarshal(b, &p); err != nil {
			p = pending{} // a damaged mark only delays the sweep: rewritten below
		} else if now.Sub(p.Time) < grace {
			return nil
		}
	}
	was := make(map[string]bool, len(p.Names))
	for _, n := range p.Names {
		was[n] = true
	}
	var gone, left []string
	for _, n := range unref {
		if was[n] {
			gone = append(gone, n)
		} else {
			left = append(left, n)
		}
	}
	for start := 0; start < len(gone); start += writeBatch {
		batch := gone[start:min(len(gone), start+writeBatch)]
		if err := g.del(ctx, s.sys, batch); err != nil {
			return fmt.Errorf("history: collect: %w", err)
		}
		c.Removed += len(batch)
	}
	c.Swept = p.Names != nil || !p.Time.IsZero()
	rec, err := json.Marshal(pending{Time: now, Names: left})
	if err != nil {
		return err
	}
	if err := s.sys.SaveSys(ctx, pendingName, rec); err != nil {
		return fmt.Errorf("history: collect: %w", err)
	}
	return nil
}
