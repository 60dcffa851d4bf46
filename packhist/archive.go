package packhist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"sync"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/eventlog"
)

// Options configure an Archiver and a rebuild.
type Options struct {
	// Prefixes are the pack's always-loaded prefixes (memfs
	// Options.Bootstrap); nil is "memory/".
	Prefixes []string
	// Window is how many of the last events a rebuild is guaranteed for
	// (see "Retention"); 0 is DefaultWindow.
	Window uint64
	// MaxValue is the largest value copied into the archive, in bytes; 0
	// is DefaultMaxValue. A larger value gets its record, but a rebuild
	// reads it from the store's key, and only while the store still holds
	// that version (checked by its SHA-256): it keeps the archive from
	// doubling a store of large files.
	MaxValue int64
	// Logger receives what the Archiver reports (keys and seqs, never a
	// value); slog.Default when nil.
	Logger *slog.Logger
	// SecretName reports whether a name holds a secret (memfs asks its
	// redactor). Such a name is never written into a record: a gap and
	// the state a Baseline keeps leave it out, and one that an older memfs
	// wrote into either is taken out of it at the next Baseline. nil
	// checks nothing.
	SecretName func(name string) bool
}

// writers is how many items the Archiver's goroutine writes at once.
const writers = 8

// MaxQueued bounds the bytes of the values waiting for the Archiver's
// goroutine; what a flush hands it beyond that is not archived (logged;
// a rebuild that needs it says so).
const MaxQueued = 64 << 20

// Item is one flushed change to archive: the event as the log stored it
// (with its seq) and the entry exactly as flushed (session.Event.Saved),
// nil for a delete or a conflict.
type Item struct {
	Event eventlog.Event
	Saved *backend.Entry
}

// Archiver writes the records of pack sources as flushes report them, on a
// goroutine of its own, and prunes what the retention lets go.
type Archiver struct {
	sys    Sys
	log    Log
	opts   Options
	logger *slog.Logger
	done   chan struct{} // closed when the worker has returned
	// pr is the state of the pack sources at the last prune's cut, prAt
	// that cut (the worker's own: only prune uses them).
	pr   *replay
	prAt uint64

	mu    sync.Mutex // guards the fields below
	queue []Item     // added, not yet taken by the worker
	base  []baseline // baselines to check, before the queue
	// cancelBase ends the Baseline check in progress, nil when none.
	cancelBase context.CancelFunc
	queued     int64  // bytes of the queue's values (about)
	dropped    uint64 // items not queued: the queue was full
	added      uint64 // items ever added
	written    uint64 // items the worker is through with
	closing    bool
	wake       chan struct{} // closed and replaced when the queue or written moves
	// sinceP is how many records were written since the last prune.
	sinceP uint64
	// stored holds the values known to be stored (by SHA-256), so that an
	// unchanged value is not saved again at every attr event; emptied at
	// each prune, which may remove values.
	stored map[string]bool
}

// NewArchiver starts an Archiver writing to sys and reading l. Close it.
func NewArchiver(sys Sys, l Log, o Options) *Archiver {
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	if o.MaxValue == 0 {
		o.MaxValue = DefaultMaxValue
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	a := &Archiver{sys: sys, log: l, opts: o, logger: logger, done: make(chan struct{}),
		wake: make(chan struct{}), stored: make(map[string]bool)}
	go a.run()
	return a
}

// baseline is what a Baseline call asked to check.
type baseline struct {
	head    uint64
	entries []backend.Entry
}

// Tracks reports whether the archive keeps key's versions (a pack source).
func (a *Archiver) Tracks(key string) bool { return Tracks(a.opts.Prefixes, key) }

// Baseline has the Archiver check, before what is added after it, that
// the pack sources a session found at Open (entries: their Info and,
// when loaded, their value; clean ones only) are what the log's events
// up to head, the log's head then, say they are. A version the log
// explains whose record is missing (a store older than the archive, a
// crash before its write) is archived from entries, when its value is
// there to check against the event. A source the log does not explain
// (changed, made or removed while no memfs flushed it: a store filled
// before its event log, an edit of a directory store while unmounted) is
// recorded as a gap: a rebuild as of head or later that needs it fails
// with an error wrapping ErrNotArchived, until an event changes it. It
// never blocks on I/O; the check replays the log, on the Archiver's
// goroutine.
func (a *Archiver) Baseline(head uint64, entries []backend.Entry) {
	var es []backend.Entry
	for _, e := range entries {
		// A symlink or a special file is a node the log names as it
		// names a file (the pack leaves it out, not the archive):
		// leaving it out here made it a change outside memfs's flushes
		// at every open. Directories have no events.
		if Tracks(a.opts.Prefixes, e.Key) && !e.Info.Mode.IsDir() {
			es = append(es, e)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		return
	}
	a.base = append(a.base, baseline{head: head, entries: es})
	a.added++
	a.wakeLocked()
}

// Add queues items to archive; it never blocks on I/O and never fails.
// Items that are no pack source are dropped at once.
func (a *Archiver) Add(items []Item) {
	// Logged after the lock is let go, and with no key: a name may hold
	// a secret.
	var late bool
	var firstSeq uint64
	var dropped uint64
	defer func() {
		if late {
			a.logger.Warn("packhist: items added after Close are not archived", "events", len(items))
		}
		if firstSeq != 0 {
			a.logger.Error("packhist: the archive falls behind the flushes; versions are not archived", "seq", firstSeq, "dropped", dropped)
		}
	}()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		late = true
		return
	}
	for _, it := range items {
		if it.Event.Op == eventlog.OpDelete || it.Event.Op == eventlog.OpConflict ||
			!Tracks(a.opts.Prefixes, it.Event.Key) {
			continue
		}
		n := int64(len(it.Event.Key)) + 256
		if it.Saved != nil {
			n += int64(len(it.Saved.Value))
		}
		if a.queued+n > MaxQueued && len(a.queue) > 0 {
			// The store cannot keep up: memory stays bounded, and the
			// rebuild as of this seq says it was not archived.
			a.dropped++
			if (a.dropped == 1 || a.dropped%1000 == 0) && firstSeq == 0 {
				firstSeq, dropped = it.Event.Seq, a.dropped
			}
			continue
		}
		a.queue = append(a.queue, it)
		a.queued += n
		a.added++
	}
	a.wakeLocked()
}

func (a *Archiver) wakeLocked() {
	close(a.wake)
	a.wake = make(chan struct{})
}

// Sync waits until every item added before it has been written (or its
// write has failed), or ctx ends.
func (a *Archiver) Sync(ctx context.Context) error {
	a.mu.Lock()
	target := a.added
	for a.written < target {
		w := a.wake
		a.mu.Unlock()
		select {
		case <-w:
		case <-a.done:
			a.mu.Lock()
			if a.written < target {
				a.mu.Unlock()
				return errors.New("packhist: the archiver stopped")
			}
			a.mu.Unlock()
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
		a.mu.Lock()
	}
	a.mu.Unlock()
	return nil
}

// Close writes what is queued and stops the Archiver. A Baseline check
// not finished is dropped (the next open checks again): a short command
// does not wait for a replay of the whole log. What ctx's end cuts short
// is lost, as a crash would lose it.
func (a *Archiver) Close(ctx context.Context) error {
	a.mu.Lock()
	if !a.closing {
		a.closing = true
		a.written += uint64(len(a.base))
		a.base = nil
		if a.cancelBase != nil {
			a.cancelBase()
		}
		a.wakeLocked()
	}
	a.mu.Unlock()
	err := a.Sync(ctx)
	<-a.done
	return err
}

func (a *Archiver) run() {
	defer close(a.done)
	ctx := context.Background()
	for {
		a.mu.Lock()
		for len(a.queue) == 0 && len(a.base) == 0 && !a.closing {
			w := a.wake
			a.mu.Unlock()
			<-w
			a.mu.Lock()
		}
		if len(a.queue) == 0 && len(a.base) == 0 {
			a.mu.Unlock()
			return
		}
		if len(a.base) > 0 {
			b := a.base[0]
			a.base = a.base[1:]
			bctx, cancel := context.WithCancel(ctx)
			a.cancelBase = cancel
			a.mu.Unlock()
			if err := a.checkBaseline(bctx, b); err != nil && bctx.Err() == nil {
				a.logger.Error("packhist: the check of the pack sources at open failed; a rebuild may miss a change made outside memfs", "head", b.head, "err", err)
			}
			cancel()
			a.mu.Lock()
			a.cancelBase = nil
			a.written++
			a.wakeLocked()
			a.mu.Unlock()
			continue
		}
		batch := a.queue
		a.queue, a.queued = nil, 0
		a.mu.Unlock()

		// Items are independent (each saves its value, then its record),
		// so several go at once: a store that makes each save durable
		// (badger) commits concurrent ones together.
		var wg sync.WaitGroup
		sem := make(chan struct{}, writers)
		for _, it := range batch {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if err := a.write(ctx, it); err != nil {
					a.logger.Error("packhist: a version of a pack source was not archived; a rebuild as of its seq will say so",
						"seq", it.Event.Seq, "err", err)
				}
			})
		}
		wg.Wait()
		a.mu.Lock()
		a.sinceP += uint64(len(batch))
		prune := a.sinceP >= max(a.opts.Window/4, 1)
		if prune {
			a.sinceP = 0
		}
		a.mu.Unlock()
		if prune {
			if err := a.prune(ctx); err != nil {
				a.logger.Error("packhist: prune failed; the archive keeps more than its window until the next one", "err", err)
			}
		}
		a.mu.Lock()
		a.written += uint64(len(batch))
		a.wakeLocked()
		a.mu.Unlock()
	}
}

// checkBaseline carries out a Baseline.
func (a *Archiver) checkBaseline(ctx context.Context, b baseline) error {
	if err := a.scrubGaps(ctx); err != nil {
		return err
	}
	r, from := a.resumeReplay(ctx, b.head)
	if err := replayRange(ctx, a.log, from, b.head, r.apply); err != nil {
		return err
	}
	a.keepReplay(ctx, r, from, b.head)
	now := make(map[string]bool, len(b.entries))
	var gaps []string
	for _, e := range b.entries {
		now[e.Key] = true
		s, ok := r.keys[e.Key]
		switch {
		case !ok || s.size != e.Info.Size || (e.Value != nil && sum(e.Value) != s.sum):
			gaps = append(gaps, e.Key)
			continue
		case s.foreign:
			continue // StateAt says what it lacks
		}
		switch _, err := a.sys.LoadSys(ctx, recordName(s.seq)); {
		case errors.Is(err, fs.ErrNotExist):
			if e.Value == nil {
				// Not loaded at open: the store's value, if it is still
				// the one the event names.
				le, ok := a.storeEntry(ctx, e.Key, s.sum)
				if !ok {
					continue // changed since: its next event is archived
				}
				e.Value = le.Value
			}
			it := Item{Event: eventlog.Event{Seq: s.seq, Op: eventlog.OpWrite, Key: e.Key, SHA256: s.sum}, Saved: &e}
			if err := a.write(ctx, it); err != nil {
				a.logger.Error("packhist: a version found at open was not archived", "seq", s.seq, "err", err)
			}
		case err != nil:
			return fmt.Errorf("load the record of %s: %w", e.Key, err)
		}
	}
	for k := range r.keys {
		if !now[k] {
			gaps = append(gaps, k)
		}
	}
	gaps = slices.DeleteFunc(gaps, a.secretName)
	if len(gaps) == 0 {
		return nil
	}
	slices.Sort(gaps)
	// Info, not a warning: another program editing a directory store is
	// how memfs is meant to be used; only rebuilds of those seqs lose.
	a.logger.Info("packhist: pack sources changed outside memfs's flushes; a context pack as of an earlier seq cannot show them, nor one as of later seqs until they change again",
		"head", b.head, "keys", len(gaps))
	data, err := json.Marshal(gap{Seq: b.head, Keys: gaps})
	if err != nil {
		return err
	}
	return a.sys.SaveSys(ctx, gapName(b.head), data)
}

func (a *Archiver) secretName(name string) bool {
	return a.opts.SecretName != nil && a.opts.SecretName(name)
}

// scrubGaps takes every name with a secret (Options.SecretName) out of the
// gap records, as an older memfs wrote them: the session never takes such
// a name in, so no rebuild needs the gap to name it. A gap left with no
// name goes.
func (a *Archiver) scrubGaps(ctx context.Context) error {
	if a.opts.SecretName == nil {
		return nil
	}
	gs, err := a.sys.ListSys(ctx, gapPrefix)
	if err != nil {
		return fmt.Errorf("list the gaps: %w", err)
	}
	for _, e := range gs {
		b, err := a.sys.LoadSys(ctx, e.Key)
		if err != nil {
			return fmt.Errorf("load %s: %w", e.Key, err)
		}
		var gp gap
		if json.Unmarshal(b, &gp) != nil {
			continue
		}
		n := len(gp.Keys)
		if gp.Keys = slices.DeleteFunc(gp.Keys, a.secretName); len(gp.Keys) == n {
			continue
		}
		a.logger.Warn("packhist: a gap record named files whose names hold a secret; the names are taken out", "record", e.Key, "names", n-len(gp.Keys))
		if len(gp.Keys) == 0 {
			err = a.sys.DeleteSys(ctx, e.Key)
		} else if b, err = json.Marshal(gp); err == nil {
			err = a.sys.SaveSys(ctx, e.Key, b)
		}
		if err != nil {
			return fmt.Errorf("rewrite %s without the names that hold a secret: %w", e.Key, err)
		}
	}
	return nil
}

// write saves it's value (unless stored already) and then its record, so
// that a record never names a missing value.
func (a *Archiver) write(ctx context.Context, it Item) error {
	e, ev := it.Saved, &it.Event
	if e == nil {
		// A change memfs took from another writer (an external write):
		// the store's entry, while it is still the version the event
		// names.
		var ok bool
		if e, ok = a.storeEntry(ctx, ev.Key, ev.SHA256); !ok {
			return fmt.Errorf("%s changed by another writer: the store no longer holds the version event %d names: %w", ev.Key, ev.Seq, ErrNotArchived)
		}
	}
	s := sum(e.Value)
	if s != ev.SHA256 {
		// Never record a value the log does not vouch for.
		return fmt.Errorf("the flushed value of %s is not the one event %d names: %w", ev.Key, ev.Seq, ErrMismatch)
	}
	a.mu.Lock()
	known := a.stored[s] || int64(len(e.Value)) > a.opts.MaxValue
	a.mu.Unlock()
	if !known {
		if err := a.sys.SaveSys(ctx, valueName(s), e.Value); err != nil {
			return fmt.Errorf("save the value of %s: %w", ev.Key, err)
		}
		a.mu.Lock()
		a.stored[s] = true
		a.mu.Unlock()
	}
	r := Record{Seq: ev.Seq, Op: ev.Op, Key: ev.Key, SHA256: s, Size: int64(len(e.Value)), MTime: e.Info.MTime.UnixNano(),
		Mode: e.Info.Mode, UID: e.Info.UID, GID: e.Info.GID, XAttrs: memfsXAttrs(e.Info.XAttrs)}
	b, err := json.Marshal(&r)
	if err != nil {
		return err
	}
	if err := a.sys.SaveSys(ctx, recordName(ev.Seq), b); err != nil {
		return fmt.Errorf("save the record of %s: %w", ev.Key, err)
	}
	return nil
}

// prune removes the records and values no rebuild of the last Window
// events needs (see "Retention").
func (a *Archiver) prune(ctx context.Context) error {
	h, err := head(ctx, a.log)
	if err != nil {
		return err
	}
	w := a.opts.Window
	if h <= w {
		return nil
	}
	cut := h - w
	if err := a.replayToCut(ctx, cut); err != nil {
		return err
	}
	ps, err := a.windowNeeds(ctx, cut, h)
	if err != nil {
		return err
	}
	if err := a.dropRecords(ctx, ps, cut, h); err != nil {
		return err
	}
	if err := a.dropMootGaps(ctx, ps, cut); err != nil {
		return err
	}
	return a.removePruned(ctx, ps, pruned{Through: cut, Window: w})
}

// pruneSet is what one prune keeps and what it removes.
type pruneSet struct {
	keep     map[uint64]bool // the records a rebuild in the window needs, by sequence
	keepSums map[string]bool // the values a kept record names
	drop     []string        // the records and gaps to remove
	dropSums map[string]bool // the values a dropped record names
}

// replayToCut moves the state at the cut (a.pr) forward from the last
// prune's: a prune reads the events since then, not the whole log.
func (a *Archiver) replayToCut(ctx context.Context, cut uint64) error {
	if a.pr == nil || a.prAt > cut {
		a.pr, a.prAt = newReplay(a.opts.Prefixes), 0
	}
	if err := replayRange(ctx, a.log, a.prAt, cut, a.pr.apply); err != nil {
		a.pr = nil
		return err
	}
	a.prAt = cut
	return nil
}

// windowNeeds returns what a rebuild of any state after cut, up to head
// h, needs: the record of each key's state at the cut and every record
// since, with their values.
func (a *Archiver) windowNeeds(ctx context.Context, cut, h uint64) (*pruneSet, error) {
	ps := &pruneSet{keep: make(map[uint64]bool), keepSums: make(map[string]bool), dropSums: make(map[string]bool)}
	for _, s := range a.pr.keys {
		ps.keep[s.seq] = true
		ps.keepSums[s.sum] = true
	}
	if err := replayRange(ctx, a.log, cut, h, func(ev *eventlog.Event) {
		ps.keep[ev.Seq] = true
		ps.keepSums[ev.SHA256] = true
	}); err != nil {
		return nil, err
	}
	return ps, nil
}

// dropRecords adds to ps.drop the records at or before the cut that are
// not needed, and the values they name to ps.dropSums. A record past what
// this log has seen, up to head h, is another writer's: kept, with its
// value.
func (a *Archiver) dropRecords(ctx context.Context, ps *pruneSet, cut, h uint64) error {
	es, err := a.sys.ListSys(ctx, recordPrefix)
	if err != nil {
		return fmt.Errorf("packhist: list the records: %w", err)
	}
	for _, e := range es {
		seq, ok := parseRecordName(e.Key)
		if !ok || (seq <= h && (seq > cut || ps.keep[seq])) {
			continue
		}
		b, err := a.sys.LoadSys(ctx, e.Key)
		if err != nil {
			return fmt.Errorf("packhist: load %s: %w", e.Key, err)
		}
		var rec Record
		jerr := json.Unmarshal(b, &rec)
		if seq > h {
			if jerr == nil {
				ps.keepSums[rec.SHA256] = true
			}
			continue
		}
		ps.drop = append(ps.drop, e.Key)
		if jerr == nil {
			ps.dropSums[rec.SHA256] = true
		}
	}
	return nil
}

// dropMootGaps adds to ps.drop the gaps at or before the cut that are
// moot: an event changed each key a gap names before the cut, so no
// rebuild in the window can meet it.
func (a *Archiver) dropMootGaps(ctx context.Context, ps *pruneSet, cut uint64) error {
	gs, err := a.sys.ListSys(ctx, gapPrefix)
	if err != nil {
		return fmt.Errorf("packhist: list the gaps: %w", err)
	}
	for _, e := range gs {
		g, ok := parseSeqName(gapPrefix, e.Key)
		if !ok || g > cut {
			continue
		}
		b, err := a.sys.LoadSys(ctx, e.Key)
		if err != nil {
			return fmt.Errorf("packhist: load %s: %w", e.Key, err)
		}
		var gp gap
		if json.Unmarshal(b, &gp) != nil {
			continue
		}
		if !slices.ContainsFunc(gp.Keys, func(k string) bool { return a.pr.last[k] <= g }) {
			ps.drop = append(ps.drop, e.Key)
		}
	}
	return nil
}

// removePruned saves the watermark p, then removes what ps drops: the
// records and gaps, then the values only dropped records name (an orphan
// value is never guessed at).
func (a *Archiver) removePruned(ctx context.Context, ps *pruneSet, p pruned) error {
	var vals []string
	for s := range ps.dropSums {
		if s != "" && !ps.keepSums[s] {
			vals = append(vals, valueName(s))
		}
	}
	slices.Sort(vals)
	// The watermark first: a rebuild that misses a record then says it
	// was pruned, not that it was never archived.
	b, _ := json.Marshal(p)
	if err := a.sys.SaveSys(ctx, prunedName, b); err != nil {
		return fmt.Errorf("packhist: save %s: %w", prunedName, err)
	}
	if err := a.sys.DeleteSys(ctx, ps.drop...); err != nil {
		return fmt.Errorf("packhist: remove %d records: %w", len(ps.drop), err)
	}
	a.mu.Lock()
	clear(a.stored)
	a.mu.Unlock()
	if err := a.sys.DeleteSys(ctx, vals...); err != nil {
		return fmt.Errorf("packhist: remove %d values: %w", len(vals), err)
	}
	return nil
}

// storeEntry loads key from the store (when Sys is a backend.Store) if its
// value's SHA-256 is want.
func (a *Archiver) storeEntry(ctx context.Context, key, want string) (*backend.Entry, bool) {
	return loadIfSum(ctx, a.sys, key, want)
}
