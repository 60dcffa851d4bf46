package packhist

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/meta"
)

// Sys is the part of backend.SysStore the archive uses.
type Sys interface {
	SaveSys(ctx context.Context, name string, data []byte) error
	LoadSys(ctx context.Context, name string) ([]byte, error)
	ListSys(ctx context.Context, prefix string) ([]backend.Entry, error)
	DeleteSys(ctx context.Context, names ...string) error
}

// Log is the part of *eventlog.Log the archive reads.
type Log interface {
	Query(ctx context.Context, q eventlog.Query) (eventlog.Page, error)
}

var _ Log = (*eventlog.Log)(nil)

// ErrNotKept is wrapped by the error of a rebuild that needs a version the
// retention let go (see "Retention").
var ErrNotKept = errors.New("no longer kept")

// ErrNotArchived is wrapped by the error of a rebuild that needs a version
// the archive never got: a crash or a failed write between the log's
// append and the archive's, a change another writer made, or a version
// older than the archive.
var ErrNotArchived = errors.New("not archived")

// ErrMismatch is wrapped by the error of a record or value that does not
// match the event log (a damaged or altered archive).
var ErrMismatch = errors.New("does not match the event log")

// ErrOutOfRange is wrapped by the error of a seq that is 0 or past the
// log's head.
var ErrOutOfRange = errors.New("not in the event log")

// DefaultWindow is Options.Window when 0.
const DefaultWindow = 10000

// DefaultMaxValue is Options.MaxValue when 0: 64 KiB, eight times a
// pack's default budget.
const DefaultMaxValue = 64 << 10

// The system records (see "Records").
const (
	valuePrefix  = "packhist/v/"
	recordPrefix = "packhist/e/"
	prunedName   = "packhist/pruned"
	gapPrefix    = "packhist/g/"
	seqDigits    = 20
)

// Record is what the archive keeps of one event beyond the log: the key's
// metadata exactly as flushed.
type Record struct {
	Seq    uint64            `json:"seq"`
	Op     string            `json:"op"`
	Key    string            `json:"key"`
	SHA256 string            `json:"sha256"`
	Size   int64             `json:"size"`
	MTime  int64             `json:"mtime"` // Unix nanoseconds, as the session keeps it
	Mode   fs.FileMode       `json:"mode"`
	UID    uint32            `json:"uid"`
	GID    uint32            `json:"gid"`
	XAttrs map[string][]byte `json:"xattrs,omitempty"` // the user.memfs.* ones
	// Redacted is set by Redact: the value is not served.
	Redacted bool `json:"redacted,omitempty"`
}

// Info is the backend.Info the record describes.
func (r *Record) Info() backend.Info {
	return backend.Info{Size: r.Size, MTime: time.Unix(0, r.MTime), Mode: r.Mode, UID: r.UID, GID: r.GID,
		XAttrs: maps.Clone(r.XAttrs)}
}

// pruned is the record packhist/pruned.
type pruned struct {
	Through uint64 `json:"through"`
	Window  uint64 `json:"window"`
}

// gap is a record packhist/g/<seq>: at an Open whose log head was Seq,
// the store held pack sources (Keys) that the log does not explain.
type gap struct {
	Seq  uint64   `json:"seq"`
	Keys []string `json:"keys"`
}

func gapName(seq uint64) string { return fmt.Sprintf("%s%0*d", gapPrefix, seqDigits, seq) }

func recordName(seq uint64) string { return fmt.Sprintf("%s%0*d", recordPrefix, seqDigits, seq) }

func valueName(sum string) string { return valuePrefix + sum }

func parseRecordName(name string) (uint64, bool) { return parseSeqName(recordPrefix, name) }

func parseSeqName(prefix, name string) (uint64, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || len(rest) != seqDigits {
		return 0, false
	}
	n, err := strconv.ParseUint(rest, 10, 64)
	return n, err == nil
}

func sum(v []byte) string {
	s := sha256.Sum256(v)
	return hex.EncodeToString(s[:])
}

// memfsXAttrs is the user.memfs.* part of attrs (nil for none).
func memfsXAttrs(attrs map[string][]byte) map[string][]byte {
	var out map[string][]byte
	for k, v := range attrs {
		if strings.HasPrefix(k, meta.Prefix) && k != meta.Rev {
			if out == nil {
				out = make(map[string][]byte)
			}
			out[k] = append([]byte(nil), v...)
		}
	}
	return out
}

// Tracks reports whether key is a pack source for a pack whose
// always-loaded prefixes are prefixes (nil is "memory/", as in
// contextpack.Options): under one of them, a skills/NAME/SKILL.md, or
// the summaries file.
func Tracks(prefixes []string, key string) bool {
	if prefixes == nil {
		prefixes = []string{"memory/"}
	}
	if key == contextpack.SummariesKey || meta.IsSkillFile(key) {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// slot is a pack source's version as of some seq in a replay.
type slot struct {
	seq     uint64 // the event that set it
	sum     string
	size    int64
	foreign bool // another writer's version (a conflict): no record
}

// replay is the state of the pack sources after the events seen so far.
type replay struct {
	prefixes []string
	keys     map[string]slot
	last     map[string]uint64 // pack source -> the last event that changed it (removals included)
	lost     *eventlog.Event   // the first break event that lost events
}

func newReplay(prefixes []string) *replay {
	return &replay{prefixes: prefixes, keys: make(map[string]slot), last: make(map[string]uint64)}
}

// apply moves the state past ev.
func (r *replay) apply(ev *eventlog.Event) {
	set := func(k string, s slot) {
		if Tracks(r.prefixes, k) {
			r.keys[k] = s
			r.last[k] = s.seq
		}
	}
	remove := func(k string) {
		if _, ok := r.keys[k]; ok || Tracks(r.prefixes, k) {
			delete(r.keys, k)
			r.last[k] = ev.Seq
		}
	}
	switch ev.Op {
	case eventlog.OpWrite, eventlog.OpAttr:
		set(ev.Key, slot{seq: ev.Seq, sum: ev.SHA256, size: ev.Size})
	case eventlog.OpRename:
		remove(ev.OldKey)
		set(ev.Key, slot{seq: ev.Seq, sum: ev.SHA256, size: ev.Size})
	case eventlog.OpDelete:
		// A directory's removal takes what is under it.
		remove(ev.Key)
		for k := range r.keys {
			if strings.HasPrefix(k, ev.Key+"/") {
				remove(k)
			}
		}
	case eventlog.OpConflict:
		// The name held the other writer's value at this seq, whatever
		// the session's own events of this flush do with it next.
		set(ev.Key, slot{seq: ev.Seq, sum: ev.SHA256, size: ev.Size, foreign: true})
		if c := ev.Conflict; c != nil {
			switch c.Outcome {
			case outcomeKeptBeside:
				if c.Copy != "" {
					set(c.Copy, slot{seq: ev.Seq, sum: ev.SHA256, size: ev.Size, foreign: true})
				}
			case outcomeDeleted:
				remove(ev.Key)
			}
		}
	case eventlog.OpBreak:
		if ev.Break != nil && ev.Break.First > 0 && r.lost == nil {
			e := *ev
			r.lost = &e
		}
	}
}

// replayLog feeds fn every event of l with a seq from 1 to through, in
// order, a page at a time.
func replayLog(ctx context.Context, l Log, through uint64, fn func(*eventlog.Event)) error {
	return replayRange(ctx, l, 0, through, fn)
}

// replayRange feeds fn the events after seq after up to through.
func replayRange(ctx context.Context, l Log, after, through uint64, fn func(*eventlog.Event)) error {
	for after < through {
		p, err := l.Query(ctx, eventlog.Query{After: after, Before: through + 1, Forward: true, Limit: 1000})
		if err != nil {
			return fmt.Errorf("packhist: read the event log after seq %d: %w", after, err)
		}
		for i := range p.Events {
			fn(&p.Events[i])
			after = p.Events[i].Seq
		}
		if !p.More || len(p.Events) == 0 {
			return nil
		}
	}
	return nil
}

// head is the seq of the log's last event, 0 for an empty log.
func head(ctx context.Context, l Log) (uint64, error) {
	p, err := l.Query(ctx, eventlog.Query{Limit: 1})
	if err != nil {
		return 0, fmt.Errorf("packhist: read the event log's head: %w", err)
	}
	if len(p.Events) == 0 {
		return 0, nil
	}
	return p.Events[len(p.Events)-1].Seq, nil
}

// The outcomes of a conflict event (eventlog.Conflict.Outcome) that move
// or remove a name: session.OutcomeKeptBeside, OutcomeDeleted and OutcomeKeptBoth,
// written out here because only the engine may import the session
// (internal/lint); TestOutcomesAgree keeps them equal.
const (
	outcomeKeptBeside = "kept-beside"
	outcomeDeleted    = "deleted"
	outcomeKeptBoth   = "kept-both"
)
