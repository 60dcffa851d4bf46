package errorstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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
	}, storetest.Options{HostTimes: true, HostDevices: true, ImplicitDirs: true, External: writeDir})
}

// writeDir is another program writing the directory under the store.
func writeDir(t *testing.T, dir, key string, value []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	var err error
	if value == nil {
		err = os.Remove(p)
	} else if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
		err = os.WriteFile(p, value, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
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
	}, storetest.Options{
		Revisions: true,
		External: func(t *testing.T, dir, key string, value []byte) {
			mu.Lock()
			o := opened[dir].Other()
			mu.Unlock()
			var err error
			if value == nil {
				err = o.Remove(key)
			} else {
				err = o.Set(key, value)
			}
			if err != nil {
				t.Fatal(err)
			}
		},
	})
}

// core is a store with the core methods alone.
type core struct{ backend.Store }

// collecting is a memory store that also collects and moves aside, as a
// shared store does.
type collecting struct{ *memstore.Store }

func (collecting) Collect(context.Context) (backend.Collected, error) {
	return backend.Collected{}, nil
}
func (collecting) Lead(ctx context.Context) (context.Context, func(), error) {
	return ctx, func() {}, nil
}
func (collecting) MoveAside(context.Context, string) (string, error) { return "", nil }

// capabilities are the optional interfaces a wrapper must carry over.
var capabilities = []reflect.Type{
	reflect.TypeFor[backend.SysStore](),
	reflect.TypeFor[backend.SysSwapper](),
	reflect.TypeFor[backend.Batcher](),
	reflect.TypeFor[backend.Versioned](),
	reflect.TypeFor[backend.ConditionalDeleter](),
	reflect.TypeFor[backend.Presence](),
	reflect.TypeFor[backend.Watcher](),
	reflect.TypeFor[backend.Collector](),
	reflect.TypeFor[backend.AsideMover](),
}

// The wrapper has exactly the capabilities of the store it wraps (a
// session test through it takes the paths it takes on the store).
func TestCapabilities(t *testing.T) {
	ds, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	ms := memstore.New()
	for _, inner := range []backend.Store{ms, ds, core{ms}, collecting{ms}} {
		t.Run(fmt.Sprintf("%T", inner), func(t *testing.T) {
			w := errorstore.Wrap(inner, nil)
			for _, c := range capabilities {
				has, got := reflect.TypeOf(inner).Implements(c), reflect.TypeOf(w).Implements(c)
				if has != got {
					t.Errorf("%v: the store has it %v, the wrapper %v", c, has, got)
				}
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

// The capabilities of other writers' stores ask it too.
func TestInjectsSharedCapabilities(t *testing.T) {
	ds, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	boom := errors.New("boom")
	var seen []errorstore.Op
	inject := func(op errorstore.Op, keys []string) error {
		seen = append(seen, op)
		return boom
	}
	ctx := t.Context()
	d := errorstore.Wrap(ds, inject)
	c := errorstore.Wrap(collecting{memstore.New()}, inject)
	errs := map[string]error{}
	_, errs["DeleteIf"] = d.(backend.ConditionalDeleter).DeleteIf(ctx, []string{"k"}, []backend.Version{{}})
	_, errs["Watch"] = d.(backend.Watcher).Watch(ctx)
	_, errs["Collect"] = c.(backend.Collector).Collect(ctx)
	_, _, errs["Lead"] = c.(backend.Collector).Lead(ctx)
	_, errs["MoveAside"] = c.(backend.AsideMover).MoveAside(ctx, "k")
	for m, err := range errs {
		if !errors.Is(err, boom) {
			t.Errorf("%s = %v, want the injected error", m, err)
		}
	}
	want := []errorstore.Op{errorstore.OpDelete, errorstore.OpWatch, errorstore.OpCollect, errorstore.OpLead, errorstore.OpMoveAside}
	if !slices.Equal(seen, want) {
		t.Errorf("ops seen = %v, want %v", seen, want)
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
