package eventlog

import (
	"bytes"
	"errors"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
)

// realStores opens each real backend in dir; the store is closed at the
// end of the test.
var realStores = []struct {
	name string
	open func(t testing.TB, dir string) backend.SysStore
}{
	{"dirstore", func(t testing.TB, dir string) backend.SysStore {
		t.Helper()
		s, err := dirstore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
	{"badgerstore", func(t testing.TB, dir string) backend.SysStore {
		t.Helper()
		s, err := badgerstore.Open(dir, badgerstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

func closeStore(t testing.TB, s backend.Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// The log on each real store: round trip across chunks, the stream, a
// failed save and its retry, reopening the store, a torn tail.
func TestRealStores(t *testing.T) {
	for _, rs := range realStores {
		t.Run(rs.name, func(t *testing.T) {
			dir := t.TempDir()
			s := rs.open(t, dir)
			realRoundTrip(t, s)
			realFailedSave(t, s)
			closeStore(t, s)

			// Reopen the store: the log goes on.
			s = rs.open(t, dir)
			t.Cleanup(func() { closeStore(t, s) })
			realReopen(t, s)
			realTornTail(t, s)
		})
	}
}

// realRoundTrip appends 2500 events to s and reads them back: the last
// page, the stream.
func realRoundTrip(t *testing.T, s backend.SysStore) {
	t.Helper()
	l := openLog(t, s)
	for i := 0; i < 2500; i += 500 {
		mustAppend(t, l, evsAt(i, 500, nil))
	}
	checkChain(t, s, 2500)
	p, err := l.Query(t.Context(), Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != 10 || p.Events[0].Seq != 2491 || !p.More {
		t.Fatalf("last page: got %d events %s, More %v; want [2491..2500], More", len(p.Events), seqRange(p.Events), p.More)
	}
	want, _ := stored(t, s)
	if got := readAll(t, l, 4096); !bytes.Equal(got, want) || l.Size() != int64(len(want)) {
		t.Fatalf("stream: got %d bytes (Size %d), want the %d bytes of the chunks", len(got), l.Size(), len(want))
	}
}

// realFailedSave checks, on the 2500 events of realRoundTrip, that a
// failed head save leaves the Log unchanged, and that the retry succeeds
// and removes nothing it should not.
func realFailedSave(t *testing.T, s backend.SysStore) {
	t.Helper()
	es := errorstore.Wrap(s, func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpSaveSys && keys[0] == headName {
			return errInjected
		}
		if op == errorstore.OpSwapSys {
			return errInjected // a store that swaps saves the head that way
		}
		return nil
	})
	l := openLog(t, es.(backend.SysStore)) // the wrapper has the capabilities of s
	size := l.Size()
	if _, err := l.Append(t.Context(), evsAt(2500, 600, nil)); !errors.Is(err, errInjected) {
		t.Fatalf("Append: got %v, want the injected error", err)
	}
	if l.Size() != size {
		t.Fatalf("Size after a failed Append: got %d, want %d", l.Size(), size)
	}
	es.SetInject(nil)
	mustAppend(t, l, evsAt(2500, 600, nil))
	checkChain(t, s, 3100)
	mustVerifyOK(t, s)
}

// realReopen opens the log of 3100 events again: Open and a page in the
// middle load little, and the log goes on.
func realReopen(t *testing.T, s backend.SysStore) {
	t.Helper()
	l := openLog(t, s)
	if got := l.Loads(); got > 2 {
		t.Errorf("Open: got %d loads, want at most 2", got)
	}
	p, err := l.Query(t.Context(), Query{Before: 1500})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Loads(); got > 4 {
		t.Errorf("Open and a page in the middle: got %d loads, want at most 4", got)
	}
	if len(p.Events) != 100 || p.Events[99].Seq != 1499 {
		t.Errorf("page before 1500: got %d events %s", len(p.Events), seqRange(p.Events))
	}
	mustAppend(t, l, evsAt(3100, 10, nil))
	checkChain(t, s, 3110)
}

// realTornTail tears the end of the log of 3110 events, as a store
// without atomic replacement could leave it: Open writes nothing, the
// next Append records the break once.
func realTornTail(t *testing.T, s backend.SysStore) {
	t.Helper()
	ctx := t.Context()
	names, _ := s.ListSys(ctx, chunkPrefix)
	last := names[len(names)-1].Key
	d, err := s.LoadSys(ctx, last)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSys(ctx, last, append(d, `{"seq":3111,"ti`...)); err != nil {
		t.Fatal(err)
	}
	l := openLog(t, s)
	if r, err := Verify(ctx, s); err != nil || r.OK || r.Seq != 3111 {
		// Open writes nothing: the torn line is still there.
		t.Fatalf("Verify after Open: %+v, %v; want the torn event 3111", r, err)
	}
	mustAppend(t, l, evsAt(3110, 5, nil))
	checkChain(t, s, 3116) // event 3111 records the break
	for range 2 {
		r, err := Verify(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if r.OK || r.Seq != 3111 || r.Events != 3116 || r.Chunks != 4 || len(r.Damage) != 2 || len(r.Warnings) != 0 {
			t.Errorf("Verify: got %+v; want 3116 events in 4 chunks, the break at 3111 and its copy, no warnings", r)
		}
		l = openLog(t, s)
		if d := l.Damage(); len(d) != 0 {
			t.Errorf("reopen: got damage %+v, want none (recorded)", d)
		}
	}
}

// The damage cases on each real store, closed and opened again between
// the appends.
func TestRealStoresDamage(t *testing.T) {
	for _, rs := range realStores {
		t.Run(rs.name, func(t *testing.T) {
			for _, tt := range damageCases {
				t.Run(tt.name, func(t *testing.T) {
					dir := t.TempDir()
					s := rs.open(t, dir)
					t.Cleanup(func() { closeStore(t, s) })
					runDamage(t, tt, s, func() storeSys {
						closeStore(t, s)
						s = rs.open(t, dir)
						return s
					})
				})
			}
		})
	}
}
