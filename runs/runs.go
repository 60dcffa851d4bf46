// Package runs keeps the projection of each run: what the events written
// with a run id (meta.WriterInfo.Run) say of it, so that a reader (a UI,
// an agent resuming, `memfs runs show`) loads a run's summary without
// scanning the event log.
//
// A run's projection (Meta) is a fold of its events in seq order: Apply
// adds one event in O(1) (amortized; the keys it changed are a bounded
// sorted list). The projections are kept in system records of the store,
// "runs/r/RUN", each with the seq (and time) of the last event it holds,
// beside "runs/cursor", the seq and time of the event through which every
// event has been applied. A catch-up (Projector.CatchUp) folds the events
// after the cursor into the records they touch and moves the cursor: its
// cost is that of the new events, whatever the log's length. Current
// answers a run's projection exactly without writing anything (a
// read-only command, a reader that came before the catch-up): the record,
// and the run's events after the cursor folded in memory. Rebuild folds
// the whole log anew; a projection and its rebuild are equal (the tests
// hold them to it).
//
// A damaged line of the log (or a chunk that cannot be read) is passed
// over by every fold alike (eventlog.Query.SkipDamaged), so that one bad
// entry never blocks the projection; memfs fsck and log --verify report
// it. What the records and the cursor say is checked against the log,
// never trusted over it: a record that cannot be decoded is folded anew from
// its run's events; a cursor (or a record ahead of it) at an event the
// log no longer has, because a recovery cut the log back and numbered
// its next events from the cut, has the whole log folded anew.
//
// A crash between the records and the cursor leaves records ahead of the
// cursor: Apply skips an event a record already holds (its seq is not
// above the record's), so the next catch-up folds each event once. On a
// store that swaps system records (backend.SysSwapper: etcd, where many
// mounts share the log), each record is swapped against the record it
// was folded from, and the cursor against the cursor it started from, so
// that two mounts catching up at once never put an older projection over
// a newer one, nor move the cursor past an event a record lacks; one
// swap per record keeps within etcd's operations per transaction.
//
// # Concurrency
//
// A Projector may be used from any number of goroutines: its catch-ups
// run one at a time; Current and List read only.
package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/eventlog"
)

// MaxKeys is the most keys a run's projection lists (Meta.Keys); a run
// that changed more says so (KeysTruncated) and counts them all in its
// events.
const MaxKeys = 1000

// The system records of the projection.
const (
	recordPrefix = "runs/r/"
	cursorName   = "runs/cursor"
)

// pageSize is how many events a catch-up reads at a time; batchEvents is
// how many it folds before it saves, so that a catch-up of a long log
// (the first after an upgrade) saves its progress as it goes.
const (
	pageSize    = 1000
	batchEvents = 50000
)

// Meta is a run's projection: what its events say.
type Meta struct {
	Run   string    `json:"run"`
	First time.Time `json:"first"` // the time of its first event
	Last  time.Time `json:"last"`  // the time of its last event
	// Seq is the seq of the last event folded in: the projection holds
	// every event of the run up to it.
	Seq    uint64         `json:"seq"`
	Events int            `json:"events"`
	Ops    map[string]int `json:"ops"` // events by op
	// Keys are the keys the run changed (written, removed, renamed from
	// or to), sorted: the first MaxKeys of them, with KeysTruncated set
	// when there were more.
	Keys          []string `json:"keys"`
	KeysTruncated bool     `json:"keys_truncated,omitempty"`
}

// Apply folds ev, an event of m's run, into m, unless m holds it already
// (its seq is not above m.Seq).
func (m *Meta) Apply(ev eventlog.Event) {
	if ev.Seq <= m.Seq {
		return
	}
	if m.Events == 0 {
		m.First = ev.Time
	}
	m.Last, m.Seq = ev.Time, ev.Seq
	m.Events++
	if m.Ops == nil {
		m.Ops = make(map[string]int)
	}
	m.Ops[ev.Op]++
	m.addKey(ev.Key)
	if ev.OldKey != "" {
		m.addKey(ev.OldKey)
	}
}

func (m *Meta) addKey(k string) {
	i, found := slices.BinarySearch(m.Keys, k)
	switch {
	case found:
	case len(m.Keys) >= MaxKeys:
		m.KeysTruncated = true
	default:
		m.Keys = slices.Insert(m.Keys, i, k)
	}
}

// Projector keeps the projections of a store's runs (see the package
// documentation).
type Projector struct {
	sys backend.SysStore
	log *eventlog.Log
	mu  sync.Mutex // one catch-up at a time
}

// New is the projector of the runs of log, kept in sys's system records
// (nil for Rebuild alone).
func New(sys backend.SysStore, log *eventlog.Log) *Projector {
	return &Projector{sys: sys, log: log}
}

// mark is a point of the log: the seq of an event and its time, which
// tells it from another event a log cut back (a recovery) gave the same
// seq later.
type mark struct {
	seq  uint64
	time time.Time
}

func (m mark) encode() []byte {
	return fmt.Appendf(nil, "%d %s", m.seq, m.time.UTC().Format(time.RFC3339Nano))
}

// cursor is the stored cursor, as stored (nil: none) and as a mark. A
// damaged one is the start of the log: the records skip what they hold.
func (p *Projector) cursor(ctx context.Context) ([]byte, mark, error) {
	b, err := p.sys.LoadSys(ctx, cursorName)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return nil, mark{}, nil
	}
	if err != nil {
		return nil, mark{}, err
	}
	seq, at, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	n, err := strconv.ParseUint(seq, 10, 64)
	t, terr := time.Parse(time.RFC3339Nano, at)
	if err != nil || terr != nil {
		return b, mark{}, nil
	}
	return b, mark{n, t}, nil
}

// holds reports whether the log still has the event at m (the start
// always): a log cut back by a recovery, which numbers its next events
// again from the cut, has another or none.
func (p *Projector) holds(ctx context.Context, m mark) (bool, error) {
	if m.seq == 0 {
		return true, nil
	}
	page, err := p.log.Query(ctx, eventlog.Query{After: m.seq - 1, Forward: true, Limit: 1, SkipDamaged: true})
	if err != nil {
		return false, err
	}
	return len(page.Events) == 1 && page.Events[0].Seq == m.seq && page.Events[0].Time.Equal(m.time), nil
}

// load is run's stored projection, as stored (nil: none) and decoded,
// as of the cursor at upto: a record the store lacks is the empty
// projection; one it cannot decode (damaged), or that holds events the
// log no longer has (cut back after a crash left the record ahead of the
// cursor), is folded anew from the run's events up to the cursor.
func (p *Projector) load(ctx context.Context, run string, upto uint64) ([]byte, Meta, error) {
	b, err := p.sys.LoadSys(ctx, recordPrefix+run)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return nil, Meta{Run: run}, nil
	}
	if err != nil {
		return nil, Meta{}, err
	}
	var m Meta
	ok := json.Unmarshal(b, &m) == nil && m.Run == run
	if ok && m.Seq > upto {
		ok, err = p.holds(ctx, mark{m.Seq, m.Last})
		if err != nil {
			return nil, Meta{}, err
		}
	}
	if ok {
		return b, m, nil
	}
	m = Meta{Run: run}
	err = p.foldRun(ctx, &m, 0, upto)
	return b, m, err
}

// foldRun folds into m the events of its run after seq after, up to seq
// upto (0: the log's end).
func (p *Projector) foldRun(ctx context.Context, m *Meta, after, upto uint64) error {
	q := eventlog.Query{After: after, Forward: true, Limit: pageSize, Run: m.Run, SkipDamaged: true}
	if upto > 0 {
		q.Before = upto + 1
	}
	for {
		page, err := p.log.Query(ctx, q)
		if err != nil {
			return err
		}
		for _, ev := range page.Events {
			m.Apply(ev)
			q.After = ev.Seq
		}
		if !page.More || len(page.Events) == 0 {
			return nil
		}
	}
}

// loaded is a run's projection being caught up, with the record it was
// loaded from (nil: none), the guard of its save.
type loaded struct {
	old []byte
	m   Meta
}

// fold reads the events after seq after, up to limit of them (0: all),
// and folds each event of a run into metas, loading a run's projection
// with get the first time it is met. It returns the last event read (at
// after when there was none) and whether more follow.
func (p *Projector) fold(ctx context.Context, after mark, limit int, metas map[string]*loaded, get func(run string) ([]byte, Meta, error)) (mark, bool, error) {
	read := 0
	for {
		page, err := p.log.Query(ctx, eventlog.Query{After: after.seq, Forward: true, Limit: pageSize, SkipDamaged: true})
		if err != nil {
			return after, false, err
		}
		for _, ev := range page.Events {
			after = mark{ev.Seq, ev.Time}
			if ev.Writer.Run == "" {
				continue
			}
			l, ok := metas[ev.Writer.Run]
			if !ok {
				old, m, err := get(ev.Writer.Run)
				if err != nil {
					return after, false, err
				}
				l = &loaded{old, m}
				metas[ev.Writer.Run] = l
			}
			l.m.Apply(ev)
		}
		read += len(page.Events)
		if !page.More {
			return after, false, nil
		}
		if limit > 0 && read >= limit {
			return after, true, nil
		}
	}
}

// errMoved is a save that met another writer's (a mount catching up
// too, on a shared store): the catch-up starts again from what it wrote.
var errMoved = errors.New("runs: another writer moved the projection")

// CatchUp folds the events after the cursor into the stored projections
// and moves the cursor past them. A cursor at an event the log no longer
// has (a recovery cut the log back) folds the whole log anew.
func (p *Projector) CatchUp(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for tries := 0; tries < 16; {
		old, from, err := p.cursor(ctx)
		if err != nil {
			return err
		}
		switch ok, err := p.holds(ctx, from); {
		case err != nil:
			return err
		case !ok:
			metas, to, err := p.Rebuild(ctx)
			if err != nil {
				return err
			}
			return p.replaceLocked(ctx, metas, to)
		}
		metas := make(map[string]*loaded)
		to, more, err := p.fold(ctx, from, batchEvents, metas, func(run string) ([]byte, Meta, error) {
			return p.load(ctx, run, from.seq)
		})
		if err != nil {
			return err
		}
		if to.seq == from.seq {
			return nil
		}
		err = p.save(ctx, old, to, metas)
		if errors.Is(err, errMoved) {
			tries++
			continue
		}
		if err != nil || !more {
			return err
		}
	}
	return fmt.Errorf("runs: the projection kept moving under 16 catch-ups")
}

// save stores each projection of metas, then the cursor at to. On a
// store that swaps system records (shared: etcd), each record is swapped
// against the one it was folded from, and the cursor against the cursor
// as it was (old): a projection is never put over a newer one, and the
// cursor passes no event a record lacks (errMoved when another writer
// was first). A store with one writer saves the records first: a crash
// before the cursor leaves records ahead of it, which Apply skips.
func (p *Projector) save(ctx context.Context, old []byte, to mark, metas map[string]*loaded) error {
	recs := make(map[string][]byte, len(metas))
	for run, l := range metas {
		b, err := json.Marshal(l.m)
		if err != nil {
			return err
		}
		recs[recordPrefix+run] = b
	}
	sw, swaps := p.sys.(backend.SysSwapper)
	switch {
	case swaps:
		for run, l := range metas {
			name := recordPrefix + run
			ok, err := sw.SwapSys(ctx, name, l.old, map[string][]byte{name: recs[name]}, nil)
			if err != nil {
				return err
			}
			if !ok {
				return errMoved
			}
		}
		ok, err := sw.SwapSys(ctx, cursorName, old, map[string][]byte{cursorName: to.encode()}, nil)
		if err == nil && !ok {
			err = errMoved
		}
		return err
	default:
		if bs, ok := p.sys.(backend.SysBatchSaver); ok {
			if err := bs.SaveSysBatch(ctx, recs); err != nil {
				return err
			}
		} else {
			for name, b := range recs {
				if err := p.sys.SaveSys(ctx, name, b); err != nil {
					return err
				}
			}
		}
		return p.sys.SaveSys(ctx, cursorName, to.encode())
	}
}

// Current is run's projection as of the log's last event: the stored one,
// with the run's events after the cursor folded in (all of them when the
// cursor is at an event the log no longer has). It writes nothing. A run
// with no event has the empty projection and ok false.
func (p *Projector) Current(ctx context.Context, run string) (m Meta, ok bool, err error) {
	_, from, err := p.cursor(ctx)
	if err != nil {
		return Meta{}, false, err
	}
	if ok, err := p.holds(ctx, from); err != nil || !ok {
		m = Meta{Run: run}
		return m, m.Events > 0, errors.Join(err, p.foldRun(ctx, &m, 0, 0))
	}
	if _, m, err = p.load(ctx, run, from.seq); err != nil {
		return Meta{}, false, err
	}
	if err := p.foldRun(ctx, &m, from.seq, 0); err != nil {
		return Meta{}, false, err
	}
	return m, m.Events > 0, nil
}

// List is the runs with events: those the records hold and those of the
// events after the cursor, sorted. It writes nothing.
func (p *Projector) List(ctx context.Context) ([]string, error) {
	_, from, err := p.cursor(ctx)
	if err != nil {
		return nil, err
	}
	if ok, err := p.holds(ctx, from); err != nil || !ok {
		metas, _, rerr := p.Rebuild(ctx)
		return slices.Sorted(maps.Keys(metas)), errors.Join(err, rerr)
	}
	es, err := p.sys.ListSys(ctx, recordPrefix)
	if err != nil {
		return nil, err
	}
	var runs []string
	for _, e := range es {
		runs = append(runs, strings.TrimPrefix(e.Key, recordPrefix))
	}
	metas := make(map[string]*loaded)
	if _, _, err := p.fold(ctx, from, 0, metas, func(run string) ([]byte, Meta, error) { return nil, Meta{Run: run}, nil }); err != nil {
		return nil, err
	}
	for run := range metas {
		runs = append(runs, run)
	}
	slices.Sort(runs)
	return slices.Compact(runs), nil
}

// Rebuild folds the whole log anew: every run's projection, as the
// events say, whatever the records hold, and the last event folded. It
// writes nothing.
func (p *Projector) Rebuild(ctx context.Context) (map[string]Meta, mark, error) {
	metas := make(map[string]*loaded)
	to, _, err := p.fold(ctx, mark{}, 0, metas, func(run string) ([]byte, Meta, error) { return nil, Meta{Run: run}, nil })
	if err != nil {
		return nil, mark{}, err
	}
	out := make(map[string]Meta, len(metas))
	for run, l := range metas {
		out[run] = l.m
	}
	return out, to, nil
}

// Replace stores metas, a rebuild through to, in place of every stored
// projection (memfs runs rebuild): records of runs metas lacks are
// removed.
func (p *Projector) Replace(ctx context.Context, metas map[string]Meta, to mark) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.replaceLocked(ctx, metas, to)
}

func (p *Projector) replaceLocked(ctx context.Context, metas map[string]Meta, to mark) error {
	es, err := p.sys.ListSys(ctx, recordPrefix)
	if err != nil {
		return err
	}
	old, _, err := p.cursor(ctx)
	if err != nil {
		return err
	}
	ls := make(map[string]*loaded, len(metas))
	var stale []string
	for _, e := range es {
		run := strings.TrimPrefix(e.Key, recordPrefix)
		b, err := p.sys.LoadSys(ctx, e.Key)
		if err != nil && !errors.Is(err, backend.ErrKeyNotFound) {
			return err
		}
		if m, ok := metas[run]; ok {
			ls[run] = &loaded{b, m}
		} else {
			stale = append(stale, e.Key)
		}
	}
	for run, m := range metas {
		if _, ok := ls[run]; !ok {
			ls[run] = &loaded{nil, m}
		}
	}
	if err := p.save(ctx, old, to, ls); err != nil {
		if errors.Is(err, errMoved) {
			return fmt.Errorf("%w meanwhile; rebuild again", errMoved)
		}
		return err
	}
	if len(stale) > 0 {
		return p.sys.DeleteSys(ctx, stale...)
	}
	return nil
}

// Diff tells how the projections kept differ from those rebuilt (a line
// per run that differs, sorted; none when they agree), for `memfs runs
// rebuild --check`.
func Diff(kept, rebuilt map[string]Meta) []string {
	ids := slices.Sorted(maps.Keys(kept))
	for id := range rebuilt {
		if _, ok := kept[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var diffs []string
	for _, id := range ids {
		a, _ := json.Marshal(normal(kept[id]))
		b, _ := json.Marshal(normal(rebuilt[id]))
		if string(a) != string(b) {
			diffs = append(diffs, fmt.Sprintf("%s: kept %s, rebuilt %s", id, a, b))
		}
	}
	return diffs
}

// normal is m as a record holds it: times in UTC, keys a list.
func normal(m Meta) Meta {
	m.First, m.Last = m.First.UTC(), m.Last.UTC()
	if m.Keys == nil {
		m.Keys = []string{}
	}
	return m
}
