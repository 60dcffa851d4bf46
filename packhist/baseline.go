package packhist

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/eventlog"
)

// The check at open (checkBaseline) needs the state of the pack sources
// at the log's head, which is a replay of the whole log: at 100,000 keys
// with five versions each, half a million events decoded in the first
// minute of every mount. The state a check reached is kept in one record,
// baselineName, with the event it was read up to (its seq, and that
// event's hash chain link and content, so that a log that is not the one
// it was read from is replayed from the start); the next check replays
// only the events after it.
const baselineName = "packhist/baseline"

// baselineFormat changes when what a replay keeps (or Tracks) does: a
// record of another format is not used.
const baselineFormat = 1

// baselineRecord is the record's JSON.
type baselineRecord struct {
	Format   int                  `json:"format"`
	Seq      uint64               `json:"seq"`
	Prev     string               `json:"prev"`   // the event at Seq's Prev
	SHA256   string               `json:"sha256"` // and its SHA256, Key and Op
	Key      string               `json:"key"`
	Op       string               `json:"op"`
	Prefixes []string             `json:"prefixes"`
	Keys     map[string]savedSlot `json:"keys"`
}

type savedSlot struct {
	Seq     uint64 `json:"seq"`
	SHA256  string `json:"sha256"`
	Size    int64  `json:"size"`
	Foreign bool   `json:"foreign,omitempty"`
}

// eventAt returns the event at seq.
func eventAt(ctx context.Context, l Log, seq uint64) (eventlog.Event, bool, error) {
	p, err := l.Query(ctx, eventlog.Query{After: seq - 1, Before: seq + 1, Forward: true, Limit: 1})
	if err != nil || len(p.Events) == 0 || p.Events[0].Seq != seq {
		return eventlog.Event{}, false, err
	}
	return p.Events[0], true, nil
}

// resumeReplay returns the replay state of the last check at open and the
// seq it is at, when its record is there, of this format and these
// prefixes, at or before head, and read from this log; else a new state
// at seq 0.
func (a *Archiver) resumeReplay(ctx context.Context, head uint64) (*replay, uint64) {
	r := newReplay(a.opts.Prefixes)
	b, err := a.sys.LoadSys(ctx, baselineName)
	if err != nil {
		if !errors.Is(err, backend.ErrKeyNotFound) {
			a.logger.Warn("packhist: the state of the last check at open cannot be read; the log is replayed from its start", "err", err)
		}
		return r, 0
	}
	var rec baselineRecord
	if json.Unmarshal(b, &rec) != nil || rec.Format != baselineFormat || rec.Seq == 0 || rec.Seq > head ||
		!slices.Equal(rec.Prefixes, a.opts.Prefixes) {
		return r, 0
	}
	ev, ok, err := eventAt(ctx, a.log, rec.Seq)
	if err != nil || !ok || ev.Prev != rec.Prev || ev.SHA256 != rec.SHA256 || ev.Key != rec.Key || ev.Op != rec.Op {
		return r, 0
	}
	n := len(rec.Keys)
	maps.DeleteFunc(rec.Keys, func(k string, _ savedSlot) bool { return a.secretName(k) })
	for k, s := range rec.Keys {
		r.keys[k] = slot{seq: s.Seq, sum: s.SHA256, size: s.Size, foreign: s.Foreign}
	}
	if len(rec.Keys) < n { // kept by an older memfs: kept again without them
		a.logger.Warn("packhist: the state of the last check at open named files whose names hold a secret; the names are taken out", "names", n-len(rec.Keys))
		a.saveReplay(ctx, &rec)
	}
	return r, rec.Seq
}

// keepReplay records r, the state at head, for the next check at open,
// when that saves more than it costs: the events replayed since from
// outnumber the sources the record holds.
func (a *Archiver) keepReplay(ctx context.Context, r *replay, from, head uint64) {
	if head <= from || head-from <= uint64(len(r.keys)) {
		return
	}
	ev, ok, err := eventAt(ctx, a.log, head)
	if err != nil || !ok {
		return
	}
	rec := baselineRecord{Format: baselineFormat, Seq: head, Prev: ev.Prev, SHA256: ev.SHA256, Key: ev.Key, Op: ev.Op,
		Prefixes: a.opts.Prefixes, Keys: make(map[string]savedSlot, len(r.keys))}
	for k, s := range r.keys {
		if !a.secretName(k) { // Options.SecretName: never written into a record
			rec.Keys[k] = savedSlot{Seq: s.seq, SHA256: s.sum, Size: s.size, Foreign: s.foreign}
		}
	}
	a.saveReplay(ctx, &rec)
}

// saveReplay writes rec, the state of a check at open.
func (a *Archiver) saveReplay(ctx context.Context, rec *baselineRecord) {
	b, err := json.Marshal(rec)
	if err == nil {
		err = a.sys.SaveSys(ctx, baselineName, b)
	}
	if err != nil {
		a.logger.Warn("packhist: the state of the check at open was not kept; the next one replays the log from its start", "err", err)
	}
}
