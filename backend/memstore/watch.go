package memstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/memfs/memfs/backend"
)

var _ backend.Watcher = (*Store)(nil)

// A memory store is shared as a shared store is: Other is another writer
// of its contents (another agent's client, another program), whose changes
// every Store over the contents reports through Watch. The Store's own
// saves and deletes are not reported.

// Other is another writer of a Store's contents.
type Other struct{ c *contents }

// Other returns another writer of s's contents.
func (s *Store) Other() *Other { return &Other{c: s.c} }

// Set writes key as a regular file (mode 0644) holding value, as another
// writer would, and reports it to the watchers.
func (o *Other) Set(key string, value []byte) error {
	e := backend.Entry{Key: key, Value: value, Info: backend.Info{Mode: 0o644, MTime: time.Now()}}
	if err := backend.ValidateEntries([]backend.Entry{e}); err != nil {
		return fmt.Errorf("memstore: other: %w", err)
	}
	o.c.mu.Lock()
	defer o.c.mu.Unlock()
	if err := o.c.checkDirsLocked([]backend.Entry{e}, nil); err != nil {
		return err
	}
	o.c.saveLocked([]backend.Entry{e}, now(), o.c.bumpLocked())
	o.c.notifyLocked(key)
	return nil
}

// Remove removes key, as another writer would, and reports it.
func (o *Other) Remove(key string) error {
	if err := checkKeys([]string{key}); err != nil {
		return fmt.Errorf("memstore: other: %w", err)
	}
	o.c.mu.Lock()
	defer o.c.mu.Unlock()
	if o.c.holdsAnyLocked([]string{key}) {
		o.c.bumpLocked()
		o.c.deleteLocked([]string{key})
	}
	o.c.notifyLocked(key)
	return nil
}

// Stat returns the Info of key, as Load would without the value.
func (s *Store) Stat(ctx context.Context, key string) (backend.Info, error) {
	if err := checkKeys([]string{key}); err != nil {
		return backend.Info{}, fmt.Errorf("memstore: stat: %w", err)
	}
	if err := s.rlock(ctx, "stat"); err != nil {
		return backend.Info{}, err
	}
	defer s.c.mu.RUnlock()
	n, ok := s.c.keys[key]
	if !ok {
		return backend.Info{}, backend.NotFound("stat", key)
	}
	return n.infoOut(), nil
}

// watcher is one Watch: its queue is unbounded (a writer never waits for
// a reader), and a goroutine of its own hands the queue to the channel.
type watcher struct {
	owner *Store
	ch    chan backend.Change
	wake  chan struct{} // cap 1: the queue grew
	stop  chan struct{} // closed when the owner closes
	mu    sync.Mutex    // guards queue
	queue []backend.Change
}

// Watch reports the keys Other writers set or remove, until ctx is done or
// s is closed; then it closes the channel.
func (s *Store) Watch(ctx context.Context) (<-chan backend.Change, error) {
	if err := s.lock(ctx, "watch"); err != nil {
		return nil, err
	}
	w := &watcher{owner: s, ch: make(chan backend.Change), wake: make(chan struct{}, 1), stop: make(chan struct{})}
	if s.c.watchers == nil {
		s.c.watchers = map[*watcher]bool{}
	}
	s.c.watchers[w] = true
	s.c.mu.Unlock()
	go s.c.run(ctx, w)
	return w.ch, nil
}

// run hands w's queue to its channel until ctx is done or the owner
// closes.
func (c *contents) run(ctx context.Context, w *watcher) {
	defer func() {
		c.mu.Lock()
		delete(c.watchers, w)
		c.mu.Unlock()
		close(w.ch)
	}()
	for {
		w.mu.Lock()
		q := w.queue
		w.queue = nil
		w.mu.Unlock()
		for _, ch := range q {
			select {
			case w.ch <- ch:
			case <-ctx.Done():
				return
			case <-w.stop:
				return
			}
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			return
		case <-w.stop:
			return
		}
	}
}

// notifyLocked queues a change of key for every watcher. The caller holds
// c.mu.
func (c *contents) notifyLocked(key string) {
	for w := range c.watchers {
		w.mu.Lock()
		w.queue = append(w.queue, backend.Change{Key: key})
		w.mu.Unlock()
		w.poke()
	}
}

func (w *watcher) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// closeWatchersLocked ends the watches of s (it is closing). The caller
// holds c.mu.
func (c *contents) closeWatchersLocked(s *Store) {
	for w := range c.watchers {
		if w.owner == s {
			delete(c.watchers, w) // closed once
			close(w.stop)
		}
	}
}
