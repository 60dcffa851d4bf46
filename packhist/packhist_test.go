package packhist_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/packhist"
)

// rig is a store, its event log and an Archiver, written as a flush would.
type rig struct {
	st backend.SysStore
	l  *eventlog.Log
	a  *packhist.Archiver
}

func stores(t *testing.T) map[string]func(t *testing.T) backend.SysStore {
	return map[string]func(t *testing.T) backend.SysStore{
		"memstore": func(t *testing.T) backend.SysStore { return memstore.New() },
		"badger": func(t *testing.T) backend.SysStore {
			s, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

func newRig(t *testing.T, st backend.SysStore, window uint64) *rig {
	t.Helper()
	l, err := eventlog.Open(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := packhist.NewArchiver(st, l, packhist.Options{Window: window})
	t.Cleanup(func() {
		a.Close(context.Background())
		st.Close()
	})
	return &rig{st: st, l: l, a: a}
}

func hexSum(v []byte) string {
	s := sha256.Sum256(v)
	return hex.EncodeToString(s[:])
}

// append logs ev (a write of value when value is not nil) and, unless
// lost, hands it to the Archiver as the flush would; it returns the seq.
func (r *rig) append(t *testing.T, ev eventlog.Event, value []byte, attrs map[string][]byte, lost bool) uint64 {
	t.Helper()
	var saved *backend.Entry
	if value != nil {
		ev.SHA256, ev.Size = hexSum(value), int64(len(value))
		saved = &backend.Entry{Key: ev.Key, Value: value,
			Info: backend.Info{Size: ev.Size, MTime: time.Unix(1800000000, 0), Mode: 0o644, XAttrs: attrs}}
	}
	out, err := r.l.Append(t.Context(), []eventlog.Event{ev})
	if err != nil {
		t.Fatal(err)
	}
	if !lost {
		r.a.Add([]packhist.Item{{Event: out[0], Saved: saved}})
	}
	return out[0].Seq
}

func (r *rig) write(t *testing.T, key, value string) uint64 {
	t.Helper()
	return r.append(t, eventlog.Event{Op: eventlog.OpWrite, Key: key}, []byte(value), nil, false)
}

func (r *rig) state(t *testing.T, seq uint64) (*packhist.State, error) {
	t.Helper()
	if err := r.a.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	return packhist.StateAt(t.Context(), r.st, r.l, seq, nil)
}

func values(t *testing.T, s *packhist.State) map[string]string {
	t.Helper()
	keys := s.Keys()
	if err := s.Resolve(t.Context(), keys...); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string)
	for _, k := range keys {
		v, _ := s.Get(k)
		out[k] = string(v)
	}
	return out
}

// The state as of each seq replays writes, renames, attribute changes and
// deletes, and leaves out what is no pack source.
func TestStateAtReplays(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, open(t), 0)
			s1 := r.write(t, "memory/a.md", "a1")
			r.write(t, "agents/x.md", "not a source")
			s3 := r.write(t, "skills/s/SKILL.md", "---\nname: s\n---\n")
			s4 := r.append(t, eventlog.Event{Op: eventlog.OpRename, Key: "memory/b.md", OldKey: "memory/a.md"}, []byte("a1"), nil, false)
			s5 := r.append(t, eventlog.Event{Op: eventlog.OpAttr, Key: "memory/b.md"}, []byte("a1"),
				map[string][]byte{meta.Importance: []byte("0.7"), "user.other": []byte("x")}, false)
			s6 := r.append(t, eventlog.Event{Op: eventlog.OpDelete, Key: "memory/b.md"}, nil, nil, false)
			for _, tt := range []struct {
				seq  uint64
				want map[string]string
			}{
				{s1, map[string]string{"memory/a.md": "a1"}},
				{s3, map[string]string{"memory/a.md": "a1", "skills/s/SKILL.md": "---\nname: s\n---\n"}},
				{s4, map[string]string{"memory/b.md": "a1", "skills/s/SKILL.md": "---\nname: s\n---\n"}},
				{s6, map[string]string{"skills/s/SKILL.md": "---\nname: s\n---\n"}},
			} {
				st, err := r.state(t, tt.seq)
				if err != nil {
					t.Fatalf("StateAt(%d): %v", tt.seq, err)
				}
				if got := values(t, st); fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("StateAt(%d): got %v, want %v", tt.seq, got, tt.want)
				}
			}
			st, err := r.state(t, s5)
			if err != nil {
				t.Fatal(err)
			}
			es := st.Entries("memory/")
			if len(es) != 1 || string(es[0].Info.XAttrs[meta.Importance]) != "0.7" || es[0].Info.XAttrs["user.other"] != nil ||
				!es[0].Info.MTime.Equal(time.Unix(1800000000, 0)) || es[0].Info.Mode != 0o644 {
				t.Errorf("StateAt(%d).Entries: got %+v, want memory/b.md with importance 0.7 only, its mtime and mode", s5, es)
			}
		})
	}
}

// With a window of 4, the archive keeps the records of the last 4 events
// and the versions live at the window's start; an older seq that needs a
// pruned version is an error naming the key and the seq.
func TestPruneKeepsTheWindow(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, open(t), 4)
			r.write(t, "memory/still.md", "written once")
			var last uint64
			for i := range 19 {
				last = r.write(t, "memory/hot.md", fmt.Sprintf("version %d", i))
			}
			if err := r.a.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			recs, err := r.st.ListSys(t.Context(), "packhist/e/")
			if err != nil {
				t.Fatal(err)
			}
			vals, err := r.st.ListSys(t.Context(), "packhist/v/")
			if err != nil {
				t.Fatal(err)
			}
			// seq 1 (still.md), 16 (hot.md at the cut), 17..20.
			if len(recs) != 6 || len(vals) != 6 {
				t.Errorf("after pruning: %d records and %d values, want 6 and 6", len(recs), len(vals))
			}
			for seq := last - 4; seq <= last; seq++ {
				st, err := r.state(t, seq)
				if err != nil {
					t.Fatalf("StateAt(%d) inside the window: %v", seq, err)
				}
				if got, want := values(t, st)["memory/hot.md"], fmt.Sprintf("version %d", seq-2); got != want {
					t.Errorf("StateAt(%d): hot.md is %q, want %q", seq, got, want)
				}
			}
			for _, seq := range []uint64{2, last - 5} {
				_, err := r.state(t, seq)
				if !errors.Is(err, packhist.ErrNotKept) || !strings.Contains(err.Error(), "memory/hot.md") ||
					!strings.Contains(err.Error(), fmt.Sprintf("seq %d", seq)) {
					t.Errorf("StateAt(%d) past the window: got %v, want an error wrapping ErrNotKept naming memory/hot.md and the seq", seq, err)
				}
			}
		})
	}
}

// What the archive never got (a crash before its write, another writer's
// version) or holds altered is an error naming the key, never a state.
func TestStateAtRefuses(t *testing.T) {
	r := newRig(t, memstore.New(), 0)
	ok := r.write(t, "memory/a.md", "a1")
	crashed := r.append(t, eventlog.Event{Op: eventlog.OpWrite, Key: "memory/b.md"}, []byte("b1"), nil, true)
	r.write(t, "memory/b.md", "b2")
	conflict := r.append(t, eventlog.Event{Op: eventlog.OpConflict, Key: "memory/a.md", SHA256: hexSum([]byte("theirs")), Size: 6,
		Conflict: &eventlog.Conflict{Policy: "keep-both", Outcome: "kept-both", Copy: "memory/a.conflict.md"}}, nil, nil, false)
	after := r.write(t, "memory/a.md", "a3")
	if _, err := r.state(t, after); err != nil {
		t.Fatalf("StateAt(%d), every version archived: %v", after, err)
	}
	for _, tt := range []struct {
		name string
		seq  uint64
		want error
		key  string
	}{
		{"zero", 0, packhist.ErrOutOfRange, ""},
		{"past the head", after + 1, packhist.ErrOutOfRange, ""},
		{"crash before the archive", crashed, packhist.ErrNotArchived, "memory/b.md"},
		{"another writer's version", conflict, packhist.ErrNotArchived, "memory/a.md"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.state(t, tt.seq)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.key) {
				t.Errorf("StateAt(%d): got %v, want an error wrapping %v naming %q", tt.seq, err, tt.want, tt.key)
			}
		})
	}
	t.Run("altered record", func(t *testing.T) {
		name := fmt.Sprintf("packhist/e/%020d", ok)
		b, err := r.st.LoadSys(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		bad := strings.Replace(string(b), hexSum([]byte("a1")), hexSum([]byte("a2")), 1)
		if err := r.st.SaveSys(t.Context(), name, []byte(bad)); err != nil {
			t.Fatal(err)
		}
		if _, err := r.state(t, ok); !errors.Is(err, packhist.ErrMismatch) || !strings.Contains(err.Error(), "memory/a.md") {
			t.Errorf("StateAt(%d): got %v, want an error wrapping ErrMismatch naming memory/a.md", ok, err)
		}
	})
	t.Run("altered value", func(t *testing.T) {
		if err := r.st.SaveSys(t.Context(), "packhist/v/"+hexSum([]byte("b2")), []byte("b-other")); err != nil {
			t.Fatal(err)
		}
		st, err := r.state(t, after)
		if err != nil {
			t.Fatal(err)
		}
		err = st.Resolve(t.Context(), "memory/b.md")
		if !errors.Is(err, packhist.ErrMismatch) || !strings.Contains(err.Error(), "memory/b.md") {
			t.Errorf("Resolve: got %v, want an error wrapping ErrMismatch naming memory/b.md", err)
		}
		if v, ok := st.Get("memory/b.md"); ok {
			t.Errorf("Get after a failed Resolve: got %q, want nothing", v)
		}
	})
}

// A flushed value the event does not vouch for is not archived.
func TestArchiverRefusesAValueTheLogDoesNotName(t *testing.T) {
	r := newRig(t, memstore.New(), 0)
	out, err := r.l.Append(t.Context(), []eventlog.Event{{Op: eventlog.OpWrite, Key: "memory/a.md", SHA256: hexSum([]byte("logged")), Size: 6}})
	if err != nil {
		t.Fatal(err)
	}
	r.a.Add([]packhist.Item{{Event: out[0], Saved: &backend.Entry{Key: "memory/a.md", Value: []byte("other")}}})
	if _, err := r.state(t, out[0].Seq); !errors.Is(err, packhist.ErrNotArchived) {
		t.Errorf("StateAt: got %v, want an error wrapping ErrNotArchived", err)
	}
}

// A value over MaxValue is not copied: a rebuild reads it from the store
// while the store holds that version, and says it is no longer kept once
// the store holds another.
func TestLargeValueReadFromTheStore(t *testing.T) {
	st := memstore.New()
	l, err := eventlog.Open(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{st: st, l: l, a: packhist.NewArchiver(st, l, packhist.Options{MaxValue: 8})}
	t.Cleanup(func() { r.a.Close(context.Background()) })
	put := func(v string) uint64 {
		t.Helper()
		if err := st.Save(t.Context(), backend.Entry{Key: "memory/big.md", Value: []byte(v), Info: backend.Info{Mode: 0o644}}); err != nil {
			t.Fatal(err)
		}
		return r.write(t, "memory/big.md", v)
	}
	s1 := put("a value longer than eight bytes")
	s, err := r.state(t, s1)
	if err != nil {
		t.Fatal(err)
	}
	if got := values(t, s)["memory/big.md"]; got != "a value longer than eight bytes" {
		t.Errorf("StateAt(%d): got %q", s1, got)
	}
	vals, err := st.ListSys(t.Context(), "packhist/v/")
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != 0 {
		t.Errorf("%d values copied, want none over MaxValue", len(vals))
	}
	put("another long value, the store's now")
	s, err = r.state(t, s1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Resolve(t.Context(), "memory/big.md"); !errors.Is(err, packhist.ErrNotKept) || !strings.Contains(err.Error(), "memory/big.md") {
		t.Errorf("Resolve as of %d after the store moved on: got %v, want an error wrapping ErrNotKept naming memory/big.md", s1, err)
	}
}

func entry(key string, v []byte) *backend.Entry {
	return &backend.Entry{Key: key, Value: v, Info: backend.Info{Size: int64(len(v)), Mode: 0o644, MTime: time.Unix(1800000000, 0)}}
}

// A change memfs took from another writer (an event without the flushed
// entry) is archived from the store while it holds that version, and is
// not archived when the store has moved on.
func TestArchiverTakesAnotherWritersVersionFromTheStore(t *testing.T) {
	r := newRig(t, memstore.New(), 0)
	ext := func(key, stored, logged string) uint64 {
		t.Helper()
		if err := r.st.Save(t.Context(), backend.Entry{Key: key, Value: []byte(stored), Info: backend.Info{Mode: 0o600, MTime: time.Unix(1800000000, 0)}}); err != nil {
			t.Fatal(err)
		}
		out, err := r.l.Append(t.Context(), []eventlog.Event{{Op: eventlog.OpWrite, Key: key, SHA256: hexSum([]byte(logged)), Size: int64(len(logged))}})
		if err != nil {
			t.Fatal(err)
		}
		r.a.Add([]packhist.Item{{Event: out[0]}})
		return out[0].Seq
	}
	s1 := ext("memory/ext.md", "from outside", "from outside")
	st, err := r.state(t, s1)
	if err != nil {
		t.Fatalf("StateAt(%d): %v", s1, err)
	}
	if got := values(t, st)["memory/ext.md"]; got != "from outside" || st.Entries("memory/")[0].Info.Mode != 0o600 {
		t.Errorf("StateAt(%d): got %q, %+v; want the store's value and mode", s1, got, st.Entries("memory/"))
	}
	s2 := ext("memory/moved.md", "newer than the event", "what the event saw")
	if _, err := r.state(t, s2); !errors.Is(err, packhist.ErrNotArchived) || !strings.Contains(err.Error(), "memory/moved.md") {
		t.Errorf("StateAt(%d), the store moved on: got %v, want an error wrapping ErrNotArchived naming memory/moved.md", s2, err)
	}
}

// A change the log does not explain, found by Baseline, makes rebuilds
// from then on fail naming the key until an event changes it; the gap
// goes once the window has moved past that event.
func TestBaselineGap(t *testing.T) {
	r := newRig(t, memstore.New(), 4)
	r.write(t, "memory/other.md", "stays")
	s1 := r.write(t, "memory/a.md", "as logged")
	r.a.Baseline(s1, []backend.Entry{
		{Key: "memory/other.md", Info: backend.Info{Size: 5, Mode: 0o644}, Value: []byte("stays")},
		{Key: "memory/a.md", Info: backend.Info{Size: 16, Mode: 0o644}, Value: []byte("edited by hand!!")},
		{Key: "memory/new.md", Info: backend.Info{Size: 3, Mode: 0o644}, Value: []byte("new")},
	})
	if _, err := r.state(t, s1); !errors.Is(err, packhist.ErrNotArchived) || !strings.Contains(err.Error(), "memory/a.md") {
		t.Errorf("StateAt(%d) after a gap: got %v, want an error wrapping ErrNotArchived naming memory/a.md", s1, err)
	}
	s2 := r.write(t, "memory/a.md", "written again")
	if _, err := r.state(t, s2); !errors.Is(err, packhist.ErrNotArchived) || !strings.Contains(err.Error(), "memory/new.md") {
		t.Errorf("StateAt(%d), new.md not written since: got %v, want an error wrapping ErrNotArchived naming memory/new.md", s2, err)
	}
	if _, err := r.state(t, s1-1); err != nil {
		t.Errorf("StateAt(%d), before the gap: %v", s1-1, err)
	}
	s3 := r.write(t, "memory/new.md", "new, written by memfs")
	if _, err := r.state(t, s3); err != nil {
		t.Errorf("StateAt(%d), both written again: %v", s3, err)
	}
	gaps := func() int {
		es, err := r.st.ListSys(t.Context(), "packhist/g/")
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	if n := gaps(); n != 1 {
		t.Fatalf("%d gap records, want 1", n)
	}
	for range 6 {
		r.write(t, "memory/other.md", "moving the window")
	}
	if err := r.a.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := gaps(); n != 0 {
		t.Errorf("%d gap records once the window moved past them, want 0", n)
	}
}

// State.Now follows each source as of a seq to its name at the head:
// through renames (out of the pack's prefixes too), and to its end by a
// delete, a directory's delete, a rename onto its name, a conflict that
// deleted it; a conflict that kept both moves ours to the copy.
func TestStateNowFollowsRenamesAndDeletes(t *testing.T) {
	r := newRig(t, memstore.New(), 0)
	for _, k := range []string{"memory/a.md", "memory/b.md", "memory/d/c.md", "memory/e.md", "memory/f.md", "memory/g.md", "memory/h.md"} {
		r.write(t, k, k)
	}
	seq := r.write(t, "memory/x.md", "x")
	ev := func(ev eventlog.Event) { r.append(t, ev, nil, nil, false) }
	ev(eventlog.Event{Op: eventlog.OpRename, OldKey: "memory/a.md", Key: "memory/a2.md"})
	ev(eventlog.Event{Op: eventlog.OpRename, OldKey: "memory/a2.md", Key: "private/a3.md"})
	ev(eventlog.Event{Op: eventlog.OpDelete, Key: "memory/b.md"})
	ev(eventlog.Event{Op: eventlog.OpDelete, Key: "memory/d"})
	ev(eventlog.Event{Op: eventlog.OpRename, OldKey: "memory/x.md", Key: "memory/e.md"})
	ev(eventlog.Event{Op: eventlog.OpConflict, Key: "memory/f.md", Conflict: &eventlog.Conflict{Policy: "last-writer-wins", Outcome: "deleted"}})
	ev(eventlog.Event{Op: eventlog.OpConflict, Key: "memory/g.md", Conflict: &eventlog.Conflict{Policy: "keep-both", Outcome: "kept-both", Copy: "memory/g.conflict.md"}})
	ev(eventlog.Event{Op: eventlog.OpWrite, Key: "memory/h.md", SHA256: hexSum([]byte("h2")), Size: 2})
	st, err := r.state(t, seq)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		key, name string
		gone      bool
	}{
		{"memory/a.md", "private/a3.md", false},
		{"memory/b.md", "memory/b.md", true},
		{"memory/d/c.md", "memory/d/c.md", true},
		{"memory/e.md", "memory/e.md", true},
		{"memory/x.md", "memory/e.md", false},
		{"memory/f.md", "memory/f.md", true},
		{"memory/g.md", "memory/g.conflict.md", false},
		{"memory/h.md", "memory/h.md", false},
		{"memory/none.md", "", true},
	} {
		if name, gone := st.Now(tt.key); name != tt.name || gone != tt.gone {
			t.Errorf("Now(%s): got %q, gone %v; want %q, gone %v", tt.key, name, gone, tt.name, tt.gone)
		}
	}
}
