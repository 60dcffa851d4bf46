package errorstore_test

import (
	"errors"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
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
