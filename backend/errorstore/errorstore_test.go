package errorstore_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/backend/storetest"
)

// A wrapper that injects nothing must keep the Store contract (of the
// directory store it wraps: what a real directory cannot do is named).
func TestConformance(t *testing.T) {
	storetest.RunWith(t, func(t *testing.T, dir string) (backend.Store, error) {
		s, err := dirstore.Open(dir)
		if err != nil {
			return nil, err
		}
		return errorstore.Wrap(s, nil), nil
	}, storetest.Options{HostTimes: true, HostDevices: true, ImplicitDirs: true})
}

// Over a memory store the wrapper claims every capability the memory store
// has, and the suite checks each of them through the wrapper.
func TestConformanceMem(t *testing.T) {
	var mu sync.Mutex // guards opened
	opened := map[string]*memstore.Store{}
	storetest.RunWith(t, func(t *testing.T, dir string) (backend.Store, error) {
		mu.Lock()
		defer mu.Unlock()
		s := memstore.New()
		if prev, ok := opened[dir]; ok {
			var err error
			if s, err = prev.Reopen(); err != nil {
				return nil, err
			}
		}
		opened[dir] = s
		return errorstore.Wrap(s, nil), nil
	}, storetest.Options{Revisions: true})
}

// core is a store with the core methods alone.
type core struct{ backend.Store }

// The wrapper has exactly the capabilities of the store it wraps.
func TestCapabilities(t *testing.T) {
	ds, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	ms := memstore.New()
	tests := []struct {
		name                                string
		inner                               backend.Store
		sys, swap, batch, version, presence bool
	}{
		{"memstore", ms, true, true, true, true, true},
		{"dirstore", ds, true, false, false, true, false},
		{"core only", core{ms}, false, false, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := errorstore.Wrap(tt.inner, nil)
			_, sys := w.(backend.SysStore)
			_, swap := w.(backend.SysSwapper)
			_, batch := w.(backend.Batcher)
			_, version := w.(backend.Versioned)
			_, presence := w.(backend.Presence)
			got := []bool{sys, swap, batch, version, presence}
			want := []bool{tt.sys, tt.swap, tt.batch, tt.version, tt.presence}
			if !slices.Equal(got, want) {
				t.Errorf("SysStore, SysSwapper, Batcher, Versioned, Presence = %v; want %v", got, want)
			}
			if _, ok := w.(backend.Walker); !ok {
				t.Error("not a Walker")
			}
		})
	}
}

// A capability method asks the inject function as a core method does.
func TestInjectsCapabilities(t *testing.T) {
	ms := memstore.New()
	boom := errors.New("boom")
	var seen []errorstore.Op
	w := errorstore.Wrap(ms, func(op errorstore.Op, keys []string) error {
		seen = append(seen, op)
		return boom
	})
	ctx := t.Context()
	e := backend.Entry{Key: "k", Value: []byte("x"), Info: backend.Info{Mode: 0o644}}
	errs := map[string]error{}
	_, errs["Apply"] = w.(backend.Batcher).Apply(ctx, backend.Batch{Saves: []backend.Entry{e}, Deletes: []string{"gone"}})
	_, errs["SaveIf"] = w.(backend.Versioned).SaveIf(ctx, []backend.Entry{e}, []backend.Version{{}})
	sys := w.(backend.SysStore)
	errs["SaveSys"] = sys.SaveSys(ctx, "r", []byte("x"))
	_, errs["LoadSys"] = sys.LoadSys(ctx, "r")
	_, errs["ListSys"] = sys.ListSys(ctx, "")
	errs["DeleteSys"] = sys.DeleteSys(ctx, "r")
	_, errs["SwapSys"] = w.(backend.SysSwapper).SwapSys(ctx, "g", nil, map[string][]byte{"r": []byte("x")}, nil)
	_, errs["Register"] = w.(backend.Presence).Register(ctx, backend.Peer{Agent: "a"})
	_, errs["Peers"] = w.(backend.Presence).Peers(ctx)
	for m, err := range errs {
		if !errors.Is(err, boom) {
			t.Errorf("%s = %v, want the injected error", m, err)
		}
	}
	want := []errorstore.Op{errorstore.OpApply, errorstore.OpSave, errorstore.OpSaveSys, errorstore.OpLoadSys, errorstore.OpListSys, errorstore.OpDeleteSys,
		errorstore.OpSwapSys, errorstore.OpRegister, errorstore.OpPeers}
	if !slices.Equal(seen, want) {
		t.Errorf("ops seen = %v, want %v", seen, want)
	}
	if l, _ := ms.List(ctx); len(l) != 0 {
		t.Errorf("an injected fault let %d entries through", len(l))
	}
	if _, err := ms.LoadSys(ctx, "r"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Errorf("an injected SaveSys reached the store: %v", err)
	}
	if p, _ := ms.Peers(ctx); len(p) != 0 {
		t.Errorf("an injected Register reached the store: %v", p)
	}
}

func TestInjects(t *testing.T) {
	s, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	boom := errors.New("boom")
	var seen []errorstore.Op
	w := errorstore.Wrap(s, func(op errorstore.Op, keys []string) error {
		seen = append(seen, op)
		if op == errorstore.OpSave && len(keys) == 1 && keys[0] == "bad" {
			return boom
		}
		return nil
	})
	if err := w.Save(t.Context(), backend.Entry{Key: "bad", Value: []byte("x")}); !errors.Is(err, boom) {
		t.Fatalf("Save(bad) = %v, want the injected error", err)
	}
	if _, err := s.Load(t.Context(), "bad"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Fatalf("an injected Save reached the store: %v", err)
	}
	if err := w.Save(t.Context(), backend.Entry{Key: "good", Value: []byte("x"), Info: backend.Info{Mode: 0o644}}); err != nil {
		t.Fatal(err)
	}
	w.List(t.Context())
	w.Load(t.Context(), "good")
	w.Delete(t.Context(), "good")
	want := []errorstore.Op{errorstore.OpSave, errorstore.OpSave, errorstore.OpList, errorstore.OpLoad, errorstore.OpDelete}
	if len(seen) != len(want) {
		t.Fatalf("ops seen = %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("ops seen = %v, want %v", seen, want)
		}
	}
}
