package eventlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/memfs/memfs/backend"
)

// Many writers: on a store that several processes write at once (a
// backend.SysSwapper), each Append is one SwapSys guarded by events.head as
// the Log last knew it (or several in a row, when the store refuses one as
// too large). A writer that lost the race writes nothing; it
// reloads the end of the log and numbers its events again onto it.

// swapper is the optional part of Sys that a shared store has.
type swapper interface {
	SwapSys(ctx context.Context, guard string, old []byte, puts map[string][]byte, dels []string) (ok bool, err error)
}

var _ swapper = backend.SysSwapper(nil)

// ErrContended is wrapped by the error of an Append that lost the race to
// other writers of a shared store SwapTries times in a row. Nothing was
// appended; the caller may offer the events again.
var ErrContended = errors.New("eventlog: append: other writers kept moving the log")

// SwapTries is the most SwapSys calls one Append makes on a shared store.
const SwapTries = 50

// maxBackoff bounds the jittered wait between two tries of an Append.
const maxBackoff = 32 * time.Millisecond

// attempt is an Append whose SwapSys returned an error: the store may have
// committed it (a timeout after the commit), or may still do so, and the
// caller will offer the events again. The next Append finds out which, and
// does not append the same events twice. (One case is not covered: an
// Append that fails the same way while an earlier attempt guarded by the
// same head is still in doubt forgets the earlier one.)
type attempt struct {
	in   []Event // the caller's events, as offered
	done []Event // the first of them as stored, known to be in the log
	// out are the rest as the swap would have stored them, guarded by
	// guard, the last one being last; nil when no swap is in doubt.
	out   []Event
	guard []byte
	last  head
}

// appendSwap is Append on a shared store (see the package doc, "Many
// writers"). appendMu is held.
func (l *Log) appendSwap(ctx context.Context, sw swapper, orig []Event) ([]Event, error) {
	evs := orig
	var done []Event // events of an earlier, failed call that are in the log after all
	fail := func(err error) ([]Event, error) {
		if len(done) > 0 && l.unsure == nil {
			l.unsure = &attempt{in: slices.Clone(orig[:len(done)]), done: done}
		}
		return nil, err
	}
	limit := len(evs) // the most events one SwapSys takes; halved when the store refuses a batch as too large
	reload := false
	for try := 0; try < SwapTries; try++ {
		if reload {
			if try > 1 {
				d := min(time.Millisecond<<min(try-2, 10), maxBackoff)
				if err := sleep(ctx, rand.N(d)+1); err != nil {
					return fail(fmt.Errorf("eventlog: append: %w", err))
				}
			}
			if _, err := l.refresh(ctx, "append"); err != nil {
				if errors.Is(err, backend.ErrKeyNotFound) {
					continue // a chunk went away between the listing and its load
				}
				return fail(err)
			}
		}
		l.mu.Lock()
		tp := l.tipLocked()
		l.mu.Unlock()

		if a := l.unsure; a != nil {
			landed, known, err := l.settle(ctx, tp, a)
			if err != nil {
				return fail(err)
			}
			done, evs = nil, orig
			switch {
			case landed && prefixOf(a.in, orig):
				done, evs = slices.Concat(a.done, a.out), orig[len(a.in):]
			case landed:
				l.log.Warn("eventlog: an append that failed was committed after all; its events are in the log", "first", a.out[0].Seq, "last", a.last.Seq)
			case len(a.done) > 0 && prefixOf(a.in[:len(a.done)], orig):
				done, evs = a.done, orig[len(a.done):]
			}
			if known {
				l.unsure = nil
			}
			if len(evs) == 0 {
				l.unsure = nil
				return done, nil
			}
		}

		if len(evs) == 0 && len(tp.fix.breaks) == 0 {
			return done, nil // RecordDamage, and another writer recorded it
		}
		part := evs[:min(limit, len(evs))]
		b, err := l.build(tp, part)
		if err != nil {
			return fail(err)
		}
		puts, dels := l.swapOps(tp, b)
		ok, err := sw.SwapSys(ctx, headName, tp.guard, puts, dels)
		if errors.Is(err, backend.ErrBatchTooLarge) && len(part) > 1 {
			// Refused before anything was written: the same head, fewer events.
			limit, reload = len(part)/2, false
			try--
			continue
		}
		if err != nil {
			l.unsure = &attempt{
				in: slices.Clone(orig[:len(done)+len(part)]), done: done, out: b.out[len(tp.fix.breaks):],
				guard: tp.guard, last: head{Seq: b.seq, Hash: b.prev},
			}
			return nil, fmt.Errorf("eventlog: append: swap %s: %w", headName, err)
		}
		if !ok {
			reload = true
			continue
		}
		// The guard held, so an earlier attempt guarded by it can no
		// longer land (and one that had would have moved the head).
		l.unsure = nil
		l.swapped(b, dels)
		done = slices.Concat(done, b.out[len(tp.fix.breaks):])
		if evs = evs[len(part):]; len(evs) == 0 {
			return done, nil
		}
		// The rest in the next SwapSys, on the head this one wrote; only
		// lost races count as tries.
		try, reload = -1, false
	}
	return fail(fmt.Errorf("%w: %d tries", ErrContended, SwapTries))
}

// swapOps are the records the SwapSys of b saves and those it deletes.
func (l *Log) swapOps(tp tip, b batch) (map[string][]byte, []string) {
	puts := make(map[string][]byte, len(tp.fix.copies)+len(b.saves)+1)
	for _, s := range tp.fix.copies {
		puts[s.name] = s.data
	}
	for _, s := range b.saves {
		puts[s.name] = s.data
	}
	puts[headName] = b.hd
	var dels []string
	l.mu.Lock()
	pending := l.pending
	l.mu.Unlock()
	for _, name := range slices.Concat(pending, tp.fix.remove) {
		if _, put := puts[name]; !put && !slices.Contains(dels, name) {
			dels = append(dels, name)
		}
	}
	return puts, dels
}

// swapped makes the Log what the SwapSys of b, which held, stored.
func (l *Log) swapped(b batch, dels []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.full = append(l.full, b.finished...)
	l.tail, l.tailData, l.tailN = b.cur, b.data, b.n
	l.lastSeq, l.lastHash, l.floor = b.seq, b.prev, b.t0
	l.fix, l.pending = repair{}, nil
	for _, s := range b.saves {
		l.records[s.name] = int64(len(s.data))
	}
	l.records[headName], l.head = int64(len(b.hd)), b.hd
	for _, name := range dels {
		delete(l.records, name)
	}
}

// settle finds out whether a, the attempt in doubt, landed, on the log's
// end as tp has it; known is false when it did not land yet but still may.
func (l *Log) settle(ctx context.Context, tp tip, a *attempt) (landed, known bool, err error) {
	if a.out == nil {
		return false, true, nil
	}
	if tp.seq < a.last.Seq {
		// A head other than the guard never becomes the guard again.
		return false, !bytes.Equal(tp.guard, a.guard), nil
	}
	ok, err := l.holds(ctx, a.last)
	if err != nil {
		return false, false, err
	}
	return ok, true, nil
}

// holds reports whether the log's event h.Seq has the line hash h.Hash.
// The hash of a line covers its Prev, so the whole chain up to it is the
// one h was computed on.
func (l *Log) holds(ctx context.Context, h head) (bool, error) {
	v := l.view()
	if h.Seq == 0 || h.Seq > v.lastSeq {
		return false, nil
	}
	i := v.chunkOf(h.Seq)
	lines, err := l.lines(ctx, &v, i)
	if err != nil {
		return false, err
	}
	j := h.Seq - v.at(i).seq
	return j < uint64(len(lines)) && lineHash(lines[j]) == h.Hash, nil
}

// prefixOf reports whether evs starts with the events in, as offered.
func prefixOf(in, evs []Event) bool {
	if len(in) > len(evs) {
		return false
	}
	for i := range in {
		a, errA := json.Marshal(&in[i])
		b, errB := json.Marshal(&evs[i])
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			return false
		}
	}
	return true
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Refresh brings the Log up to date with a shared store (one that has
// SwapSys): other writers append to the log, and a Log sees their events
// (in Query, ReadAt, RecordNames and the rest) only after a Refresh, or
// after an Append that raced with them. It loads events.head; when that is
// what the Log knows, Refresh does nothing else (one LoadSys). Otherwise it
// reloads the end of the log as Open does (the listing, the new tail), not
// the chunks in between, which queries load when they need them. Damage
// it finds there is reported and recorded as Open's is.
//
// Refresh waits for an Append in progress, and an Append for it. A
// process on a shared store calls it before it answers a reader that must
// see the whole namespace's history, or every few seconds. On a store that
// is not shared, only this Log writes, and Refresh does nothing.
func (l *Log) Refresh(ctx context.Context) error {
	if _, ok := l.sys.(swapper); !ok {
		return nil
	}
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	_, err := l.refresh(ctx, "refresh")
	return err
}

// refresh is Refresh with appendMu held; it reports whether the head moved.
func (l *Log) refresh(ctx context.Context, op string) (bool, error) {
	hr, err := loadHead(ctx, l, op)
	if err != nil {
		return false, err
	}
	l.mu.Lock()
	same := bytes.Equal(hr.data, l.head) && (hr.data == nil) == (l.head == nil)
	l.mu.Unlock()
	if same {
		return false, nil
	}
	// Open's code, on a scratch Log nobody else sees; then its state
	// replaces the Log's in one step under mu.
	s := &Log{sys: l.sys, log: l.log, now: l.now}
	err = s.loadEnd(ctx, hr, op)
	l.loads.Add(s.loads.Load())
	if err != nil {
		return false, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.full, l.tail, l.tailData, l.tailN = s.full, s.tail, s.tailData, s.tailN
	l.lastSeq, l.lastHash = s.lastSeq, s.lastHash
	if s.floor.After(l.floor) {
		l.floor = s.floor
	}
	// What the store holds now decides what is left to repair: another
	// writer may have recorded the damage this Log found.
	l.pending, l.fix = s.pending, s.fix
	for _, b := range s.found {
		if !slices.Contains(l.found, b) {
			l.found = append(l.found, b)
		}
	}
	l.records, l.head = s.records, s.head
	return true, nil
}
