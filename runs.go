package memfs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/runs"
	"github.com/memfs/memfs/session"
)

// Run is what memfs knows of a run, as .memfs/runs/RUN/meta.json and
// `memfs runs show` give it: the projection of its events (runs.Meta),
// its steps (from its summaries: contextpack.SummariesKey) and its
// checkpoints (the snapshots RUN/STEP).
type Run struct {
	runs.Meta
	Steps       int          `json:"steps"`
	LastStep    string       `json:"last_step,omitempty"`
	Checkpoints []Checkpoint `json:"checkpoints"`
}

// Checkpoint is a run's checkpoint: its name (RUN/STEP) and the seq of
// the event log it holds.
type Checkpoint struct {
	Name string    `json:"name"`
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
}

// The files of a run's directory in the mount (.memfs/runs/RUN/).
const (
	RunMetaFile      = "meta.json"
	RunSummariesFile = "summaries.jsonl"
	RunEventsFile    = "events.jsonl"
)

// runKeeper catches the stored projection of the runs up with the event
// log, off the flush path: a flush, a refresh of another mount's events
// or the open pokes it, and it catches up once for every poke it missed.
type runKeeper struct {
	p    *runs.Projector
	log  *slog.Logger
	wake chan struct{}
	stop context.CancelFunc
	done sync.WaitGroup
}

func startRunKeeper(p *runs.Projector, log *slog.Logger) *runKeeper {
	ctx, cancel := context.WithCancel(context.Background())
	k := &runKeeper{p: p, log: log, wake: make(chan struct{}, 1), stop: cancel}
	k.done.Add(1)
	go func() {
		defer k.done.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-k.wake:
				if err := p.CatchUp(ctx); err != nil && ctx.Err() == nil {
					// A reader folds what the records lack (Current):
					// nothing is wrong, only slower, until the next poke.
					log.Warn("runs: the projection could not catch up with the event log; tried again at the next change", "err", err)
				}
			}
		}
	}()
	k.poke()
	return k
}

// poke asks for a catch-up; nil (a read-only session) keeps none.
func (k *runKeeper) poke() {
	if k == nil {
		return
	}
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// close ends the keeper, a catch-up under way with it (the next open
// catches up).
func (k *runKeeper) close() {
	if k == nil {
		return
	}
	k.stop()
	k.done.Wait()
}

// RunIDs lists the runs memfs knows of: those of events written with a run
// id, of summaries and of checkpoints, sorted. With a Cred in ctx
// (session.WithCred), only those the caller has something of to see.
func (f *FS) RunIDs(ctx context.Context) ([]string, error) {
	ids, err := f.runs.List(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := session.CredFrom(ctx); ok {
		seen := ids[:0]
		for _, id := range ids {
			m, err := f.runFor(ctx, id)
			if err != nil {
				return nil, err
			}
			if m.Events > 0 {
				seen = append(seen, id)
			}
		}
		ids = seen
	}
	sums, err := f.summaries(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range sums {
		if meta.ValidateRun(s.Run) == nil {
			ids = append(ids, s.Run)
		}
	}
	snaps, err := f.Snapshots(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range snaps {
		if r := s.Run(); meta.ValidateRun(r) == nil {
			ids = append(ids, r)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// ErrNoRun is returned for a run memfs knows nothing of.
var ErrNoRun = errors.New("no such run")

// runFor is run's projection for the caller in ctx: with a Cred
// (session.WithCred) that may not see every key the run changed, the
// fold of the run's events it may see (the log's events of the run are
// read: a caller is never told of events on keys it could not see);
// else the projection as kept.
func (f *FS) runFor(ctx context.Context, run string) (runs.Meta, error) {
	m, _, err := f.runs.Current(ctx, run)
	if err != nil {
		return runs.Meta{}, err
	}
	cr, ok := session.CredFrom(ctx)
	if !ok || m.Events == 0 || !m.KeysTruncated && !slices.Contains(f.c.Access().Seeable(cr, m.Keys...), false) {
		return m, nil
	}
	m = runs.Meta{Run: run}
	for q := (eventlog.Query{Forward: true, Limit: 1000}); ; {
		page, last, err := f.RunEvents(ctx, run, q)
		if err != nil {
			return runs.Meta{}, err
		}
		for _, ev := range page.Events {
			m.Apply(ev)
		}
		if !page.More || last == 0 {
			return m, nil
		}
		q.After = last
	}
}

// Run returns what memfs knows of run. With a Cred in ctx
// (session.WithCred) it says only what that caller may see (runFor), and
// gives the steps only if it may read the summaries.
func (f *FS) Run(ctx context.Context, run string) (Run, error) {
	if err := meta.ValidateRun(run); err != nil {
		return Run{}, err
	}
	m, err := f.runFor(ctx, run)
	if err != nil {
		return Run{}, err
	}
	r := Run{Meta: m, Checkpoints: []Checkpoint{}}
	if r.Keys == nil {
		r.Keys = []string{}
	}
	sums, err := f.runSummaries(ctx, run)
	if err != nil {
		return Run{}, err
	}
	steps := map[string]bool{}
	for _, s := range sums {
		steps[s.Step] = true
		r.LastStep = s.Step
	}
	r.Steps = len(steps)
	snaps, err := f.Snapshots(ctx)
	if err != nil {
		return Run{}, err
	}
	for _, s := range snaps {
		if s.Run() == run {
			r.Checkpoints = append(r.Checkpoints, Checkpoint{Name: s.Name, Seq: s.Seq, Time: s.Time})
		}
	}
	slices.SortFunc(r.Checkpoints, func(a, b Checkpoint) int { return cmp.Compare(a.Seq, b.Seq) })
	if r.Events == 0 && len(sums) == 0 && len(r.Checkpoints) == 0 {
		return Run{}, fmt.Errorf("%w: %s", ErrNoRun, run)
	}
	r.Run = run
	return r, nil
}

// summaries are the step summaries (contextpack.SummariesKey); with a
// Cred in ctx, none unless that caller may read them.
func (f *FS) summaries(ctx context.Context) ([]contextpack.Summary, error) {
	key := contextpack.SummariesKey
	c := f.c
	if !c.Has(key) {
		return nil, nil
	}
	if cr, ok := session.CredFrom(ctx); ok && !c.Access().Readable(cr, key)[0] {
		return nil, nil
	}
	if err := c.Resolve(ctx, key); err != nil {
		return nil, err
	}
	v, _ := c.Get(key)
	sums, _ := contextpack.ReadSummaries(v)
	return sums, nil
}

// runSummaries are run's step summaries, in the order they were added.
func (f *FS) runSummaries(ctx context.Context, run string) ([]contextpack.Summary, error) {
	sums, err := f.summaries(ctx)
	return slices.DeleteFunc(sums, func(s contextpack.Summary) bool { return s.Run != run }), err
}

// RunEvents is a page of run's events (q with its Run set); with a Cred
// in ctx, only those of keys that caller may see. last is the seq of the
// last event the page read, shown or not (0 for none): the next page
// starts after it.
func (f *FS) RunEvents(ctx context.Context, run string, q eventlog.Query) (page eventlog.Page, last uint64, err error) {
	q.Run, q.SkipDamaged = run, true // as the projection folds them
	if page, err = f.events.Query(ctx, q); err != nil || len(page.Events) == 0 {
		return page, 0, err
	}
	last = page.Events[len(page.Events)-1].Seq
	cr, ok := session.CredFrom(ctx)
	if !ok {
		return page, last, nil
	}
	page.Events = slices.DeleteFunc(page.Events, func(ev eventlog.Event) bool {
		keys := []string{ev.Key}
		if ev.OldKey != "" {
			keys = append(keys, ev.OldKey)
		}
		return slices.Contains(f.c.Access().Seeable(cr, keys...), false)
	})
	return page, last, nil
}

// RebuildRuns folds the whole event log anew and tells how each run's
// projection differs from the one kept (a line per run, empty when none
// does). With write, the rebuild takes the place of what is kept.
func (f *FS) RebuildRuns(ctx context.Context, write bool) ([]string, error) {
	rebuilt, to, err := f.runs.Rebuild(ctx)
	if err != nil {
		return nil, err
	}
	ids, err := f.runs.List(ctx)
	if err != nil {
		return nil, err
	}
	kept := make(map[string]runs.Meta, len(ids))
	for _, id := range ids {
		if kept[id], _, err = f.runs.Current(ctx, id); err != nil {
			return nil, err
		}
	}
	diffs := runs.Diff(kept, rebuilt)
	if write {
		if f.opts.Session.ReadOnly {
			return diffs, errors.New("runs rebuild: the store is open read-only")
		}
		err = f.runs.Replace(ctx, rebuilt, to)
	}
	return diffs, err
}

// hasRun reports whether the caller in ctx has something of run to see
// (a lookup of .memfs/runs/RUN: that run alone, never the list).
func (f *FS) hasRun(ctx context.Context, run string) bool {
	_, err := f.Run(ctx, run)
	return err == nil
}

// runFile answers .memfs/runs/RUN/FILE for the caller in ctx.
func (f *FS) runFile(ctx context.Context, name string) ([]byte, error) {
	run, file, _ := strings.Cut(name, "/")
	return f.RunFile(ctx, run, file)
}

// RunFile is the text of run's file (RunMetaFile, RunSummariesFile or
// RunEventsFile) as .memfs/runs/RUN/ gives it, for the caller in ctx
// (session.WithCred; none: everything).
func (f *FS) RunFile(ctx context.Context, run, file string) ([]byte, error) {
	if file != RunMetaFile {
		if _, err := f.Run(ctx, run); err != nil {
			return nil, err // an unknown run, or one the caller has nothing of to see
		}
	}
	switch file {
	case RunMetaFile:
		r, err := f.Run(ctx, run)
		if err != nil {
			return nil, err
		}
		b, err := json.MarshalIndent(r, "", "  ")
		return append(b, '\n'), err
	case RunSummariesFile:
		sums, err := f.runSummaries(ctx, run)
		if err != nil {
			return nil, err
		}
		var b []byte
		for _, s := range sums {
			line, err := contextpack.SummaryLine(s)
			if err != nil {
				return nil, err
			}
			b = append(b, line...)
		}
		return b, nil
	case RunEventsFile:
		var b bytes.Buffer
		for q := (eventlog.Query{Forward: true, Limit: 1000}); ; {
			page, last, err := f.RunEvents(ctx, run, q)
			if err != nil {
				return nil, err
			}
			if err := eventlog.WriteJSON(&b, page.Events); err != nil {
				return nil, err
			}
			if !page.More || last == 0 {
				return b.Bytes(), nil
			}
			q.After = last
		}
	}
	return nil, fmt.Errorf("%w: %s/%s", backend.ErrKeyNotFound, run, file)
}
