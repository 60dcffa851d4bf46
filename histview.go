package memfs

import (
	"context"
	"fmt"
	"strings"

	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/history"
)

// historyView is what a mount's .memfs/history, snapshots and at read
// (fsnode.History): the store's history and, from the engine, the event
// log's head, a snapshot after a flush, and the names changes named.
type historyView struct {
	*history.Store
	f *FS
}

var _ fsnode.History = historyView{}

func (f *FS) historyView() historyView {
	return historyView{Store: history.New(f.store), f: f}
}

// Head is the seq of the event log's last event (0: none). On a shared
// store the log is refreshed first (one load of its head record): the
// view caches what it read of history for as long as the head stays, and
// another mount's versions must show as soon as its flush returned, not
// at the next periodic refresh (refreshEvents).
func (h historyView) Head(ctx context.Context) (uint64, error) {
	if err := h.f.events.Refresh(ctx); err != nil {
		return 0, fmt.Errorf("memfs: the event log's head: %w", err)
	}
	p, err := h.f.events.Query(ctx, eventlog.Query{Limit: 1})
	if err != nil {
		return 0, fmt.Errorf("memfs: the event log's head: %w", err)
	}
	if len(p.Events) == 0 {
		return 0, nil
	}
	return p.Events[len(p.Events)-1].Seq, nil
}

// Changes counts this mount's writes of versions and collections of
// history (recorder.changes).
func (h historyView) Changes() uint64 { return h.f.rec.changes.Load() }

// TakeSnapshot flushes, then names the event log's head: the snapshot
// holds every write acknowledged before it.
func (h historyView) TakeSnapshot(ctx context.Context, name, by string) error {
	if err := h.f.Flush(ctx); err != nil {
		return err
	}
	head, err := h.Head(ctx)
	if err != nil {
		return err
	}
	return h.Snapshot(ctx, name, head, by)
}

// Names returns the names directly under dir that an event named (a key
// or a renamed key's old name): every key history has versions of.
func (h historyView) Names(ctx context.Context, dir string) ([]string, error) {
	prefix := dir
	if dir != "" {
		prefix += "/"
	}
	seen := map[string]bool{}
	var out []string
	q := eventlog.Query{KeyPrefix: prefix, Forward: true, Limit: 10000}
	for {
		p, err := h.f.events.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("memfs: names under %q: %w", dir, err)
		}
		for _, e := range p.Events {
			for _, k := range []string{e.Key, e.OldKey} {
				rest, ok := strings.CutPrefix(k, prefix)
				if !ok || rest == "" {
					continue
				}
				name, _, _ := strings.Cut(rest, "/")
				if !seen[name] {
					seen[name] = true
					out = append(out, name)
				}
			}
		}
		if !p.More || len(p.Events) == 0 {
			return out, nil
		}
		q.After = p.Events[len(p.Events)-1].Seq
	}
}
