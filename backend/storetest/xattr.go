package storetest

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
)

func sameXAttrs(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, bytes.Equal)
}

// testXAttrs: attributes round-trip through Save, Load, List and a reopen;
// an overwrite replaces the whole set; an entry without any reports nil.
func (s suite) testXAttrs(t *testing.T) {
	dir := t.TempDir()
	st := s.openT(t, dir)
	x := map[string][]byte{
		"user.memfs.tags":       []byte("alpha,beta"),
		"user.memfs.importance": []byte("0.75"),
		"user.empty":            {},
		"user.binary":           {0, 1, 2, 255},
		"user." + strings.Repeat("n", backend.MaxXAttrNameLen-len("user.")): []byte("long name"),
	}
	a := entry("notes/a.md", []byte("a"))
	a.Info.XAttrs = x
	save(t, st, a, entry("notes/b.md", []byte("b")))

	check := func(st backend.Store, when string) {
		t.Helper()
		if got := loadOne(t, st, "notes/a.md").Info.XAttrs; !sameXAttrs(got, x) {
			t.Errorf("%s: Load xattrs = %q, want %q", when, got, x)
		}
		if got := loadOne(t, st, "notes/b.md").Info.XAttrs; got != nil {
			t.Errorf("%s: Load of an entry without xattrs = %q, want nil", when, got)
		}
		l := s.list(t, st)
		if len(l) != 2 || !sameXAttrs(l[0].Info.XAttrs, x) || l[1].Info.XAttrs != nil {
			t.Errorf("%s: List = %+v, want a.md with %q and b.md with none", when, l, x)
		}
	}
	check(st, "after save")
	// The store keeps no reference to the caller's map.
	x["user.memfs.tags"][0] = 'X'
	x["user.memfs.tags"] = []byte("alpha,beta")
	check(st, "after the caller changed its map")

	st.Close()
	st = s.openT(t, dir)
	check(st, "after reopen")

	// An overwrite replaces the set: removed names are gone.
	a2 := entry("notes/a.md", []byte("a2"))
	a2.Info.XAttrs = map[string][]byte{"user.memfs.source": []byte("agent")}
	save(t, st, a2)
	if got := loadOne(t, st, "notes/a.md").Info.XAttrs; !sameXAttrs(got, a2.Info.XAttrs) {
		t.Errorf("after overwrite: xattrs = %q, want %q", got, a2.Info.XAttrs)
	}
	a3 := entry("notes/a.md", []byte("a3"))
	save(t, st, a3)
	if got := loadOne(t, st, "notes/a.md").Info.XAttrs; got != nil {
		t.Errorf("after overwrite without xattrs: %q, want nil", got)
	}
}

// testInvalidXAttrs: names outside user., empty names, and sets over the
// size limit are refused with ErrInvalidXAttr, and nothing is written.
func (s suite) testInvalidXAttrs(t *testing.T) {
	st := s.fresh(t)
	save(t, st, entry("k", []byte("old")))
	for _, x := range []map[string][]byte{
		{"trusted.x": []byte("v")},
		{"security.selinux": []byte("v")},
		{"user.": []byte("v")},
		{"noprefix": []byte("v")},
		{"user." + strings.Repeat("n", backend.MaxXAttrNameLen): []byte("v")},
		{"user.big": bytes.Repeat([]byte("v"), backend.MaxXAttrSize)},
	} {
		e := entry("k", []byte("new"))
		e.Info.XAttrs = x
		err := st.Save(t.Context(), e)
		if !errors.Is(err, backend.ErrInvalidXAttr) {
			t.Errorf("Save with xattrs %.60q = %v, want ErrInvalidXAttr", slices.Collect(maps.Keys(x)), err)
		}
	}
	if got := loadOne(t, st, "k"); string(got.Value) != "old" {
		t.Errorf("after refused saves: value %q, want %q", got.Value, "old")
	}
	// Exactly at the limit is accepted.
	e := entry("k", []byte("new"))
	e.Info.XAttrs = map[string][]byte{"user.big": bytes.Repeat([]byte("v"), backend.MaxXAttrSize-len("user.big"))}
	save(t, st, e)
}

// testSysRecords: system records round-trip, replace atomically, list by
// prefix with sizes, never appear among keys, never clash with a key of
// the same name, and survive a reopen.
func (s suite) testSysRecords(t *testing.T) {
	dir := t.TempDir()
	st, ok := s.openT(t, dir).(backend.SysStore)
	if !ok {
		t.Skip("the store is not backend.SysStore")
	}
	ctx := t.Context()
	save(t, st, entry("events/a", []byte("a key, not a record")))
	recs := map[string][]byte{
		"events/000001": []byte("one\n"),
		"events/000002": bytes.Repeat([]byte("two\n"), 1000),
		"events.head":   []byte(`{"seq":2}`),
		"index/x":       {},
	}
	for n, v := range recs {
		if err := st.SaveSys(ctx, n, v); err != nil {
			t.Fatalf("SaveSys %s: %v", n, err)
		}
	}
	if err := st.SaveSys(ctx, "events/000001", []byte("one, replaced\n")); err != nil {
		t.Fatal(err)
	}
	recs["events/000001"] = []byte("one, replaced\n")
	if err := st.SaveSys(ctx, "../escape", []byte("x")); !errors.Is(err, backend.ErrInvalidKey) {
		t.Errorf("SaveSys ../escape = %v, want ErrInvalidKey", err)
	}

	check := func(st backend.SysStore, when string) {
		t.Helper()
		for n, want := range recs {
			got, err := st.LoadSys(ctx, n)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: LoadSys %s = %d bytes, %v; want %d bytes", when, n, len(got), err, len(want))
			}
		}
		if _, err := st.LoadSys(ctx, "events/missing"); !errors.Is(err, backend.ErrKeyNotFound) {
			t.Errorf("%s: LoadSys of a missing record = %v, want ErrKeyNotFound", when, err)
		}
		l, err := st.ListSys(ctx, "events/")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range l {
			names = append(names, e.Key)
			if e.Info.Size != int64(len(recs[e.Key])) || e.Value != nil {
				t.Errorf("%s: ListSys %s: size %d, value %v; want size %d, no value", when, e.Key, e.Info.Size, e.Value != nil, len(recs[e.Key]))
			}
		}
		if strings.Join(names, " ") != "events/000001 events/000002" {
			t.Errorf("%s: ListSys(events/) = %q", when, names)
		}
		if all, _ := st.ListSys(ctx, ""); len(all) != len(recs) {
			t.Errorf("%s: ListSys(\"\") = %d records, want %d", when, len(all), len(recs))
		}
		if keys := keysOf(s.list(t, st)); strings.Join(keys, " ") != "events/a" {
			t.Errorf("%s: List = %q, want only the key events/a", when, keys)
		}
		if got := loadOne(t, st, "events/a"); string(got.Value) != "a key, not a record" {
			t.Errorf("%s: key events/a = %q", when, got.Value)
		}
	}
	check(st, "after save")
	st.Close()
	st = s.openT(t, dir).(backend.SysStore)
	check(st, "after reopen")

	if err := st.DeleteSys(ctx, "index/x", "never/was"); err != nil {
		t.Fatalf("DeleteSys: %v", err)
	}
	if _, err := st.LoadSys(ctx, "index/x"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Errorf("LoadSys after DeleteSys = %v, want ErrKeyNotFound", err)
	}
}
