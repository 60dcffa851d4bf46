package memfs

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/memfs/memfs/backend"
)

// DefaultCollectInterval is how often the elected mount of a shared store
// collects what no key names any more (MountOptions.CollectInterval zero).
const DefaultCollectInterval = 5 * time.Minute

// collector is a mount's part in collecting a shared store
// (backend.Collector): it campaigns, and while elected it collects every
// interval, give or take a quarter, so that the mounts of one store do not
// collect at once when the leader changes.
type collector struct {
	stop context.CancelFunc
	done chan struct{} // closed when the goroutine has ended
}

// startCollector starts the collection of a store that has one, unless
// every is negative; nil otherwise.
func (f *FS) startCollector(every time.Duration) *collector {
	c, ok := f.store.(backend.Collector)
	if !ok || every < 0 {
		return nil
	}
	if every == 0 {
		every = DefaultCollectInterval
	}
	ctx, stop := context.WithCancel(context.Background())
	col := &collector{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(col.done)
		f.collectLoop(ctx, c, every)
	}()
	return col
}

// collectLoop campaigns until ctx is done; while elected, it collects.
func (f *FS) collectLoop(ctx context.Context, c backend.Collector, every time.Duration) {
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
		}
		resign()
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
