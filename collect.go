package memfs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
)

// DefaultCollectInterval is how often the collecting mount collects what
// no key names any more (MountOptions.CollectInterval zero).
const DefaultCollectInterval = 5 * time.Minute

// historyEvery is how many collection intervals apart the mount collects
// history (history.Store.Collect: it reads every version record): an hour
// at the default interval.
const historyEvery = 12

// collector is a mount's part in collecting its store. On a shared store
// (backend.Collector) it campaigns, and while elected it collects the
// store and its history every interval, give or take a quarter, so that
// the mounts of one store do not collect at once when the leader changes;
// on a store the mount holds alone, it collects history without an
// election.
type collector struct {
	stop context.CancelFunc
	done chan struct{} // closed when the goroutine has ended
}

// startCollector starts the collection of the store, unless every is
// negative (nil then). keep is history's retention.
func (f *FS) startCollector(every time.Duration, keep history.RetentionOptions) *collector {
	if every < 0 {
		return nil
	}
	if every == 0 {
		every = DefaultCollectInterval
	}
	ctx, stop := context.WithCancel(context.Background())
	col := &collector{stop: stop, done: make(chan struct{})}
	hc := &historyCollector{f: f, every: every * historyEvery,
		opts: history.CollectOptions{Retention: keep, Guard: eventlog.HeadRecord}}
	go func() {
		defer close(col.done)
		if c, ok := f.store.(backend.Collector); ok {
			f.collectLoop(ctx, c, every, hc)
			return
		}
		for wait(ctx, jitter(every)) {
			hc.collect(ctx)
		}
	}()
	return col
}

// collectLoop campaigns until ctx is done; while elected, it collects.
func (f *FS) collectLoop(ctx context.Context, c backend.Collector, every time.Duration, hc *historyCollector) {
	for ctx.Err() == nil {
		lead, resign, err := c.Lead(ctx)
		if err != nil {
			if ctx.Err() == nil {
				f.log.Debug("not a candidate to collect the store; trying again", "err", err)
				wait(ctx, jitter(every))
			}
			continue
		}
		f.log.Debug("elected to collect the store")
		for wait(lead, jitter(every)) {
			got, err := c.Collect(lead)
			switch {
			case err != nil && lead.Err() == nil:
				f.log.Warn("collection of the store failed", "err", err)
			case err == nil && got.Removed > 0:
				f.log.Info("collected unnamed data from the store", "removed", got.Removed)
			}
			hc.collect(lead)
		}
		resign()
	}
}

// historyCollector collects history at most once per every.
type historyCollector struct {
	f     *FS
	every time.Duration
	opts  history.CollectOptions
	last  time.Time // of the last collection; only the collector's goroutine uses it
}

func (h *historyCollector) collect(ctx context.Context) {
	if time.Since(h.last) < h.every {
		return
	}
	h.last = time.Now()
	got, err := h.f.rec.collect(ctx, h.opts)
	h.f.rec.changes.Add(1)
	switch {
	case err != nil && ctx.Err() == nil:
		h.f.log.Warn("collection of history failed", "err", err)
	case err == nil && (got.Removed > 0 || got.VersionsRemoved > 0):
		h.f.log.Info("collected history", "versions_removed", got.VersionsRemoved, "removed", got.Removed)
	}
}

// wait waits d or until ctx is done; it reports whether ctx is still live.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// jitter is d give or take a quarter.
func jitter(d time.Duration) time.Duration {
	return d*3/4 + rand.N(d/2+1)
}

// close stops the collection and waits for it: a Collect in progress is
// cancelled (each chunk it deletes is deleted whole or not at all).
func (c *collector) close() {
	if c == nil {
		return
	}
	c.stop()
	<-c.done
}

// Collected is what Collect did: the store's collection (Store: nil for a
// store without one) and history's.
type Collected struct {
	Store   *backend.Collected
	History history.Collected
}

// Collect collects st now, as the collecting mount does: the store
// (backend.Collector), then history with retention keep, its deletes
// guarded on the event log's head (mounts of a shared store may write
// meanwhile). Run it on a store no mount serves, or a shared one.
func Collect(ctx context.Context, st backend.SysStore, keep history.RetentionOptions) (Collected, error) {
	var out Collected
	if c, ok := st.(backend.Collector); ok {
		got, err := c.Collect(ctx)
		if err != nil {
			return out, err
		}
		out.Store = &got
	}
	var err error
	out.History, err = history.New(st).Collect(ctx, history.CollectOptions{Retention: keep, Guard: eventlog.HeadRecord})
	return out, err
}

// String says what the collection did, a line for the store's, one for
// history's.
func (c Collected) String() string {
	var b strings.Builder
	switch s := c.Store; {
	case s == nil:
	case !s.Swept:
		fmt.Fprintf(&b, "store: marked: nothing removed yet; a memfs gc %v or more from now (or a mount of the store) removes what no key names then\n", s.Wait)
	default:
		fmt.Fprintf(&b, "store: removed %d chunks that no key named for %v or more\n", s.Removed, s.Wait)
	}
	h := c.History
	fmt.Fprintf(&b, "history: %d versions, %d removed by retention (%d more kept for snapshots); %d objects referenced, %d not",
		h.Versions, h.VersionsRemoved, h.Pinned, h.Referenced, h.Unreferenced)
	if h.Swept {
		fmt.Fprintf(&b, ", %d of them removed (unreferenced for %v or more)\n", h.Removed, history.DefaultGrace)
	} else {
		fmt.Fprintf(&b, ": marked, nothing removed yet; a memfs gc %v or more from now removes what no version names then\n", history.DefaultGrace)
	}
	return b.String()
}
