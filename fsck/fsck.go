// Package fsck checks a memfs store for damage, and moves damaged records
// aside when asked.
//
// Check reads every value of the store (as a mount's Resolve would, in
// batches, one by one where a batch fails), takes the records the store
// itself found undecodable in its listing (a store with a Damaged()
// []string method: etcdstore), and verifies the event log's hash chain
// (eventlog.Verify). Each damaged key, record or chain break is one
// Finding. A Finding names the key or record and says what is wrong; it
// never holds a value's bytes.
//
// Without Options.Repair, Check only reads. With it, each damaged key is
// moved aside by the store (backend.AsideMover: its records as stored go
// to a reserved place the listing never shows; nothing is deleted), and
// the event log records the damage its Open found (eventlog.RecordDamage:
// the damaged records copied under events.damaged/, a break event each).
// Finding.Aside says where each went; a store that cannot move records
// aside leaves them, and Finding.Err says so.
package fsck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/eventlog"
)

// The kinds of Finding.
const (
	KindValue  = "value"         // a key whose value does not load
	KindRecord = "record"        // a key whose record the store cannot decode (left out of the listing)
	KindEvents = "events"        // the event log: a chain break, or damage on record
	KindSys    = "system record" // one of memfs's own records that the store cannot decode
)

// ErrNoAside is a Finding's Err when Repair was asked of a store that
// cannot move records aside (not a backend.AsideMover): nothing changed.
var ErrNoAside = errors.New("this store cannot move a record aside; it is left as it is")

// ErrReadsNow is a Finding's Err when Repair found the key readable by the
// time it would move it (another writer replaced it since the check): it
// is left in place.
var ErrReadsNow = errors.New("it reads now (replaced since it was checked); left in place")

// errSysKept is why Repair leaves a damaged system record.
var errSysKept = errors.New("fsck moves no system record aside; it is kept as it is")

// Options configure Check. The zero value only reads.
type Options struct {
	// Repair moves damaged records aside (see the package doc).
	Repair bool
}

// Finding is one damaged key, record, or break of the event log.
type Finding struct {
	Kind   string // KindValue, KindRecord or KindEvents
	Key    string // the key; for KindEvents the log's record, or "" for the chain
	Reason string // what is wrong, without any value's bytes
	Aside  string // with Repair: where the damaged records are now
	Err    error  // with Repair: why they were not moved
	// Recorded is damage the event log recorded earlier (a break event,
	// the bytes kept under events.damaged/): history, nothing to do.
	Recorded bool
}

// Report is what Check found.
type Report struct {
	Keys     int       // keys whose value was read
	Findings []Finding // in key order, the event log's last
	Events   eventlog.Report
}

// batch is how many values one Load reads.
const batch = 256

// Check reads st whole and reports what is damaged; with opts.Repair it
// moves it aside. Its error is a failure of the store as a whole (what
// was found until then is in the Report).
func Check(ctx context.Context, st backend.SysStore, opts Options) (Report, error) {
	var r Report
	var keys []string
	err := backend.Walk(ctx, st, func(es []backend.Entry) error {
		for _, e := range es {
			if e.Info.Mode.IsRegular() || e.Info.Mode.Type() == fs.ModeSymlink {
				keys = append(keys, e.Key)
			}
		}
		return nil
	})
	if err != nil {
		return r, fmt.Errorf("fsck: list: %w", err)
	}
	slices.Sort(keys)
	bad := map[string]Finding{}
	for i := 0; i < len(keys); i += batch {
		ks := keys[i:min(i+batch, len(keys))]
		_, failed, err := backend.LoadEach(ctx, st, ks...)
		if err != nil {
			return r, fmt.Errorf("fsck: load: %w", err)
		}
		r.Keys += len(ks)
		for k, err := range failed {
			if backend.Damaged(err) {
				bad[k] = Finding{Kind: KindValue, Key: k, Reason: reason(err)}
			}
		}
	}
	if d, ok := st.(interface{ Damaged() []string }); ok {
		for _, k := range d.Damaged() {
			if _, ok := bad[k]; !ok {
				bad[k] = Finding{Kind: KindRecord, Key: k, Reason: "its record does not decode; the key is left out of the listing"}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(bad)) {
		f := bad[k]
		if opts.Repair {
			f.Aside, f.Err = moveAside(ctx, st, k)
		}
		r.Findings = append(r.Findings, f)
	}
	if opts.Repair {
		events, err := recordEvents(ctx, st)
		r.Findings = append(r.Findings, events...)
		if err != nil {
			return r, err
		}
	}
	if r.Events, err = eventlog.Verify(ctx, st); err != nil {
		return r, fmt.Errorf("fsck: %w", err)
	}
	if d, ok := st.(interface{ DamagedSys() []string }); ok {
		// Records the listing of system records left out (Verify
		// listed the event log's): kept as they are.
		for _, n := range d.DamagedSys() {
			f := Finding{Kind: KindSys, Key: n, Reason: "the system record does not decode; memfs reads on without it"}
			if opts.Repair {
				f.Err = errSysKept
			}
			r.Findings = append(r.Findings, f)
		}
	}
	if !r.Events.OK && !slices.Contains(r.Events.Damage, r.Events.Problem) {
		r.Findings = append(r.Findings, Finding{Kind: KindEvents, Reason: r.Events.Problem})
	}
	for _, d := range r.Events.Damage {
		r.Findings = append(r.Findings, Finding{Kind: KindEvents, Reason: d, Recorded: true})
	}
	return r, nil
}

// Damaged returns how many findings are damage not yet dealt with (not
// Recorded, not moved aside).
func (r Report) Damaged() int {
	n := 0
	for _, f := range r.Findings {
		if !f.Recorded && (f.Aside == "" || f.Err != nil) {
			n++
		}
	}
	return n
}

// recordEvents has the event log record the damage its Open finds at
// its end (a torn or damaged last chunk, a damaged head), which the next
// write through memfs would record otherwise; Verify reports it either way.
func recordEvents(ctx context.Context, st backend.SysStore) ([]Finding, error) {
	l, err := eventlog.Open(ctx, st, nil) // what it finds is in the Findings
	if err != nil {
		return nil, fmt.Errorf("fsck: %w", err)
	}
	found := l.Damage()
	if len(found) == 0 {
		return nil, nil
	}
	_, rerr := l.RecordDamage(ctx)
	var out []Finding
	for _, b := range found {
		f := Finding{Kind: KindEvents, Key: b.Record, Reason: b.Reason, Err: rerr}
		if rerr == nil {
			f.Aside = b.SavedTo
		}
		out = append(out, f)
	}
	return out, nil
}

// moveAside moves key aside if st can and the key is still damaged: one
// that reads now is another writer's since the check, and stays.
func moveAside(ctx context.Context, st backend.Store, key string) (string, error) {
	m, ok := st.(backend.AsideMover)
	if !ok {
		return "", ErrNoAside
	}
	if _, err := st.Load(ctx, key); err == nil {
		return "", ErrReadsNow
	}
	return m.MoveAside(ctx, key)
}

// reason is err's text without the key (the Finding names it) as far as
// the error is a *fs.PathError.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
