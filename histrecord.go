package memfs

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/session"
)

// recorder records a version (package history) for every change this
// session's flushes bring to the store, in the event sink, where the
// event log gives the changes their seqs (see eventSink):
//
//  1. values: before the append, the objects of every value the events
//     name (each event's Saved entry: the bytes exactly as the store got
//     them, redacted), so that no event names bytes history lacks: most
//     written while the store saves the flush (saving), the rest here;
//  2. the append (the events get their seqs);
//  3. versions: the version records and the group of the append.
//
// A failure in 1 fails the sink: the session keeps the events and offers
// them again at the next flush. A failure in 3 cannot undo the append: the
// versions wait in pending for the next flush, and a crash before then is
// made good at the next open (reconcile), from the event log: the key,
// op, size and sha256 are in each event, and the value is in history since
// step 1.
//
// Each mount records the changes it makes, once: another mount's changes
// on a shared store are that mount's to record (its events reach this
// one's log through Refresh, never through this sink). An external
// writer's change a session ingests (a dir store's follower) is recorded
// when the session writes an event for it (a rewrite that redacts it).
type recorder struct {
	h      *history.Store // immutable
	log    *slog.Logger   // immutable
	shared bool           // immutable: other processes write the store (backend.Collector)

	// gc is held for reading by a flush from its values to its versions
	// (record), for writing by the mount's collection of history
	// (collect): a collection runs between flushes, never inside one.
	gc sync.RWMutex

	mu      sync.Mutex        // guards pending and early
	pending []history.Version // appended, their records not yet written
	// early is the write of the objects of the values the last flush
	// saves, started while the store saves them (saving); nil when none
	// is waiting for the flush's record.
	early     *earlyWrite
	changes   atomic.Uint64 // moves after each write of versions and collection (historyView.Changes)
	collected atomic.Uint64 // moves at each collection this mount runs (collect)
}

// earlyWrite is the objects of a flush's values written while the store
// saves the flush (recorder.saving), for the same flush's record.
type earlyWrite struct {
	done  chan struct{}   // closed when the write has returned
	held  map[string]bool // the records the store holds since the write: written, or found intact
	after uint64          // recorder.collected when the write began
	err   error
}

func newRecorder(sys backend.SysStore, log *slog.Logger) *recorder {
	_, shared := sys.(backend.Collector)
	return &recorder{h: history.New(sys), log: log, shared: shared}
}

// record records the versions of evs around appendEvs, their append to
// the event log, and returns the events as stored; the mount's
// collection of history waits meanwhile (gc).
func (r *recorder) record(ctx context.Context, evs []session.Event, appendEvs func() ([]eventlog.Event, error)) ([]eventlog.Event, error) {
	r.gc.RLock()
	defer r.gc.RUnlock()
	if err := r.values(ctx, evs); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	stored, err := appendEvs()
	if err != nil {
		return nil, err
	}
	if len(stored) != len(evs) {
		// Their versions would never be written: the session offers them again.
		return nil, fmt.Errorf("event log: appended %d of %d events", len(stored), len(evs))
	}
	r.versions(ctx, evs, stored)
	return stored, nil
}

// collect collects history, between flushes.
func (r *recorder) collect(ctx context.Context, o history.CollectOptions) (history.Collected, error) {
	r.gc.Lock()
	defer r.gc.Unlock()
	defer r.collected.Add(1)
	return r.h.Collect(ctx, o)
}

// saving starts the write of the objects of the values a flush is about
// to save (session.Options.Saving), so that it runs while the store
// saves them rather than after: both are the store's writes, and the
// caller's side of each (the check of what history holds, building the
// batches) overlaps the other's I/O. The flush's record (values) waits
// for it and writes only what it did not; the session's values are
// immutable, so the entries may be read meanwhile.
func (r *recorder) saving(ctx context.Context, entries []backend.Entry) {
	var recs []history.Record
	for _, e := range entries {
		if history.HasValue(e.Info.Mode) {
			recs = append(recs, r.h.PlanValue(e.Value).Records...)
		}
	}
	if len(recs) == 0 {
		return
	}
	w := &earlyWrite{done: make(chan struct{}), held: make(map[string]bool, len(recs))}
	r.mu.Lock()
	r.early = w
	r.mu.Unlock()
	r.gc.RLock() // a collection waits for the write, as for a record
	w.after = r.collected.Load()
	go func() {
		defer close(w.done)
		defer r.gc.RUnlock()
		if _, w.err = r.h.WriteMissing(ctx, recs); w.err == nil {
			for _, rec := range recs {
				w.held[rec.Name] = true
			}
		}
	}()
}

// values writes the objects of the values evs name, before their append:
// those the flush's early write (saving) did not. The caller holds gc for
// reading, so that no collection runs between this and the versions;
// one that ran since the early write began may have removed what that
// write found present, and then everything is checked again.
func (r *recorder) values(ctx context.Context, evs []session.Event) error {
	recs := r.plan(evs)
	r.mu.Lock()
	w := r.early
	r.early = nil
	r.mu.Unlock()
	if w != nil {
		<-w.done
		if w.err == nil && w.after == r.collected.Load() {
			recs = slices.DeleteFunc(recs, func(rec history.Record) bool { return w.held[rec.Name] })
		}
	}
	if len(recs) == 0 {
		return nil
	}
	_, err := r.h.WriteMissing(ctx, recs)
	return err
}

// plan returns the records of the values evs name.
func (r *recorder) plan(evs []session.Event) []history.Record {
	var recs []history.Record
	for _, e := range evs {
		if e.Saved != nil && history.HasValue(e.Saved.Info.Mode) {
			recs = append(recs, r.h.PlanValue(e.Saved.Value).Records...)
		}
	}
	return recs
}

// restore writes again, on a shared store, the objects of evs' values
// that another process's collection removed since values found them
// present: it marked before their versions were written (see
// history.Store.Collect). The values are still in evs.
func (r *recorder) restore(ctx context.Context, evs []session.Event) {
	n, err := r.h.WriteMissing(ctx, r.plan(evs))
	if n > 0 {
		r.log.Warn("history: a collection removed objects a flush's versions name; wrote them again", "bytes", n)
	}
	if err != nil {
		r.log.Error("history: cannot check the objects of a flush's versions", "err", err)
	}
}

// versions writes the versions of evs, as the log stored them (stored[i]
// is evs[i] with its seq), and any that an earlier flush left pending. A
// failure keeps them pending and is logged: the append cannot be undone.
func (r *recorder) versions(ctx context.Context, evs []session.Event, stored []eventlog.Event) {
	defer r.changes.Add(1)
	vs := make([]history.Version, 0, len(evs))
	for i := range evs {
		if v, ok := versionOf(&stored[i], evs[i].Saved); ok {
			vs = append(vs, v)
		}
	}
	r.mu.Lock()
	vs = append(r.pending, vs...)
	r.pending = nil
	r.mu.Unlock()
	if err := r.write(ctx, vs); err != nil {
		r.log.Error("history: versions not recorded; retried at the next flush, and at the next open from the event log",
			"versions", len(vs), "err", err)
		r.mu.Lock()
		r.pending = append(vs, r.pending...)
		r.mu.Unlock()
		return
	}
	if r.shared {
		r.restore(ctx, evs)
	}
}

// write writes the records of vs, one group per run of seqs of one append
// (PlanVersions takes increasing seqs).
func (r *recorder) write(ctx context.Context, vs []history.Version) error {
	for len(vs) > 0 {
		n := 1
		for n < len(vs) && vs[n].Seq > vs[n-1].Seq {
			n++
		}
		recs, err := r.h.PlanVersions(vs[:n])
		if err != nil {
			return err
		}
		if err := r.h.Write(ctx, recs); err != nil {
			return err
		}
		vs = vs[n:]
	}
	return nil
}

// versionOf is the version of the stored event ev, with the entry as the
// store got it (nil for a delete or a conflict); ok false for an event
// that changes no key (a break).
func versionOf(ev *eventlog.Event, saved *backend.Entry) (history.Version, bool) {
	var v history.Version
	switch ev.Op {
	case eventlog.OpWrite, eventlog.OpRename, eventlog.OpAttr, eventlog.OpDelete, eventlog.OpConflict:
	default:
		return v, false
	}
	if saved != nil {
		var a history.Addr
		if history.HasValue(saved.Info.Mode) {
			a = history.AddrOf(saved.Value)
		}
		v = history.NewVersion(ev.Seq, ev.Op, saved, a)
	} else {
		v = history.Version{Seq: ev.Seq, Op: ev.Op, Key: ev.Key, Size: ev.Size}
		// A conflict's sha256 is the other writer's value, which no one
		// wrote to history: naming it would be a version that reads as
		// damaged (and memfs log --verify would say so).
		if a, err := history.ParseAddr(ev.SHA256); err == nil && ev.Op != eventlog.OpDelete && ev.Op != eventlog.OpConflict {
			v.Addr = a
		}
	}
	v.Key, v.OldKey, v.Writer, v.Session = ev.Key, ev.OldKey, ev.Writer, ev.Session
	if v.CTime == 0 {
		v.CTime = ev.Time.UnixNano() // a delete's time, or a reconciled version's
	}
	return v, true
}

// reconcile records the versions of the events after the last group
// (and after history's start) that have none: those of an append whose
// versions a crash kept from being written. On a shared store another
// mount's later group hides a crashed mount's versions from this scan:
// those stay unrecorded (their events and values are kept; an intent
// record per append would find them, at a write per flush). Their attributes are the
// store's when it still holds the value the event names; else the
// version has the event's size and address only. On a store history
// never recorded in, it records the log's head as history's start.
func (r *recorder) reconcile(ctx context.Context, l *eventlog.Log, st backend.Store) error {
	start, ok, err := r.h.Start(ctx)
	if err != nil {
		return err
	}
	if !ok {
		p, err := l.Query(ctx, eventlog.Query{Limit: 1})
		if err != nil {
			return err
		}
		var head uint64
		if n := len(p.Events); n > 0 {
			head = p.Events[n-1].Seq
		}
		return r.h.Begin(ctx, head)
	}
	covered, err := r.h.Covered(ctx)
	if err != nil {
		return err
	}
	lost, err := r.lostVersions(ctx, l, max(start, covered))
	if err != nil || len(lost) == 0 {
		return err
	}
	r.attributes(ctx, st, lost)
	if err := r.write(ctx, lost); err != nil {
		return err
	}
	r.log.Warn("history: recorded the versions a crash left unwritten", "versions", len(lost), "from", lost[0].Seq)
	return nil
}

// lostVersions returns the versions of the events after seq that have no
// record.
func (r *recorder) lostVersions(ctx context.Context, l *eventlog.Log, after uint64) ([]history.Version, error) {
	var out []history.Version
	for {
		p, err := l.Query(ctx, eventlog.Query{After: after, Forward: true, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for i := range p.Events {
			v, ok := versionOf(&p.Events[i], nil)
			if !ok {
				continue
			}
			done, err := r.h.Recorded(ctx, v.Key, v.Seq)
			if err != nil {
				return nil, err
			}
			if !done {
				out = append(out, v)
			}
		}
		if !p.More || len(p.Events) == 0 {
			return out, nil
		}
		after = p.Events[len(p.Events)-1].Seq
	}
}

// attributes fills in each key's last version in vs with the store's
// attributes, when the store holds the value that version names.
func (r *recorder) attributes(ctx context.Context, st backend.Store, vs []history.Version) {
	last := map[string]int{}
	for i, v := range vs {
		last[v.Key] = i
	}
	for key, i := range last {
		v := &vs[i]
		if v.Op == eventlog.OpDelete {
			continue
		}
		es, err := st.Load(ctx, key)
		if err != nil || len(es) != 1 {
			continue // gone or changed since: the event's size and address stand
		}
		e := es[0]
		if history.HasValue(e.Info.Mode) && history.AddrOf(e.Value) != v.Addr {
			continue
		}
		nv := history.NewVersion(v.Seq, v.Op, &e, v.Addr)
		nv.OldKey, nv.Writer, nv.Session = v.OldKey, v.Writer, v.Session
		*v = nv
	}
}

// renamesFirst returns evs with each rename moved before the first other
// event of its old key: a name is vacated before anything new takes it,
// though the session orders a rename by the renamed file's last change
// (rename a to b, write a new a, chmod b: the rename comes last). The
// log's seqs, and so history's order, are then the order of the changes.
// A cycle (two names swapped in one flush) has no such order; history's
// At reads one flush's renames as one step (see history.Store.At).
func renamesFirst(evs []session.Event) []session.Event {
	out := slices.Clone(evs)
	for i := 0; i < len(out); i++ {
		r := out[i]
		if r.Op != session.EventRename {
			continue
		}
		j := slices.IndexFunc(out[:i], func(e session.Event) bool { return e.Key == r.OldKey && e.Op != session.EventDelete })
		if j < 0 {
			continue
		}
		copy(out[j+1:i+1], out[j:i])
		out[j] = r
	}
	return out
}

// unlogged returns evs without the replayed changes (session.Event.Replayed)
// that history already records: a kill after a flush's append and before
// its journal's truncate has the replay make them again, and recording
// them twice would give a key a second version of one state. A replayed
// change history lacks is one whose append the kill prevented: it is
// kept. Each key's last version is history's, then each kept event's.
func (r *recorder) unlogged(ctx context.Context, evs []session.Event) ([]session.Event, error) {
	if !slices.ContainsFunc(evs, func(e session.Event) bool { return e.Replayed }) {
		return evs, nil
	}
	own := map[string][]history.Version{}
	versions := func(key string) ([]history.Version, error) {
		vs, ok := own[key]
		if !ok {
			var err error
			if vs, err = r.h.Own(ctx, key); err != nil {
				return nil, err
			}
			own[key] = vs
		}
		return vs, nil
	}
	out := evs[:0:0]
	for _, e := range evs {
		if !e.Replayed {
			out = append(out, e)
			continue
		}
		vs, err := versions(e.Key)
		if err != nil {
			return nil, err
		}
		v, known := replayedVersion(&e)
		if !known {
			out = append(out, e)
			continue
		}
		if recorded(vs, &v, func(k string) []history.Version { old, _ := versions(k); return old }) {
			r.log.Info("history: a replayed change is recorded already; not logged again", "op", e.Op, "key", e.Key)
			continue
		}
		own[e.Key] = append(vs, v)
		out = append(out, e)
	}
	return out, nil
}

// replayedVersion is the version a replayed event would record, its seq
// unknown; known false for an event whose state cannot be told (a
// conflict, or a change without the entry the store got).
func replayedVersion(e *session.Event) (history.Version, bool) {
	switch {
	case e.Op == session.EventDelete:
		return history.Version{Op: history.OpDelete, Key: e.Key}, true
	case e.Saved == nil || e.Op == session.EventConflict:
		return history.Version{}, false
	}
	var a history.Addr
	if history.HasValue(e.Saved.Info.Mode) {
		a = history.AddrOf(e.Saved.Value)
	}
	v := history.NewVersion(0, e.Op, e.Saved, a)
	v.OldKey = e.OldKey
	return v, true
}

// recorded reports whether v, a replayed change of its key, is what the
// key's versions vs (oldest first) already record: a delete when the key
// has no version, or its last is a delete; a rename when the key has a
// version renamed from the same old name after the old name's last own
// version (old gives those); another change when the key's last version
// leaves the same state.
func recorded(vs []history.Version, v *history.Version, old func(string) []history.Version) bool {
	n := len(vs)
	switch {
	case v.Op == history.OpDelete:
		return n == 0 || vs[n-1].Op == history.OpDelete
	case v.Op == history.OpRename:
		var after uint64
		if o := old(v.OldKey); len(o) > 0 {
			after = o[len(o)-1].Seq
		}
		return slices.ContainsFunc(vs, func(x history.Version) bool {
			return x.Op == history.OpRename && x.OldKey == v.OldKey && x.Seq > after
		})
	}
	return n > 0 && vs[n-1].Op != history.OpDelete && vs[n-1].Op != history.OpConflict && history.SameState(&vs[n-1], v)
}
