package history_test

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/history"
)

func TestSnapshotNames(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"before-refactor", true},
		{"v1.2_rc-3", true},
		{"run7/step-12", true},
		{"run7/latest", false}, // resolved, never stored
		{"latest", true},
		{"", false},
		{".hidden", false},
		{"run/.step", false},
		{"..", false},
		{"a/b/c", false},
		{"a/", false},
		{"/a", false},
		{"with space", false},
		{"ümlaut", false},
		{"semi;colon", false},
	} {
		err := history.ValidSnapshotName(tt.name)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, history.ErrSnapshotName)) {
			t.Errorf("ValidSnapshotName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// Line is what memfs snapshot list prints: NAME SEQ TIME BY, the time in
// UTC to the second.
func TestSnapshotLine(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 890, time.FixedZone("CET", 3600))
	s := history.Snapshot{Name: "run1/step2", Seq: 42, Time: at, By: "coder/1234"}
	if got, want := s.Line(), "run1/step2 42 2025-03-04T04:06:07Z coder/1234\n"; got != want {
		t.Errorf("Line() = %q, want %q", got, want)
	}
}

// WriteSnapshots writes a Line per snapshot, in order.
func TestWriteSnapshots(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	ss := []history.Snapshot{{Name: "a", Seq: 1, Time: at, By: "memfs/1"}, {Name: "r/s", Seq: 2, Time: at, By: "coder/2"}}
	var b strings.Builder
	if err := history.WriteSnapshots(&b, ss); err != nil || b.String() != ss[0].Line()+ss[1].Line() {
		t.Errorf("WriteSnapshots = %q, %v; want the two lines", b.String(), err)
	}
	b.Reset()
	if err := history.WriteSnapshots(&b, nil); err != nil || b.Len() != 0 {
		t.Errorf("WriteSnapshots(none) = %q, %v; want nothing", b.String(), err)
	}
}

func names(ns []history.Snapshot) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return out
}

// Snapshots are created once, listed, resolved (RUN/latest: the run's
// highest seq) and removed, on every store.
func TestSnapshots(t *testing.T) {
	eachStore(t, func(t *testing.T, s backend.SysStore) {
		h := history.New(s)
		ctx := t.Context()
		for _, c := range []struct {
			name string
			seq  uint64
		}{{"before", 10}, {"run1/a", 20}, {"run1/c", 40}, {"run1/b", 30}, {"run2/x", 5}} {
			if err := h.Snapshot(ctx, c.name, c.seq, "agent/42"); err != nil {
				t.Fatalf("Snapshot %s: %v", c.name, err)
			}
		}
		for _, name := range []string{"before", "run1/a", "run1", "before/x"} {
			if err := h.Snapshot(ctx, name, 99, "agent/42"); !errors.Is(err, fs.ErrExist) {
				t.Errorf("Snapshot of %s again (or its run's name): %v, want fs.ErrExist", name, err)
			}
		}
		if err := h.Snapshot(ctx, "run1/latest", 99, "x"); !errors.Is(err, history.ErrSnapshotName) {
			t.Errorf("Snapshot run1/latest: %v, want ErrSnapshotName", err)
		}
		all, err := h.Snapshots(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := names(all), []string{"before", "run1/a", "run1/b", "run1/c", "run2/x"}; !slices.Equal(got, want) {
			t.Fatalf("Snapshots: %v, want %v", got, want)
		}
		if all[0].Seq != 10 || all[0].By != "agent/42" || all[0].Time.IsZero() || all[1].Run() != "run1" || all[0].Run() != "" {
			t.Fatalf("Snapshots[0] = %+v, [1] = %+v", all[0], all[1])
		}
		for _, c := range []struct {
			name, want string
			seq        uint64
		}{{"before", "before", 10}, {"run1/latest", "run1/c", 40}, {"run2/latest", "run2/x", 5}, {"run1/b", "run1/b", 30}} {
			n, err := h.ResolveSnapshot(ctx, c.name)
			if err != nil || n.Name != c.want || n.Seq != c.seq {
				t.Errorf("ResolveSnapshot(%s) = %+v, %v; want %s at %d", c.name, n, err, c.want, c.seq)
			}
		}
		for _, name := range []string{"nope", "run3/latest", "run1/zz", "run1"} {
			if _, err := h.ResolveSnapshot(ctx, name); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("ResolveSnapshot(%s): %v, want fs.ErrNotExist", name, err)
			}
		}
		if err := h.RemoveSnapshot(ctx, "run1/c"); err != nil {
			t.Fatal(err)
		}
		if err := h.RemoveSnapshot(ctx, "run1/c"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("RemoveSnapshot twice: %v, want fs.ErrNotExist", err)
		}
		if err := h.RemoveSnapshot(ctx, "run1"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("RemoveSnapshot of a run: %v, want fs.ErrNotExist", err)
		}
		if err := h.RemoveSnapshot(ctx, "run1/latest"); !errors.Is(err, history.ErrSnapshotName) {
			t.Errorf("RemoveSnapshot run1/latest: %v, want ErrSnapshotName", err)
		}
		if n, err := h.ResolveSnapshot(ctx, "run1/latest"); err != nil || n.Name != "run1/b" {
			t.Errorf("run1/latest after removing run1/c: %+v, %v; want run1/b", n, err)
		}
		// A removed name may be taken again (at another seq).
		if err := h.Snapshot(ctx, "run1/c", 50, "agent/43"); err != nil {
			t.Fatal(err)
		}
		if n, err := h.ResolveSnapshot(ctx, "run1/latest"); err != nil || n.Name != "run1/c" || n.Seq != 50 {
			t.Errorf("run1/latest: %+v, %v; want run1/c at 50", n, err)
		}
	})
}

// Writers racing for one name: exactly one wins, on every store.
func TestSnapshotRace(t *testing.T) {
	eachStore(t, func(t *testing.T, s backend.SysStore) {
		if _, ok := s.(backend.SysSwapper); !ok {
			t.Skip("a store without SwapSys has one writer process (the directory store's lock)")
		}
		h := history.New(s)
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = h.Snapshot(t.Context(), "race", uint64(i+1), "w") })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, fs.ErrExist):
				t.Errorf("Snapshot: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d writers created one name, want 1", won)
		}
	})
}

// A damaged record is reported, not skipped.
func TestSnapshotDamaged(t *testing.T) {
	eachStore(t, func(t *testing.T, s backend.SysStore) {
		h := history.New(s)
		mustSave(t, s, "history/n/bad", []byte("{not json"))
		if _, err := h.Snapshots(t.Context()); !errors.Is(err, backend.ErrCorrupt) {
			t.Errorf("Snapshots: %v, want ErrCorrupt", err)
		}
		if _, err := h.ResolveSnapshot(t.Context(), "bad"); !errors.Is(err, backend.ErrCorrupt) {
			t.Errorf("ResolveSnapshot: %v, want ErrCorrupt", err)
		}
	})
}

// Version loads one version by key and seq; a seq with none is
// fs.ErrNotExist, a damaged record ErrCorrupt.
func TestVersionLookup(t *testing.T) {
	eachStore(t, func(t *testing.T, s backend.SysStore) {
		h := history.New(s)
		ctx := t.Context()
		a, _, err := h.Put(ctx, []byte("v"))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := h.PlanVersions([]history.Version{history.NewVersion(7, history.OpWrite, entry("k", "v", 0o644), a)})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Write(ctx, recs); err != nil {
			t.Fatal(err)
		}
		if v, err := h.Version(ctx, "k", 7); err != nil || v.Seq != 7 || v.Addr != a || v.Key != "k" {
			t.Fatalf("Version(k, 7) = %+v, %v", v, err)
		}
		if _, err := h.Version(ctx, "k", 8); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Version(k, 8): %v, want fs.ErrNotExist", err)
		}
		mustSave(t, s, recs[0].Name, []byte("{}"))
		if _, err := h.Version(ctx, "k", 7); !errors.Is(err, backend.ErrCorrupt) {
			t.Fatalf("Version of a damaged record: %v, want ErrCorrupt", err)
		}
	})
}

// WriteLog writes a LogLine per version, oldest first as given: a
// rename's old key quoted, a redacted version marked.
func TestWriteLog(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC).UnixNano()
	vs := []history.Version{
		{Seq: 1, Op: history.OpWrite, Key: "b", Size: 3, MTime: at, Redacted: true},
		{Seq: 2, Op: history.OpRename, Key: "b", OldKey: "a", Size: 3, CTime: at},
	}
	var b strings.Builder
	if err := history.WriteLog(&b, vs); err != nil {
		t.Fatal(err)
	}
	want := "00000001 2025-03-04T05:06:07Z write 3 -/0 (redacted)\n00000002 2025-03-04T05:06:07Z rename 3 -/0 \"a\"\n"
	if b.String() != want || b.String() != vs[0].LogLine()+vs[1].LogLine() {
		t.Errorf("WriteLog = %q, want %q", b.String(), want)
	}
}
