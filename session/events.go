package session

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// outbox is what flushes leave for later (guarded by Context.mu): the
// outcome of the last one, and the events a failed Options.Events call
// left for the next.
type outbox struct {
	stats  flushStats
	events []Event
}

type flushStats struct {
	last    time.Time
	lastErr error
	flushes int
	saved   int
	deleted int
}

// The operations of an Event.
const (
	EventWrite  = "write"  // the value was written (created or changed)
	EventDelete = "delete" // the key was removed
	EventRename = "rename" // the value moved from OldKey to Key
	EventAttr   = "attr"   // only metadata changed: mode, owner, times, attributes
	// EventConflict: another writer changed Key since the session read
	// it, and Options.OnConflict resolved it (Policy, Outcome; CopyKey
	// is the conflict copy, if any). Size and SHA256 are of the other
	// writer's value.
	EventConflict = "conflict"
)

// Event is one change that reached the store in a Flush.
type Event struct {
	Op     string
	Key    string
	OldKey string // for EventRename
	// Reason says why, when the session removed a file of its own
	// accord: ReasonExpire. "" for a change a writer made.
	Reason string
	Size   int64  // of the stored value; 0 for EventDelete
	SHA256 string // hex SHA-256 of the stored value; "" for EventDelete
	Writer meta.WriterInfo
	// For EventConflict: the policy's name, its outcome (Outcome...)
	// and the key of the conflict copy, "" for none.
	Policy  string
	Outcome string
	CopyKey string
	// Saved is, for an EventWrite, EventRename or EventAttr of a Flush,
	// the entry exactly as the store got it (its value redacted, its
	// derived attributes set), so that a receiver keeping history
	// (package packhist) records what was flushed rather than a newer
	// state of the session. A receiver must not modify it. It is nil for
	// other events (a delete, a conflict, a change another writer made, but
	// the rewrite of one: External.Rewritten).
	// A pointer keeps Event comparable.
	Saved *backend.Entry
	// Replayed marks a change replayed from the journal of a process
	// that ended before its flush settled: the store may have had it
	// already, and the event log with it (a kill between the event's
	// append and the journal's truncate). A receiver that keeps a log
	// drops the event when the log already holds the change (the key's
	// last version is this state), so that a replay records no change
	// twice; else it is a change whose event the kill kept from the log.
	Replayed bool
	gen      uint64 // order of the change in the session
}

// snap is one dirty file as a Flush took it.
type snap struct {
	f       *file
	gen     uint64
	from    string
	changed bool
	by      *meta.WriterInfo
	expect  backend.Version // the store's version the save replaces
	alias   bool            // another name of a node with hard links, saved with it
}

// events describes what a successful Flush did, in the order the changes
// were made (their generations).
func (c *Context) events(saved []snap, entries []backend.Entry, removed []string, removedGen map[string]uint64,
	gone map[string]*meta.WriterInfo) []Event {
	if c.opts.Events == nil {
		return nil
	}
	who := func(w *meta.WriterInfo) meta.WriterInfo {
		if w == nil {
			w = c.opts.Self
		}
		if w == nil {
			return meta.WriterInfo{}
		}
		return *w
	}
	var evs []Event
	replayed := c.replayedThrough.Load()
	renamedFrom := make(map[string]bool)
	for i, s := range saved {
		e := entries[i]
		sum := sha256.Sum256(e.Value)
		ev := Event{Key: e.Key, Size: int64(len(e.Value)), SHA256: hex.EncodeToString(sum[:]), Writer: who(s.by),
			Saved: &entries[i], Replayed: s.gen <= replayed, gen: s.gen}
		switch {
		case s.from != "" && s.from != e.Key:
			renamedFrom[s.from] = true
			r := ev
			r.Op, r.OldKey = EventRename, s.from
			evs = append(evs, r)
			if s.changed {
				ev.Op = EventWrite
				evs = append(evs, ev)
			}
		case s.changed || s.from == "":
			ev.Op = EventWrite
			evs = append(evs, ev)
		default:
			ev.Op = EventAttr
			evs = append(evs, ev)
		}
	}
	for _, k := range removed {
		by, stored := gone[k]
		if !stored || renamedFrom[k] {
			continue // never stored, or moved: the rename says it
		}
		ev := Event{Op: EventDelete, Key: k, Writer: who(by), Replayed: removedGen[k] <= replayed, gen: removedGen[k]}
		if by != nil && by == c.expirer {
			ev.Reason = ReasonExpire
		}
		evs = append(evs, ev)
	}
	slices.SortStableFunc(evs, func(a, b Event) int { return cmp.Compare(a.gen, b.gen) })
	return evs
}

// sendEvents hands events, after any a failed call left, to Options.Events.
// When that fails, the events wait for the next flush and the error is
// returned.
func (c *Context) sendEvents(ctx context.Context, evs []Event) error {
	if c.opts.Events == nil {
		return nil
	}
	c.mu.Lock()
	evs = append(c.mu.outbox.events, evs...)
	c.mu.outbox.events = nil
	c.mu.Unlock()
	if len(evs) == 0 {
		return nil
	}
	err := c.opts.Events(ctx, evs)
	if err != nil {
		c.log.Error("event log append failed; events kept for the next flush", "events", len(evs), "err", err)
		c.mu.Lock()
		c.mu.outbox.events = append(evs, c.mu.outbox.events...)
		c.mu.Unlock()
	}
	return err
}
