package session

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/journal"
)

// This file replays a crashed session's journal into a new one.

// Replay applies journal records (from a crashed earlier process) to the
// session, in generation order, as changes to flush.
func (p *Pending) Replay(records []journal.Record) error {
	c := p.c
	c.replaying.Store(true)
	defer c.replaying.Store(false)
	// Appends of concurrent closers may reach the file slightly out of
	// generation order; the generation is the order of the changes.
	records = slices.Clone(records)
	slices.SortStableFunc(records, func(a, b journal.Record) int { return cmp.Compare(a.Gen, b.Gen) })
	defer func() {
		c.mu.RLock()
		c.replayedThrough.Store(c.mu.pending.gen)
		c.mu.RUnlock()
	}()
	runs := appendRuns(records)
	for i, r := range records {
		if err := c.replayRecord(r, runs[i]); err != nil {
			return err
		}
	}
	return nil
}

// appendRun is a run of append records of one key, in generation order,
// that no other record of the key interrupts: applied to the store's
// value, they make the value a flush of the run's last saved.
type appendRun struct {
	vals  [][]byte // each record's appended bytes
	mtime int64    // the last record's
	held  bool     // the store holds the whole run: its records are replayed
}

// runAt is an append record's entry's place in its run.
type runAt struct {
	run *appendRun
	i   int
}

// appendRuns returns, per record and per key of its append entries, the
// entry's place in its run.
func appendRuns(records []journal.Record) []map[string]runAt {
	out := make([]map[string]runAt, len(records))
	open := map[string]*appendRun{}
	for i, r := range records {
		for _, e := range r.Entries {
			if !r.Append {
				delete(open, e.Key)
				continue
			}
			run := open[e.Key]
			if run == nil {
				run = &appendRun{}
				open[e.Key] = run
			}
			if out[i] == nil {
				out[i] = map[string]runAt{}
			}
			out[i][e.Key] = runAt{run, len(run.vals)}
			run.vals = append(run.vals, e.Value)
			run.mtime = e.Info.MTime.UnixNano()
		}
		for _, k := range r.Removed {
			delete(open, k)
		}
	}
	return out
}

// holds reports whether value ends with the run's appends from the i-th
// on, one after the other.
func (a runAt) holds(value []byte) bool {
	end := len(value)
	for j := len(a.run.vals) - 1; j >= a.i; j-- {
		v := a.run.vals[j]
		if end < len(v) || !bytes.Equal(value[end-len(v):end], v) {
			return false
		}
		end -= len(v)
	}
	return true
}

// replayRecord applies one journal record; runs places its append
// entries in their runs (appendRuns).
func (c *Context) replayRecord(r journal.Record, runs map[string]runAt) error {
	// The renamed files whose rename the store holds already: the old
	// key gone from it, the new one there.
	moved := make(map[string]string)
	for k, old := range r.Renamed {
		if !c.stored(old) && c.stored(k) {
			moved[old] = k
		}
	}
	for _, e := range r.Entries {
		if r.Append {
			// An append must not be applied twice: after a kill
			// between a flush's save and its truncate, the store's
			// value already ends with it. An append sets the mtime
			// to the time of the write, so a store value as new is
			// one that holds it.
			if runs[e.Key].run.held {
				continue // in the value replaySavedAppend put again
			}
			if c.storeIsNewer(e) {
				if err := c.replaySavedAppend(e, runs[e.Key]); err != nil {
					return err
				}
				continue
			}
			if err := c.replayAppend(e); err != nil {
				return err
			}
			c.replayBase(r, e.Key, false)
			continue
		}
		// A whole record is replayed whatever the store holds: the
		// generation orders changes, never an mtime (a process may
		// set one in the past). A record the store already holds
		// (killed between a flush's save and its truncate) gives
		// the same entry again.
		if err := c.put(e, OriginLocal); err != nil {
			if !errors.Is(err, ErrNotDir) || !c.moveAsideBlocking(e.Key) {
				return err
			}
			if err := c.put(e, OriginLocal); err != nil {
				return err
			}
		}
		c.replayBase(r, e.Key, false)
	}
	// Children before their directories.
	removed := slices.Clone(r.Removed)
	slices.SortFunc(removed, func(a, b string) int { return strings.Compare(b, a) })
	for _, k := range removed {
		if !c.stored(k) {
			c.replayGone(k, moved[k])
		}
		err := c.Delete(k)
		if errors.Is(err, ErrIsDir) {
			err = c.Rmdir(k)
			if errors.Is(err, ErrNotEmpty) {
				// Something created under it later in the
				// journal's order was replayed before: keep both.
				c.log.Warn("journal: a removed directory is not empty at replay; kept", "key", k)
				err = nil
			}
		}
		if err != nil && !isNotExist(err) {
			return err
		}
		c.replayBase(r, k, true)
	}
	return nil
}

// stored reports whether the store holds key as the session indexed it:
// a file read from the store under that key.
func (c *Context) stored(key string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, ok := c.mu.tree.files[key]
	return ok && f.from == key
}

// replayGone is the replay of the removal of key, which the store no
// longer holds: a flush before the crash removed it (or, with to set,
// renamed it to to), and the kill may have come before its event was
// appended. The event waits in the outbox for the replay's flush, marked
// Replayed: a receiver that already logged it drops it. A key the store
// never held is no one's to tell of, and the receiver finds no version
// of it to end.
func (c *Context) replayGone(key, to string) {
	if c.opts.Events == nil || c.opts.ReadOnly {
		return
	}
	ev := Event{Op: EventDelete, Key: key, Replayed: true}
	if c.opts.Self != nil {
		ev.Writer = *c.opts.Self
	}
	if to != "" {
		if e, ok := c.storedEntry(to); ok {
			sum := sha256.Sum256(e.Value)
			ev.Op, ev.Key, ev.OldKey = EventRename, to, key
			ev.Size, ev.SHA256, ev.Saved = int64(len(e.Value)), hex.EncodeToString(sum[:]), &e
		}
	}
	c.mu.Lock()
	c.mu.outbox.events = append(c.mu.outbox.events, ev)
	c.mu.Unlock()
}

// storedEntry is key's entry as the store holds it.
func (c *Context) storedEntry(key string) (backend.Entry, bool) {
	es, err := c.store.Load(context.Background(), key)
	if err != nil {
		c.log.Warn("journal: cannot load a renamed file the store holds; its rename is told as a delete", "key", key, "err", err)
		return backend.Entry{}, false
	}
	for _, e := range es {
		if e.Key == key {
			return e, true
		}
	}
	return backend.Entry{}, false
}

// replayBase makes the version record r says the change of key was made on
// (journal.Record.Bases) what the next flush expects of key, under a
// conflict policy: another writer's change since is then met as a
// conflict, and resolved, rather than overwritten. removed: key was
// removed (its delete expects the version). The store's value the session
// holds now is no merge base for the replayed change.
func (c *Context) replayBase(r journal.Record, key string, removed bool) {
	v, ok := r.Bases[key]
	if !ok || c.opts.OnConflict == KeepBeside {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if removed {
		if _, gone := c.mu.pending.removed[key]; gone {
			c.mu.conflict.bases[key] = v
		}
		return
	}
	if f, ok := c.mu.tree.files[key]; ok && f.gen != 0 {
		c.setExpectLocked(f, key, v)
		delete(c.mu.conflict.mergeBase, f)
	}
}

// moveAsideBlocking renames the nearest ancestor of key that is not a
// directory (a node another program put where memfs had a directory) to a
// conflict name beside it, and reports whether it found one: a replayed
// change under that directory then has its place, and both are kept.
func (c *Context) moveAsideBlocking(key string) bool {
	for k := parentOf(key); k != ""; k = parentOf(k) {
		c.mu.RLock()
		_, blocking := c.mu.tree.files[k]
		c.mu.RUnlock()
		if !blocking {
			continue
		}
		ck := c.conflictKey(k, "", c.now())
		if err := c.Rename(context.Background(), k, ck, RenameNoReplace); err != nil {
			c.log.Error("journal: cannot move aside a node in the way of a replayed change", "key", k, "err", err)
			return false
		}
		c.log.Warn("journal: a node is where a directory of the journal goes; kept beside it", "key", k, "kept_as", ck)
		return true
	}
	return false
}

// replayAppend appends e.Value to the key's value (creating the key with
// e's metadata when it is missing), with e's metadata.
func (c *Context) replayAppend(e backend.Entry) error {
	if c.Has(e.Key) {
		defer unpin(c.pinKey(e.Key)) // the memory budget may not drop it before Get
		if err := c.Resolve(context.Background(), e.Key); err != nil {
			return err
		}
		old, ok := c.Get(e.Key)
		if !ok {
			return notExist("replay", e.Key) // removed meanwhile: never append to nothing
		}
		e.Value = append(append(make([]byte, 0, len(old)+len(e.Value)), old...), e.Value...)
	}
	return c.put(e, OriginLocal)
}

// replaySavedAppend is the replay of an append the store's value already
// holds. When that value is the one a flush of this append's run saved,
// the kill may have come before the flush's event was appended, and with
// the event the value's version: the value is put again as it is, so that
// the replay's flush records it (Event.Replayed: a receiver that logged it
// already drops it), and the run's later records, which it holds too, are
// not applied again. The value is the flush's when its mtime is the run's
// last append's and it ends with the bytes of the run's appends from this
// one on (the content the records carry, not the time alone: another
// writer may leave a value with that mtime). A value changed later — by a
// later change of the journal, or by another writer — is not announced as
// this append's.
func (c *Context) replaySavedAppend(e backend.Entry, at runAt) error {
	c.mu.RLock()
	f, ok := c.mu.tree.files[e.Key]
	same := ok && f.gen == 0 && f.mtime == at.run.mtime
	c.mu.RUnlock()
	if !same {
		c.log.Info("journal append older than the store's value; skipped", "key", e.Key)
		return nil
	}
	defer unpin(c.pinKey(e.Key)) // the memory budget may not drop it before Get
	if err := c.Resolve(context.Background(), e.Key); err != nil {
		return err
	}
	held, ok := c.Entry(e.Key) // the store's, as the session holds it clean
	if !ok || held.Value == nil {
		return nil
	}
	if !at.holds(held.Value) {
		c.log.Info("journal append: the store's value has its time but not its bytes; skipped", "key", e.Key)
		return nil
	}
	at.run.held = true
	held.Value = slices.Clone(held.Value)
	e = held
	c.log.Info("journal append the store holds; recorded again, its event may be missing", "key", e.Key)
	return c.put(e, OriginLocal)
}

// storeIsNewer reports whether the session holds e.Key clean, as indexed
// from the store, with a modification time at or after e's.
func (c *Context) storeIsNewer(e backend.Entry) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, ok := c.mu.tree.files[e.Key]
	return ok && f.gen == 0 && f.mtime >= e.Info.MTime.UnixNano()
}
