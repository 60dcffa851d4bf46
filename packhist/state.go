package packhist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
)

// State is the pack sources as of one seq: a contextpack.Source whose
// values come from the archive, each checked against the event log before
// it is used.
type State struct {
	sys  Sys
	seq  uint64
	recs map[string]*Record // key -> its version as of seq
	vals map[string][]byte  // key -> loaded, verified value
	now  map[string]*fate   // key -> what became of it by the log's head
}

var _ contextpack.Source = (*State)(nil)

// StateAt reconstructs every pack source (see Tracks; prefixes as in
// Options.Prefixes) as it stood when the head of the log l was seq: it
// replays the log's events up to seq and loads each source's Record of
// the version then. seq 0 or past the head is an error wrapping
// ErrOutOfRange; a version the archive lacks, one wrapping ErrNotKept
// (pruned) or ErrNotArchived; a record the log contradicts, one wrapping
// ErrMismatch. Each error names the key and the seqs. The values are
// loaded by Resolve, and checked there. It also follows each source
// through the events after seq up to the head (see Now).
func StateAt(ctx context.Context, sys Sys, l Log, seq uint64, prefixes []string) (*State, error) {
	h, err := head(ctx, l)
	if err != nil {
		return nil, err
	}
	if seq == 0 || seq > h {
		return nil, fmt.Errorf("packhist: seq %d: %w (its seqs run from 1 to %d)", seq, ErrOutOfRange, h)
	}
	r := newReplay(prefixes)
	if err := replayLog(ctx, l, seq, r.apply); err != nil {
		return nil, err
	}
	if b := r.lost; b != nil {
		return nil, fmt.Errorf("packhist: seq %d: the event log lost events before it (break at seq %d, %s: %s), so what the pack sources were then is not known: %w",
			seq, b.Seq, b.Break.Record, b.Break.Reason, ErrNotArchived)
	}
	var pr pruned
	switch b, err := sys.LoadSys(ctx, prunedName); {
	case err == nil:
		if err := json.Unmarshal(b, &pr); err != nil {
			return nil, fmt.Errorf("packhist: %s: %w", prunedName, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("packhist: load %s: %w", prunedName, err)
	}
	if err := checkGaps(ctx, sys, r, seq); err != nil {
		return nil, err
	}
	st := &State{sys: sys, seq: seq, recs: make(map[string]*Record, len(r.keys)), vals: make(map[string][]byte)}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range r.keys {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		s := r.keys[k]
		if s.foreign {
			return nil, fmt.Errorf("packhist: %s as of seq %d is %w: another writer's version was there (conflict event %d), and only what this memfs flushed is archived",
				k, seq, ErrNotArchived, s.seq)
		}
		b, err := sys.LoadSys(ctx, recordName(s.seq))
		switch {
		case errors.Is(err, fs.ErrNotExist) && s.seq <= pr.Through:
			return nil, fmt.Errorf("packhist: %s as of seq %d is %w: its version is that of seq %d, and the archive keeps what a rebuild of the last %d events needs (what only seqs up to %d needed is removed)",
				k, seq, ErrNotKept, s.seq, pr.Window, pr.Through)
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("packhist: %s as of seq %d is %w: its version (event %d) has no record (a crash or a failed write before the archive got it, or a change memfs did not flush)",
				k, seq, ErrNotArchived, s.seq)
		case err != nil:
			return nil, fmt.Errorf("packhist: load the record of %s (seq %d): %w", k, s.seq, err)
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("packhist: the record of %s (seq %d) does not parse (%v): %w", k, s.seq, err, ErrMismatch)
		}
		if rec.Seq != s.seq || rec.Key != k || rec.SHA256 != s.sum {
			return nil, fmt.Errorf("packhist: the record of %s (seq %d) %w (it says %s at seq %d)", k, s.seq, ErrMismatch, rec.Key, rec.Seq)
		}
		st.recs[k] = &rec
	}
	fw := newFollower(keys)
	if err := replayRange(ctx, l, seq, h, fw.apply); err != nil {
		return nil, err
	}
	st.now = fw.fates
	return st, nil
}

// Seq is the seq the State is as of.
func (s *State) Seq() uint64 { return s.seq }

// Now returns the name key (a source as of Seq) has at the log's head
// as StateAt read it, following its renames (a directory's move renames
// each file under it). gone is true when it was removed since: deleted
// (itself or a directory above it), replaced by a rename onto its name,
// or deleted by a conflict's resolution; name is then the last name it
// had. A key that is no source as of Seq gives "", true. Changes no
// event records (another program's, while no memfs ran) are not seen
// here: a caller compares name with the store as it is now.
func (s *State) Now(key string) (name string, gone bool) {
	ft, ok := s.now[key]
	if !ok {
		return "", true
	}
	return ft.name, ft.gone
}

// Keys returns every pack source as of Seq, sorted.
func (s *State) Keys() []string {
	keys := make([]string, 0, len(s.recs))
	for k := range s.recs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Entries returns the sources under prefix, sorted by key, with their
// Info as flushed and, once Resolve has loaded it, their value.
func (s *State) Entries(prefix string) []backend.Entry {
	var out []backend.Entry
	for k, r := range s.recs {
		if strings.HasPrefix(k, prefix) {
			e := backend.Entry{Key: k, Info: r.Info()}
			if v, ok := s.vals[k]; ok {
				e.Value = v
			}
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Entry returns key as Entries would, false when it is no source as of
// Seq.
func (s *State) Entry(key string) (backend.Entry, bool) {
	r, ok := s.recs[key]
	if !ok {
		return backend.Entry{}, false
	}
	e := backend.Entry{Key: key, Info: r.Info()}
	if v, ok := s.vals[key]; ok {
		e.Value = v
	}
	return e, true
}

// Resolve loads the values of keys from the archive and checks each
// against its record's SHA-256 (which StateAt checked against the log); a
// value that does not match is an error wrapping ErrMismatch naming the
// key, and is not kept. Keys that are no source as of Seq are skipped.
func (s *State) Resolve(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		r, ok := s.recs[k]
		if _, loaded := s.vals[k]; !ok || loaded {
			continue
		}
		if r.Redacted {
			return fmt.Errorf("packhist: the value of %s as of seq %d (event %d) was %w", k, s.seq, r.Seq, ErrRedacted)
		}
		v, err := s.sys.LoadSys(ctx, valueName(r.SHA256))
		if errors.Is(err, fs.ErrNotExist) {
			// Not copied (over Options.MaxValue): the store's key, if it
			// still holds that version.
			var ok bool
			if v, ok = s.current(ctx, k, r.SHA256); !ok {
				return fmt.Errorf("packhist: the value of %s as of seq %d (event %d, %d bytes) is %w: the archive has no copy (values over its size limit, %d bytes by default, are not copied) and the store now holds another version",
					k, s.seq, r.Seq, r.Size, ErrNotKept, DefaultMaxValue)
			}
			err = nil
		}
		if err != nil {
			return fmt.Errorf("packhist: load the value of %s as of seq %d: %w", k, s.seq, err)
		}
		if sum(v) != r.SHA256 {
			return fmt.Errorf("packhist: the archived value of %s as of seq %d (event %d) %w: its SHA-256 differs", k, s.seq, r.Seq, ErrMismatch)
		}
		if v == nil {
			v = []byte{}
		}
		s.vals[k] = v
	}
	return nil
}

// Get returns a value Resolve loaded.
func (s *State) Get(key string) ([]byte, bool) {
	v, ok := s.vals[key]
	return v, ok
}

// checkGaps fails when a gap recorded at or before seq (see
// Archiver.Baseline) names a pack source that no event changed after it.
func checkGaps(ctx context.Context, sys Sys, r *replay, seq uint64) error {
	es, err := sys.ListSys(ctx, gapPrefix)
	if err != nil {
		return fmt.Errorf("packhist: list %s: %w", gapPrefix, err)
	}
	for _, e := range es {
		g, ok := parseSeqName(gapPrefix, e.Key)
		if !ok || g > seq {
			continue
		}
		b, err := sys.LoadSys(ctx, e.Key)
		if err != nil {
			return fmt.Errorf("packhist: load %s: %w", e.Key, err)
		}
		var gp gap
		if err := json.Unmarshal(b, &gp); err != nil {
			return fmt.Errorf("packhist: %s does not parse: %w", e.Key, err)
		}
		for _, k := range gp.Keys {
			if r.last[k] <= g {
				return fmt.Errorf("packhist: %s as of seq %d is %w: the store held a version of it that no event records (found when memfs opened the store at seq %d), and no event changed it since",
					k, seq, ErrNotArchived, g)
			}
		}
	}
	return nil
}

// current returns the store's value of key when the store keeps it (Sys is
// a backend.Store) and its SHA-256 is want.
func (s *State) current(ctx context.Context, key, want string) ([]byte, bool) {
	e, ok := loadIfSum(ctx, s.sys, key, want)
	if !ok {
		return nil, false
	}
	return e.Value, true
}

// loadIfSum loads key from sys when sys is also a backend.Store and the
// value's SHA-256 is want.
func loadIfSum(ctx context.Context, sys Sys, key, want string) (*backend.Entry, bool) {
	l, ok := sys.(interface {
		Load(context.Context, ...string) ([]backend.Entry, error)
	})
	if !ok {
		return nil, false
	}
	es, err := l.Load(ctx, key)
	if err != nil || len(es) != 1 || sum(es[0].Value) != want {
		return nil, false
	}
	return &es[0], true
}
