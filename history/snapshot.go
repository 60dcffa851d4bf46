package history

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
)

// A named snapshot is one system record, history/n/<name>, holding the
// event log's head seq as the snapshot took it: no copy of anything, the
// namespace at it is At(seq). A snapshot is never rewritten: Snapshot of
// a name that exists fails. A name is one or two segments (RUN/STEP, the
// checkpoints of a run); "latest" as a step is not stored but resolved
// (ResolveSnapshot): the run's snapshot with the highest seq.
const snapshotPrefix = root + "n/"

// Latest is the step name that resolves to a run's newest checkpoint.
const Latest = "latest"

// ErrSnapshotName is the error of a snapshot name outside the rules
// (ValidSnapshotName), in a *fs.PathError naming it.
var ErrSnapshotName = errors.New("invalid snapshot name")

// Snapshot is a named snapshot: the namespace as of Seq (At(Seq)).
type Snapshot struct {
	Name string    `json:"-"` // the record's name under history/n/
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"` // when it was taken (RFC 3339 in its record)
	By   string    `json:"by"`   // who took it: "agent/pid"
}

// Run is the run of a checkpoint name "RUN/STEP", "" for a plain name.
func (n Snapshot) Run() string {
	run, _, _ := strings.Cut(n.Name, "/")
	if run == n.Name {
		return ""
	}
	return run
}

// Line is n as memfs snapshot list prints it: "NAME SEQ TIME BY", TIME
// in RFC 3339 (UTC, to the second).
func (n Snapshot) Line() string {
	return fmt.Sprintf("%s %d %s %s\n", n.Name, n.Seq, n.Time.UTC().Format("2006-01-02T15:04:05Z"), n.By)
}

// WriteSnapshots writes ss on w, a Line each, as memfs snapshot list
// prints them.
func WriteSnapshots(w io.Writer, ss []Snapshot) error {
	for _, s := range ss {
		if _, err := io.WriteString(w, s.Line()); err != nil {
			return err
		}
	}
	return nil
}

// ValidSnapshotName checks name: one segment or two (RUN/STEP), each of
// the characters [A-Za-z0-9._-], not empty and not starting with '.'; a
// step may not be "latest" (it names the run's newest). The error
// satisfies errors.Is(err, ErrSnapshotName).
func ValidSnapshotName(name string) error {
	segs := strings.Split(name, "/")
	ok := len(segs) <= 2
	for _, s := range segs {
		ok = ok && validSnapshotSegment(s)
	}
	if ok && len(segs) == 2 && segs[1] == Latest {
		ok = false
	}
	if !ok {
		return &fs.PathError{Op: "snapshot", Path: name, Err: ErrSnapshotName}
	}
	return nil
}

func validSnapshotSegment(s string) bool {
	if s == "" || s[0] == '.' || len(s) > 255 {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Snapshot records the snapshot name at seq, taken by by (the caller's
// "agent/pid") now. The caller flushes first and passes the event log's
// head after it, so that the snapshot holds every write acknowledged
// before. A name that exists fails with an error satisfying
// errors.Is(err, fs.ErrExist), and so does a run named like a snapshot
// ("a/b" when "a" exists, and "a" when "a/b" does): in the mount both
// would be the directory .memfs/snapshots/a.
//
// On a backend.SysSwapper the record is created by SwapSys guarded on its
// own absence, so two writers of one name never both succeed. Elsewhere
// (a directory store, which one process holds locked) it is a load and a
// save.
func (s *Store) Snapshot(ctx context.Context, name string, seq uint64, by string) error {
	if err := ValidSnapshotName(name); err != nil {
		return err
	}
	exists := &fs.PathError{Op: "snapshot", Path: name, Err: fs.ErrExist}
	if clash, err := s.runClash(ctx, name); err != nil {
		return err
	} else if clash {
		return exists
	}
	b, err := json.Marshal(Snapshot{Seq: seq, Time: time.Now().UTC(), By: by})
	if err != nil {
		return fmt.Errorf("history: snapshot %s: %w", name, err)
	}
	rec := snapshotPrefix + name
	if sw, ok := s.sys.(backend.SysSwapper); ok {
		ok, err := sw.SwapSys(ctx, rec, nil, map[string][]byte{rec: b}, nil)
		if err != nil {
			return fmt.Errorf("history: snapshot %s: %w", name, err)
		}
		if !ok {
			return exists
		}
		return nil
	}
	if _, err := s.sys.LoadSys(ctx, rec); err == nil {
		return exists
	} else if !errors.Is(err, backend.ErrKeyNotFound) {
		return fmt.Errorf("history: snapshot %s: %w", name, err)
	}
	if err := s.sys.SaveSys(ctx, rec, b); err != nil {
		return fmt.Errorf("history: snapshot %s: %w", name, err)
	}
	return nil
}

// runClash reports whether name would share its directory in the mount
// with a snapshot that exists: a plain name with a run of that name, a
// checkpoint with a plain snapshot named like its run.
func (s *Store) runClash(ctx context.Context, name string) (bool, error) {
	// A listing, not a load: on a directory store the record of a run's
	// name is a directory, which LoadSys refuses.
	run, _, two := strings.Cut(name, "/")
	ents, err := s.sys.ListSys(ctx, snapshotPrefix+run)
	if err != nil {
		return false, fmt.Errorf("history: snapshot %s: %w", name, err)
	}
	for _, e := range ents {
		rest := strings.TrimPrefix(e.Key, snapshotPrefix+run)
		if (two && rest == "") || (!two && strings.HasPrefix(rest, "/")) {
			return true, nil
		}
	}
	return false, nil
}

// isRun reports whether name is a run's: a directory store refuses a
// LoadSys of it (a directory of records), and it is no snapshot.
func (s *Store) isRun(ctx context.Context, name string) bool {
	ok, err := s.IsRun(ctx, name)
	return err == nil && ok
}

// IsRun reports whether run has a checkpoint (a snapshot RUN/STEP): one
// listing of that run's records, not of every snapshot.
func (s *Store) IsRun(ctx context.Context, run string) (bool, error) {
	ents, err := s.sys.ListSys(ctx, snapshotPrefix+run+"/")
	if err != nil {
		return false, fmt.Errorf("history: run %s: %w", run, err)
	}
	return len(ents) > 0, nil
}

// Snapshots returns every named snapshot, sorted by name.
func (s *Store) Snapshots(ctx context.Context) ([]Snapshot, error) {
	ents, err := s.sys.ListSys(ctx, snapshotPrefix)
	if err != nil {
		return nil, fmt.Errorf("history: snapshots: %w", err)
	}
	out := make([]Snapshot, 0, len(ents))
	for _, e := range ents {
		name := strings.TrimPrefix(e.Key, snapshotPrefix)
		if ValidSnapshotName(name) != nil {
			continue // not a snapshot record (none is written so)
		}
		n, err := s.loadSnapshot(ctx, name)
		if errors.Is(err, backend.ErrKeyNotFound) {
			continue // removed since the listing
		}
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b Snapshot) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// loadRecord loads the record of name, as stored.
func (s *Store) loadRecord(ctx context.Context, name string) ([]byte, error) {
	rec := snapshotPrefix + name
	b, err := s.sys.LoadSys(ctx, rec)
	if err != nil && !errors.Is(err, backend.ErrKeyNotFound) && s.isRun(ctx, name) {
		err = &fs.PathError{Op: "load", Path: rec, Err: fs.ErrNotExist}
	}
	if err != nil {
		return nil, fmt.Errorf("history: snapshot %s: %w", name, err)
	}
	return b, nil
}

// loadSnapshot loads the snapshot name.
func (s *Store) loadSnapshot(ctx context.Context, name string) (Snapshot, error) {
	rec := snapshotPrefix + name
	b, err := s.loadRecord(ctx, name)
	if err != nil {
		return Snapshot{}, err
	}
	var n Snapshot
	if err := json.Unmarshal(b, &n); err != nil {
		return Snapshot{}, &fs.PathError{Op: "load", Path: rec, Err: fmt.Errorf("%w: %v", backend.ErrCorrupt, err)}
	}
	n.Name = name
	return n, nil
}

// ResolveSnapshot returns the snapshot name; "RUN/latest" is the RUN/
// snapshot with the highest seq (of two at one seq, the later taken). A
// name with no snapshot gives an error satisfying errors.Is(err,
// fs.ErrNotExist).
func (s *Store) ResolveSnapshot(ctx context.Context, name string) (Snapshot, error) {
	if run, ok := strings.CutSuffix(name, "/"+Latest); ok && !strings.Contains(run, "/") {
		if err := ValidSnapshotName(run); err != nil {
			return Snapshot{}, err
		}
		return s.latest(ctx, run)
	}
	if err := ValidSnapshotName(name); err != nil {
		return Snapshot{}, err
	}
	return s.loadSnapshot(ctx, name)
}

// latest is the newest snapshot of run.
func (s *Store) latest(ctx context.Context, run string) (Snapshot, error) {
	all, err := s.Snapshots(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	var steps []Snapshot
	for _, n := range all {
		if n.Run() == run {
			steps = append(steps, n)
		}
	}
	if len(steps) == 0 {
		return Snapshot{}, &fs.PathError{Op: "snapshot", Path: run + "/" + Latest, Err: fs.ErrNotExist}
	}
	return slices.MaxFunc(steps, func(a, b Snapshot) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), a.Time.Compare(b.Time))
	}), nil
}

// RemoveSnapshot removes the snapshot name (what it pinned becomes
// collectable). A name with no snapshot gives an error satisfying
// errors.Is(err, fs.ErrNotExist); "RUN/latest" is not a name.
func (s *Store) RemoveSnapshot(ctx context.Context, name string) error {
	if err := ValidSnapshotName(name); err != nil {
		return err
	}
	rec := snapshotPrefix + name
	old, err := s.loadRecord(ctx, name)
	if err != nil {
		return err
	}
	if sw, ok := s.sys.(backend.SysSwapper); ok {
		ok, err := sw.SwapSys(ctx, rec, old, nil, []string{rec})
		if err != nil {
			return fmt.Errorf("history: remove snapshot %s: %w", name, err)
		}
		if !ok { // removed (never rewritten) by another writer meanwhile
			return &fs.PathError{Op: "remove snapshot", Path: name, Err: fs.ErrNotExist}
		}
		return nil
	}
	if err := s.sys.DeleteSys(ctx, rec); err != nil {
		return fmt.Errorf("history: remove snapshot %s: %w", name, err)
	}
	return nil
}
