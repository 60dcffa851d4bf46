package memfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/internal/merge3"
	"github.com/memfs/memfs/internal/names"
)

// Conflict is an open conflict: a conflict copy (backend.ConflictKey,
// ConflictKeyBy) still in the namespace beside the key it is a copy of.
// It stays open until the copy is gone (ResolveConflict, or an rm).
//
// Sides are named from the writer whose save met the conflict (the one
// memfs told, in its log and .memfs/changes): "mine" is its version,
// "theirs" the other writer's. Under keep-both the copy holds mine and
// the key theirs; when the store kept theirs beside (keep-beside, or a
// directory store changed by another program) the copy holds theirs.
type Conflict struct {
	Key  string    // the key the copy is a copy of
	Copy string    // the conflict copy
	Time time.Time // when the copy was made
	// CopyHolds is whose version the copy holds: "mine" or "theirs".
	CopyHolds string
	Agent     string // the agent whose save met the conflict ("" when unknown)
	Outcome   string // the conflict event's outcome (kept-both, kept-beside); "" without one
	Seq       uint64 // the conflict event's seq; 0 when the log has none for the copy
}

// ConflictLines is cfs as memfs conflicts lists them, a Line each.
func ConflictLines(cfs []Conflict) string {
	var b strings.Builder
	for _, cf := range cfs {
		b.WriteString(cf.Line() + "\n")
	}
	return b.String()
}

// Line is cf as memfs conflicts lists it: key, copy, time, then whose
// version the copy holds and what the log says, tab-separated.
func (cf Conflict) Line() string {
	how := "copy holds " + cf.CopyHolds
	if cf.Agent != "" {
		how += ", agent " + cf.Agent
	}
	if cf.Seq != 0 {
		how += fmt.Sprintf(", %s at seq %d", cf.Outcome, cf.Seq)
	}
	return names.Show(cf.Key) + "\t" + names.Show(cf.Copy) + "\t" + cf.Time.UTC().Format(time.RFC3339) + "\t" + how
}

// Resolved is what memfs conflicts resolve says of cf resolved by keep
// with the outcome err ("" when it failed: the error says why).
func (cf Conflict) Resolved(keep Keep, err error) string {
	if err != nil || cf.Copy == "" {
		return ""
	}
	return fmt.Sprintf("%s: kept %s; %s removed\n", names.Show(cf.Key), keep, names.Show(cf.Copy))
}

// Keep is what ResolveConflict keeps.
type Keep string

// The ways to resolve a conflict.
const (
	KeepMine   Keep = "mine"   // the version of the writer that met the conflict
	KeepTheirs Keep = "theirs" // the other writer's version
	KeepMerge  Keep = "merge"  // a three-way line merge of both, from the version before theirs
)

// ErrNoConflict is the error of ResolveConflict for a key with no open
// conflict.
var ErrNoConflict = errors.New("no open conflict")

// Conflicts lists the open conflicts, by key then copy: every conflict
// copy in the namespace whose original key is there too, with what the
// event log says of it.
func (f *FS) Conflicts(ctx context.Context) ([]Conflict, error) {
	events, err := f.conflictEvents(ctx)
	if err != nil {
		return nil, err
	}
	var out []Conflict
	keys := f.c.Keys()
	origins := backend.NewConflictIndex(keys)
	for _, k := range keys {
		orig, agent, at, ok := origins.Origin(k) // a shortened copy names its original by a hash
		if !ok || orig == "" {
			continue
		}
		if _, err := f.c.Stat(orig); err != nil {
			continue // the original is gone (a file, or a directory that kept the name over a file)
		}
		cf := Conflict{Key: orig, Copy: k, Time: at, Agent: agent, CopyHolds: "theirs"}
		if agent != "" {
			cf.CopyHolds = "mine" // a mount moved its own version aside (keep-both)
		}
		if ev, ok := events[k]; ok {
			cf.Seq, cf.Outcome = ev.Seq, ev.Conflict.Outcome
			if ev.Writer.Agent != "" {
				cf.Agent = ev.Writer.Agent
			}
			cf.CopyHolds = "theirs"
			if ev.Conflict.Outcome == "kept-both" {
				cf.CopyHolds = "mine"
			}
		}
		out = append(out, cf)
	}
	slices.SortFunc(out, func(a, b Conflict) int {
		return strings.Compare(a.Key+"\x00"+a.Copy, b.Key+"\x00"+b.Copy)
	})
	return out, nil
}

// conflictEvents returns the conflict events of the log by copy key (the
// last one of each).
func (f *FS) conflictEvents(ctx context.Context) (map[string]eventlog.Event, error) {
	out := map[string]eventlog.Event{}
	if f.events == nil {
		return out, nil
	}
	q := eventlog.Query{Ops: []string{eventlog.OpConflict}, Forward: true, Limit: 1000}
	for {
		page, err := f.events.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, ev := range page.Events {
			if ev.Conflict != nil && ev.Conflict.Copy != "" {
				out[ev.Conflict.Copy] = ev
			}
		}
		if !page.More || len(page.Events) == 0 {
			return out, nil
		}
		q.After = page.Events[len(page.Events)-1].Seq
	}
}

// ResolveConflict resolves the open conflict of key (the original key, or
// a copy's key when the original has several) by keep, and flushes: the
// key gets the version kept (mine, theirs, or their merge), and the copy
// is removed; every change is a new version in history, so nothing is
// lost. A merge that overlaps is an error, and changes nothing: edit the
// key by hand, then rm the copy.
func (f *FS) ResolveConflict(ctx context.Context, key string, keep Keep) (Conflict, error) {
	all, err := f.Conflicts(ctx)
	if err != nil {
		return Conflict{}, err
	}
	var cands []Conflict
	for _, cf := range all {
		if cf.Key == key || cf.Copy == key {
			cands = append(cands, cf)
		}
	}
	switch {
	case len(cands) == 0:
		return Conflict{}, &fs.PathError{Op: "resolve", Path: key, Err: ErrNoConflict}
	case len(cands) > 1:
		var copies []string
		for _, cf := range cands {
			copies = append(copies, cf.Copy)
		}
		return Conflict{}, fmt.Errorf("resolve %s: %d open conflicts; name the copy to resolve: %s", key, len(cands), strings.Join(copies, ", "))
	}
	cf := cands[0]
	if err := f.c.Resolve(ctx, cf.Key, cf.Copy); err != nil {
		return cf, err
	}
	atKey, _ := f.c.Get(cf.Key)
	inCopy, _ := f.c.Get(cf.Copy)
	mine, theirs := inCopy, atKey
	if cf.CopyHolds == "theirs" {
		mine, theirs = atKey, inCopy
	}
	var want []byte
	switch keep {
	case KeepMine:
		want = mine
	case KeepTheirs:
		want = theirs
	case KeepMerge:
		base, err := f.baseOf(ctx, cf)
		if err != nil {
			return cf, err
		}
		merged, ok := merge3.Merge(base, mine, theirs)
		if !ok {
			return cf, fmt.Errorf("resolve %s: the two versions overlap (or one is binary): nothing changed; edit %s by hand (the other version is in %s), then rm the copy", cf.Key, cf.Key, cf.Copy)
		}
		want = merged
	default:
		return cf, fmt.Errorf("resolve %s: keep %q: want mine, theirs or merge", key, keep)
	}
	if string(want) != string(atKey) {
		if err := f.c.Set(cf.Key, want); err != nil {
			return cf, err
		}
	}
	if err := f.c.Delete(cf.Copy); err != nil {
		return cf, err
	}
	return cf, f.Flush(ctx)
}

// baseOf is the version both sides of cf were made from: the version of
// cf.Key before the other writer's save that the conflict met (the last
// version before the conflict event; without one, the last before the
// copy's time); empty when history has none (both created the key).
func (f *FS) baseOf(ctx context.Context, cf Conflict) ([]byte, error) {
	vs, err := f.Versions(ctx, cf.Key)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	before := func(v int) bool {
		if cf.Seq != 0 {
			return vs[v].Seq < cf.Seq
		}
		return vs[v].Time().Before(cf.Time)
	}
	theirs := -1
	for i := range vs {
		if before(i) && vs[i].Key == cf.Key {
			theirs = i
		}
	}
	if theirs < 1 {
		return nil, nil
	}
	return f.versionData(ctx, &vs[theirs-1])
}
