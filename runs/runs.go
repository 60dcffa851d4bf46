// Package runs keeps the projection of each run: what the events written
// with a run id (meta.WriterInfo.Run) say of it, so that a reader (a UI,
// an agent resuming, `memfs runs show`) loads a run's summary without
// scanning the event log.
//
// A run's projection (Meta) is a fold of its events in seq order: Apply
// adds one event in O(1) (amortized; the keys it changed are a bounded
// sorted list). The projections are kept in system records of the store,
// "runs/r/RUN", each with the seq of the last event it holds, beside
// "runs/cursor", the seq through which every event has been applied. A
// catch-up (Projector.CatchUp) folds the events after the cursor into the
// records they touch and moves the cursor: its cost is that of the new
// events, whatever the log's length. Current answers a run's projection
// exactly without writing anything (a read-only command, a reader that
// came before the catch-up): the record, and the run's events after the
// cursor folded in memory. Rebuild folds the whole log anew; a
// projection and its rebuild are equal (the tests hold them to it).
//
// A crash between the records and the cursor leaves records ahead of the
// cursor: Apply skips an event a record already holds (its seq is not
// above the record's), so the next catch-up folds each event once. On a
// store that swaps system records (backend.SysSwapper: etcd, where many
// mounts share the log), the records and the cursor move in one swap
// guarded by the cursor, so that two mounts catching up at once never
// put an older projection over a newer one.
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

// New is the projector of the runs of log, kept in sys's system records.
func New(sys backend.SysStore, log *eventlog.Log) *Projector {
	return &Projector{sys: sys, log: log}
}

// cursor is the stored cursor, as stored (nil: none) and as a seq.
func (p *Projector) cursor(ctx context.Context) ([]byte, uint64, error) {
	b, err := p.sys.LoadSys(ctx, cursorName)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		// A damaged cursor is a cursor at the start: the records skip
		// what they hold, and the next catch-up writes a good one.
		return b, 0, nil
	}
	return b, n, nil
}

// load is run's stored projection; one the store lacks, or cannot
// decode (damaged: a catch-up then folds the log anew into it), is the
// empty projection of run with the boolean false.
func (p *Projector) load(ctx context.Context, run string) (Meta, bool, error) {
	b, err := p.sys.LoadSys(ctx, recordPrefix+run)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return Meta{Run: run}, false, nil
	}
	if err != nil {
		return Meta{}, false, err
	}
	var m Meta
	if json.Unmarshal(b, &m) != nil || m.Run != run {
		return Meta{Run: run}, false, nil
	}
	return m, true, nil
}

// fold reads the events after seq after, up to limit of them (0: all),
// and folds each event of a run into metas, loading a run's projection
// with get the first time it is met. It returns the seq of the last event
// read (after when there was none) and whether more follow.
func (p *Projector) fold(ctx context.Context, after uint64, limit int, metas map[string]*Meta, get func(run string) (Meta, error)) (uint64, bool, error) {
	read := 0
	for {
		page, err := p.log.Query(ctx, eventlog.Query{After: after, Forward: true, Limit: pageSize})
		if err != nil {
			return after, false, err
		}
		for _, ev := range page.Events {
			after = ev.Seq
			if ev.Writer.Run == "" {
				continue
			}
			m, ok := metas[ev.Writer.Run]
			if !ok {
				got, err := get(ev.Writer.Run)
				if err != nil {
					return after, false, err
				}
				m = &got
				metas[ev.Writer.Run] = m
			}
			m.Apply(ev)
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

// CatchUp folds the events after the cursor into the stored projections
// and moves the cursor past them.
func (p *Projector) CatchUp(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for tries := 0; tries < 16; {
		old, from, err := p.cursor(ctx)
		if err != nil {
			return err
		}
		metas := make(map[string]*Meta)
		to, more, err := p.fold(ctx, from, batchEvents, metas, func(run string) (Meta, error) {
			m, _, err := p.load(ctx, run)
			return m, err
		})
		if err != nil {
			return err
		}
		if to == from {
			return nil
		}
		ok, err := p.save(ctx, old, to, metas)
		if err != nil {
			return err
		}
		if !ok {
			tries++ // another mount moved the cursor: start again from it
			continue
		}
		if !more {
			return nil
		}
	}
	return fmt.Errorf("runs: the cursor kept moving under 16 catch-ups")
}

// save stores metas and the cursor at seq to, guarded by the cursor as it
// was (old) where the store swaps system records; ok is false when
// another writer moved the cursor meanwhile (nothing was saved).
func (p *Projector) save(ctx context.Context, old []byte, to uint64, metas map[string]*Meta) (bool, error) {
	puts := make(map[string][]byte, len(metas)+1)
	for run, m := range metas {
		b, err := json.Marshal(m)
		if err != nil {
			return false, err
		}
		puts[recordPrefix+run] = b
	}
	cursor := []byte(strconv.FormatUint(to, 10))
	if sw, ok := p.sys.(backend.SysSwapper); ok {
		puts[cursorName] = cursor
		return sw.SwapSys(ctx, cursorName, old, puts, nil)
	}
	// One writer (the store's lock): the records first, then the cursor;
	// a crash between leaves records ahead of it, which Apply skips.
	if bs, ok := p.sys.(backend.SysBatchSaver); ok {
		if err := bs.SaveSysBatch(ctx, puts); err != nil {
			return false, err
		}
	} else {
		for name, b := range puts {
			if err := p.sys.SaveSys(ctx, name, b); err != nil {
				return false, err
			}
		}
	}
	return true, p.sys.SaveSys(ctx, cursorName, cursor)
}

// Current is run's projection as of the log's last event: the stored one,
// with the run's events after the cursor folded in. It writes nothing.
// A run with no event has the empty projection and ok false.
func (p *Projector) Current(ctx context.Context, run string) (m Meta, ok bool, err error) {
	_, from, err := p.cursor(ctx)
	if err != nil {
		return Meta{}, false, err
	}
	m, _, err = p.load(ctx, run)
	if err != nil {
		return Meta{}, false, err
	}
	for after := from; ; {
		page, err := p.log.Query(ctx, eventlog.Query{After: after, Forward: true, Limit: pageSize, Run: run})
		if err != nil {
			return Meta{}, false, err
		}
		for _, ev := range page.Events {
			m.Apply(ev)
			after = ev.Seq
		}
		if !page.More {
			break
		}
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
	es, err := p.sys.ListSys(ctx, recordPrefix)
	if err != nil {
		return nil, err
	}
	var runs []string
	for _, e := range es {
		runs = append(runs, strings.TrimPrefix(e.Key, recordPrefix))
	}
	metas := make(map[string]*Meta)
	if _, _, err := p.fold(ctx, from, 0, metas, func(run string) (Meta, error) { return Meta{Run: run}, nil }); err != nil {
		return nil, err
	}
	for run := range metas {
		runs = append(runs, run)
	}
	slices.Sort(runs)
	return slices.Compact(runs), nil
}

// Rebuild folds the whole log anew: every run's projection, as the
// events say, whatever the records hold. It writes nothing.
func (p *Projector) Rebuild(ctx context.Context) (map[string]Meta, uint64, error) {
	metas := make(map[string]*Meta)
	to, _, err := p.fold(ctx, 0, 0, metas, func(run string) (Meta, error) { return Meta{Run: run}, nil })
	if err != nil {
		return nil, 0, err
	}
	out := make(map[string]Meta, len(metas))
	for run, m := range metas {
		out[run] = *m
	}
	return out, to, nil
}

// Replace stores metas, a rebuild through seq to, in place of every
// stored projection (memfs runs rebuild): records of runs metas lacks are
// removed.
func (p *Projector) Replace(ctx context.Context, metas map[string]Meta, to uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	es, err := p.sys.ListSys(ctx, recordPrefix)
	if err != nil {
		return err
	}
	var stale []string
	for _, e := range es {
		if _, ok := metas[strings.TrimPrefix(e.Key, recordPrefix)]; !ok {
			stale = append(stale, e.Key)
		}
	}
	ms := make(map[string]*Meta, len(metas))
	for run, m := range metas {
		ms[run] = &m
	}
	old, _, err := p.cursor(ctx)
	if err != nil {
		return err
	}
	switch ok, err := p.save(ctx, old, to, ms); {
	case err != nil:
		return err
	case !ok:
		return errors.New("runs: another mount moved the projection meanwhile; rebuild again")
	}
	if len(stale) > 0 {
		return p.sys.DeleteSys(ctx, stale...)
	}
	return nil
}
