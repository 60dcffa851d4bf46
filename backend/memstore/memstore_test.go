package memstore_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/backend/storetest"
)

// TestConformance runs the whole suite with the zero Options: a memory
// store keeps every time and device number exactly and lists only the keys
// saved. The suite's "directory" names the contents: its first open makes
// a Store, every later one reopens the last Store opened there, so Reopen,
// InUse and the subtests that reopen check what they check on disk stores.
func TestConformance(t *testing.T) {
	var mu sync.Mutex // guards opened
	opened := map[string]*memstore.Store{}
	storetest.RunWith(t, func(t *testing.T, dir string) (backend.Store, error) {
		mu.Lock()
		defer mu.Unlock()
		prev, ok := opened[dir]
		if !ok {
			s := memstore.New()
			opened[dir] = s
			return s, nil
		}
		s, err := prev.Reopen()
		if err != nil {
			return nil, err
		}
		opened[dir] = s
		return s, nil
	}, storetest.Options{
		Revisions: true,
		// Another writer of the contents (memstore.Other), whose changes
		// the Stores over them report.
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

func entry(key, value string) backend.Entry {
	return backend.Entry{Key: key, Value: []byte(value), Info: backend.Info{
		Mode:  0o644,
		MTime: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
	}}
}

func TestClosed(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	if err := s.Save(ctx, entry("a", "a")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v, want nil", err)
	}
	checks := map[string]error{}
	_, checks["List"] = s.List(ctx)
	_, checks["Load"] = s.Load(ctx, "a")
	checks["Save"] = s.Save(ctx, entry("b", "b"))
	checks["Delete"] = s.Delete(ctx, "a")
	_, checks["SaveIf"] = s.SaveIf(ctx, []backend.Entry{entry("b", "b")}, []backend.Version{{}})
	_, checks["Apply"] = s.Apply(ctx, backend.Batch{Saves: []backend.Entry{entry("b", "b")}, Deletes: []string{"a"}})
	checks["Walk"] = s.Walk(ctx, func([]backend.Entry) error { return nil })
	checks["SaveSys"] = s.SaveSys(ctx, "r", nil)
	_, checks["LoadSys"] = s.LoadSys(ctx, "r")
	_, checks["ListSys"] = s.ListSys(ctx, "")
	checks["DeleteSys"] = s.DeleteSys(ctx, "r")
	_, checks["Watch"] = s.Watch(ctx)
	_, checks["Stat"] = s.Stat(ctx, "a")
	for op, err := range checks {
		if !errors.Is(err, fs.ErrClosed) {
			t.Errorf("%s after Close = %v, want fs.ErrClosed", op, err)
		}
	}
	// The contents outlive the closed Store; the old one stays closed.
	s2, err := s.Reopen()
	if err != nil {
		t.Fatalf("Reopen: %v", err)
	}
	if got, err := s2.Load(ctx, "a"); err != nil || string(got[0].Value) != "a" {
		t.Fatalf("Load after Reopen = %v, %v; want a", got, err)
	}
	if _, err := s.List(ctx); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("List on the closed Store after Reopen = %v, want fs.ErrClosed", err)
	}
	if _, err := s.Reopen(); !errors.Is(err, backend.ErrStoreInUse) {
		t.Errorf("Reopen while another Store is open = %v, want ErrStoreInUse", err)
	}
}

// TestHardLinkSaveOneName: the names of a group are one node, so a save
// of one name changes what the others report.
func TestHardLinkSaveOneName(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	a, b := entry("a", "old"), entry("d/b", "old")
	a.Info.Link, b.Info.Link = "g", "g"
	if err := s.Save(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	a2 := entry("a", "new value")
	a2.Info.Link, a2.Info.Mode = "g", 0o600
	if err := s.Save(ctx, a2); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "d/b")
	if err != nil {
		t.Fatal(err)
	}
	if i := got[0].Info; string(got[0].Value) != "new value" || i.Size != 9 || i.Mode != 0o600 || i.Link != "g" {
		t.Errorf("d/b after saving a: %q, %+v; want the new value, size 9, mode 0600, link g", got[0].Value, i)
	}
	// The last name gone, the group's Link names a new node.
	if err := s.Delete(ctx, "a", "d/b"); err != nil {
		t.Fatal(err)
	}
	c := entry("c", "fresh")
	c.Info.Link = "g"
	if err := s.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.List(ctx); len(l) != 1 || l[0].Key != "c" || l[0].Info.Size != 5 {
		t.Errorf("List = %+v, want c alone of size 5", l)
	}
	// A name saved without the Link leaves the group.
	d := entry("d", "x")
	d.Info.Link = "g"
	if err := s.Save(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, entry("d", "own")); err != nil {
		t.Fatal(err)
	}
	got, err = s.Load(ctx, "c", "d")
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Value) != "x" || string(got[1].Value) != "own" || got[1].Info.Link != "" {
		t.Errorf("c = %q, d = %q (link %q); want x, own (no link)", got[0].Value, got[1].Value, got[1].Info.Link)
	}
}

// TestDirectoryWithKeys: a non-directory never replaces a directory entry
// that holds keys, and the refused batch changes nothing.
func TestDirectoryWithKeys(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	dir := entry("d", "")
	dir.Value, dir.Info.Mode = nil, fs.ModeDir|0o755
	if err := s.Save(ctx, dir, entry("d/x", "x")); err != nil {
		t.Fatal(err)
	}
	err := s.Save(ctx, entry("other", "o"), entry("d", "a file"))
	if !errors.Is(err, syscall.ENOTEMPTY) || !strings.Contains(err.Error(), "save d:") {
		t.Fatalf("Save of a file over a directory that holds d/x = %v, want ENOTEMPTY naming d", err)
	}
	if l, _ := s.List(ctx); len(l) != 2 || !l[0].Info.Mode.IsDir() {
		t.Fatalf("after the refused Save List = %+v, want d (a directory) and d/x", l)
	}
	// A key of the same batch under an empty directory holds it too.
	if err := s.Delete(ctx, "d/x"); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, entry("d", "a file"), entry("d/y", "y")); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Fatalf("Save of d as a file with d/y = %v, want ENOTEMPTY", err)
	}
	if err := s.Save(ctx, entry("d", "a file")); err != nil {
		t.Fatalf("Save of a file over an empty directory: %v", err)
	}
}

// TestNoRetainXAttrs: attributes returned by Load are the caller's.
func TestNoRetainXAttrs(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	e := entry("a", "a")
	e.Info.XAttrs = map[string][]byte{"user.x": []byte("v")}
	if err := s.Save(ctx, e); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Load(ctx, "a")
	got[0].Info.XAttrs["user.x"][0] = 'X'
	got[0].Info.XAttrs["user.y"] = nil
	l, _ := s.List(ctx)
	l[0].Info.XAttrs["user.x"][0] = 'Y'
	again, _ := s.Load(ctx, "a")
	if x := again[0].Info.XAttrs; len(x) != 1 || string(x["user.x"]) != "v" {
		t.Errorf("xattrs after the caller changed what Load and List gave = %q, want user.x=v", x)
	}
}

// TestSaveIfAtomic: a SaveIf refused for one entry keeps no conflict copy.
func TestSaveIfAtomic(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	dir := entry("d", "")
	dir.Value, dir.Info.Mode = nil, fs.ModeDir|0o755
	if err := s.Save(ctx, entry("a", "theirs"), dir, entry("d/x", "x")); err != nil {
		t.Fatal(err)
	}
	_, err := s.SaveIf(ctx, []backend.Entry{entry("a", "ours"), entry("d", "file")}, make([]backend.Version, 2))
	if !errors.Is(err, syscall.ENOTEMPTY) {
		t.Fatalf("SaveIf = %v, want ENOTEMPTY", err)
	}
	if l, _ := s.List(ctx); len(l) != 3 {
		t.Errorf("after a refused SaveIf List = %d keys, want 3 (no conflict copy)", len(l))
	}
}

func TestReopenKeepsSys(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	if err := s.SaveSys(ctx, "r", []byte("rec")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := s.Reopen()
	if err != nil {
		t.Fatal(err)
	}
	if d, err := s2.LoadSys(ctx, "r"); err != nil || string(d) != "rec" {
		t.Errorf("LoadSys after Reopen = %q, %v", d, err)
	}
}

// Another writer never waits for a watcher that does not read, and the
// watch ends (its channel closes) when the store closes all the same.
func TestWatchNeverBlocksAWriter(t *testing.T) {
	s := memstore.New()
	ch, err := s.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	o := s.Other()
	for i := range 1000 {
		if err := o.Set("memory/k.md", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if c := <-ch; c.Key != "memory/k.md" {
		t.Errorf("first change %+v, want memory/k.md", c)
	}
	s.Close()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the watch did not end 5 s after the store closed")
		}
	}
}
