package session_test

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/session"
)

// helperReq is the helper's create (RunHelper): exclusive, read-only.
var helperReq = session.CreateRequest{Exclusive: true}

func extEntry(key, value string) backend.Entry {
	return backend.Entry{Key: key, Value: []byte(value),
		Info: backend.Info{Size: int64(len(value)), Mode: 0o640, MTime: time.Unix(1800000000, 7)}}
}

// TestAnnounceCreate checks the helper's create: announced, it is taken
// once, by the mount's next create of the key, which opens the file with
// the whole external value, clean.
func TestAnnounceCreate(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	if f, ok, err := c.CreateAnnounced(t.Context(), "memory/ext.md", helperReq); ok || f != nil || err != nil {
		t.Fatalf("CreateAnnounced of a key never announced = %v, %v, %v; want nothing", f, ok, err)
	}
	if ok, err := c.AnnounceCreate(extEntry("memory/ext.md", "external"), false); !ok || err != nil {
		t.Fatalf("AnnounceCreate = %v, %v; want true", ok, err)
	}
	if c.Has("memory/ext.md") {
		t.Fatal("an announced create is in the session before the helper's request")
	}
	f, ok, err := c.CreateAnnounced(t.Context(), "memory/ext.md", helperReq)
	if !ok || err != nil {
		t.Fatalf("CreateAnnounced = %v, %v; want the announced create", ok, err)
	}
	f.Close()
	if v, _ := c.Get("memory/ext.md"); string(v) != "external" {
		t.Fatalf("the created file holds %q, want the external value", v)
	}
	if c.Dirty("memory/ext.md") {
		t.Fatal("the external value is dirty: the store has it")
	}
	if _, ok, _ := c.CreateAnnounced(t.Context(), "memory/ext.md", helperReq); ok {
		t.Fatal("one announcement taken twice")
	}
	// A key the session has already: nothing to announce, the caller
	// applies the change itself.
	if ok, err := c.AnnounceCreate(extEntry("memory/ext.md", "again"), false); ok || err != nil {
		t.Fatalf("AnnounceCreate of a key the session has = %v, %v; want false", ok, err)
	}
	// dirty: the store does not hold the value yet (its rewrite failed).
	c.AnnounceCreate(extEntry("memory/dirty.md", "redacted"), true)
	f, _, _ = c.CreateAnnounced(t.Context(), "memory/dirty.md", helperReq)
	f.Close()
	if !c.Dirty("memory/dirty.md") {
		t.Fatal("an announced dirty create is clean: the next flush would not write it")
	}
}

// TestAnnounceCreateConflict checks a create announced for a key the user
// created meanwhile: the helper's create fails with EEXIST and the
// external value is kept beside the user's.
func TestAnnounceCreateConflict(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	c.AnnounceCreate(extEntry("memory/ext.md", "external"), false)
	c.Put(extEntry("memory/ext.md", "the user's")) // dirty, not through the announcement
	_, ok, err := c.CreateAnnounced(t.Context(), "memory/ext.md", helperReq)
	if !ok || !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CreateAnnounced over a dirty key = %v, %v; want an announced create failing with ErrExist", ok, err)
	}
	if v, _ := c.Get("memory/ext.md"); string(v) != "the user's" {
		t.Fatalf("the key holds %q, want the user's value", v)
	}
	var copies int
	for _, k := range c.Keys() {
		if strings.HasPrefix(k, "memory/ext.conflict-") {
			copies++
			if v, _ := c.Get(k); string(v) != "external" {
				t.Errorf("conflict copy %s holds %q", k, v)
			}
		}
	}
	if copies != 1 {
		t.Fatalf("%d conflict copies, want 1", copies)
	}
}

// TestAnnounceRemoveCounts checks that each announced removal is taken
// once: two announced for one key (queued for the helper) are both the
// helper's, a third request is a user's.
func TestAnnounceRemoveCounts(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	c.Set("memory/a.md", []byte("a"))
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.AnnounceRemove("memory/a.md")
	c.AnnounceRemove("memory/a.md")
	for i, want := range []bool{true, true, false} {
		if ok, _, _ := c.RemoveAnnounced("memory/a.md"); ok != want {
			t.Errorf("take %d = %v, want %v", i+1, ok, want)
		}
	}
	if c.Has("memory/a.md") {
		t.Error("an announced removal left the key")
	}
	if ok, _, _ := c.RemoveAnnounced("memory/b.md"); ok {
		t.Error("a key never announced was taken")
	}
	// A dirty key stays: the removal is taken and reports so.
	c.Set("memory/dirty.md", []byte("unflushed"))
	c.AnnounceRemove("memory/dirty.md")
	if ok, removed, err := c.RemoveAnnounced("memory/dirty.md"); !ok || removed || err != nil {
		t.Fatalf("RemoveAnnounced of a dirty key = %v, %v, %v; want taken, not removed", ok, removed, err)
	}
}

// TestApplyAnnounced checks the fallback: announcements the helper never
// carried out are applied directly, and none is left to capture a later
// create or unlink of the user's.
func TestApplyAnnounced(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	c.Set("memory/gone.md", []byte("a"))
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.AnnounceCreate(extEntry("memory/new.md", "external"), false)
	c.AnnounceRemove("memory/gone.md")
	for _, k := range []string{"memory/new.md", "memory/gone.md"} {
		if ok, err := c.ApplyAnnounced(k); !ok || err != nil {
			t.Fatalf("ApplyAnnounced(%s) = %v, %v; want applied", k, ok, err)
		}
	}
	if v, _ := c.Get("memory/new.md"); string(v) != "external" || c.Dirty("memory/new.md") {
		t.Fatalf("after the fallback memory/new.md holds %q (dirty %v), want the external value, clean", v, c.Dirty("memory/new.md"))
	}
	if c.Has("memory/gone.md") {
		t.Fatal("after the fallback the removed key is still there")
	}
	for _, k := range []string{"memory/new.md", "memory/gone.md"} {
		if ok, _ := c.ApplyAnnounced(k); ok {
			t.Errorf("ApplyAnnounced(%s) again found an announcement", k)
		}
	}
	if _, ok, _ := c.CreateAnnounced(t.Context(), "memory/new.md", helperReq); ok {
		t.Error("an applied announcement captured a later create")
	}
	if ok, _, _ := c.RemoveAnnounced("memory/gone.md"); ok {
		t.Error("an applied announcement captured a later unlink")
	}
}

// TestAnnouncementExpires checks that an announcement the helper did not
// take in time no longer opens a create as the helper's, and is still
// there for the fallback.
func TestAnnouncementExpires(t *testing.T) {
	now := time.Unix(1900000000, 0)
	c, _, _, _ := newSession(t, session.Options{Now: func() time.Time { return now }})
	c.AnnounceCreate(extEntry("memory/late.md", "external"), false)
	now = now.Add(session.AnnounceTTL + time.Second)
	if ok, err := c.ApplyAnnounced("memory/late.md"); !ok || err != nil {
		t.Fatalf("ApplyAnnounced of an expired announcement = %v, %v; want applied", ok, err)
	}
	if v, _ := c.Get("memory/late.md"); string(v) != "external" {
		t.Fatalf("memory/late.md holds %q", v)
	}
	c.AnnounceCreate(extEntry("memory/later.md", "external"), false)
	now = now.Add(session.AnnounceTTL + time.Second)
	if f, ok, err := c.CreateAnnounced(t.Context(), "memory/later.md", helperReq); !ok || f != nil || !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a create shaped as the helper's after the TTL = %v, %v, %v; want taken, failing with ErrExist", f, ok, err)
	}
	if v, _ := c.Get("memory/later.md"); string(v) != "external" {
		t.Fatalf("memory/later.md holds %q", v)
	}
}

// request is a create the kernel sends the mount: the helper's is
// exclusive and read-only (RunHelper).
type request struct{ excl, trunc, write bool }

var (
	helperCreate = request{excl: true}
	userTrunc    = request{trunc: true, write: true}
	userExcl     = request{excl: true, write: true}
)

// mountCreate does what the mount's Create (fsnode) does with r: the
// announced create, else a user's.
func mountCreate(t *testing.T, c *session.Context, key string, r request) (*session.File, error) {
	t.Helper()
	if f, ok, err := c.CreateAnnounced(t.Context(), key, session.CreateRequest{Exclusive: r.excl, Truncate: r.trunc, Write: r.write}); ok {
		return f, err
	}
	return c.Create(key, session.CreateOptions{Mode: 0o644, Exclusive: r.excl, Truncate: r.trunc})
}

// mountUnlink does what the mount's Unlink does.
func mountUnlink(c *session.Context, key string) error {
	if ok, removed, err := c.RemoveAnnounced(key); ok {
		if err == nil && !removed {
			return fs.ErrExist // EBUSY at the mount
		}
		return err
	}
	return c.Delete(key)
}

// externalFile saves value under key in the store, as another program
// does, and returns it as the watcher reads it.
func externalFile(t *testing.T, st backend.Store, key, value string) backend.Entry {
	t.Helper()
	if err := st.Save(t.Context(), extEntry(key, value)); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return got[0]
}

func conflictCopies(c *session.Context, key string) []string {
	stem := strings.TrimSuffix(key, ".md") + ".conflict-"
	var vs []string
	for _, k := range c.Keys() {
		if strings.HasPrefix(k, stem) {
			v, _ := c.Get(k)
			vs = append(vs, string(v))
		}
	}
	return vs
}

// TestLateHelperCreate checks the helper's create arriving after its
// announcement expired and before the announcer's sweep applied it: the
// announcement is carried out all the same, the create fails with EEXIST
// (the file exists), and no empty file of the helper's replaces the other
// program's at the next flush.
func TestLateHelperCreate(t *testing.T) {
	now := time.Unix(1900000000, 0)
	c, st, _, _ := newSession(t, session.Options{Now: func() time.Time { return now }})
	e := externalFile(t, st, "memory/late.md", "external")
	if ok, err := c.AnnounceCreate(e, false); !ok || err != nil {
		t.Fatalf("AnnounceCreate = %v, %v", ok, err)
	}
	now = now.Add(session.AnnounceTTL + time.Second)
	f, err := mountCreate(t, c, "memory/late.md", helperCreate)
	if f != nil {
		f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("the helper's late create = %v; want ErrExist", err)
	}
	if v, _ := c.Get("memory/late.md"); string(v) != "external" || c.Dirty("memory/late.md") {
		t.Errorf("after the late create the key holds %q (dirty %v), want the external value, clean", v, c.Dirty("memory/late.md"))
	}
	// The sweep finds it taken.
	if ok, err := c.ApplyAnnounced("memory/late.md"); ok || err != nil {
		t.Errorf("ApplyAnnounced after the late create = %v, %v; want nothing left", ok, err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, _ := storedValue(t, st, "memory/late.md"); v != "external" {
		t.Fatalf("the store holds %q after the flush, want the other program's value", v)
	}
	if cs := conflictCopies(c, "memory/late.md"); len(cs) != 0 {
		t.Errorf("conflict copies %q, want none", cs)
	}
}

// TestUserCreateMeetsAnnouncement checks a user's own create of a key
// whose external create is announced and not shown yet, live or expired:
// the user never saw the other program's file. An exclusive create fails
// with EEXIST (the file exists) and leaves the external value; a
// truncating one gets an empty file of the user's, and the external value
// is kept beside it; a plain one opens the external file. Nothing is lost
// at the next flush.
func TestUserCreateMeetsAnnouncement(t *testing.T) {
	for _, expired := range []bool{false, true} {
		for _, tc := range []struct {
			name   string
			r      request
			err    error
			value  string   // under the key after the user's write
			copies []string // conflict copies
		}{
			{"exclusive", userExcl, fs.ErrExist, "external", nil},
			{"truncating", userTrunc, nil, "user's", []string{"external"}},
			{"plain", request{write: true}, nil, "user'sal", nil},
		} {
			name := tc.name
			if expired {
				name += "/expired"
			}
			t.Run(name, func(t *testing.T) {
				now := time.Unix(1900000000, 0)
				c, st, _, _ := newSession(t, session.Options{Now: func() time.Time { return now }})
				e := externalFile(t, st, "memory/k.md", "external")
				c.AnnounceCreate(e, false)
				if expired {
					now = now.Add(session.AnnounceTTL + time.Second)
				}
				f, err := mountCreate(t, c, "memory/k.md", tc.r)
				if tc.err != nil {
					if f != nil {
						f.Close()
					}
					if !errors.Is(err, tc.err) {
						t.Fatalf("the user's create = %v; want %v", err, tc.err)
					}
				} else {
					if err != nil {
						t.Fatalf("the user's create: %v", err)
					}
					if _, err := f.WriteAt([]byte("user's"), 0); err != nil {
						t.Fatal(err)
					}
					f.Close()
				}
				// The helper's create, then the sweep: both find it taken.
				if f, err := mountCreate(t, c, "memory/k.md", helperCreate); err == nil {
					f.Close()
				}
				c.ApplyAnnounced("memory/k.md")
				if err := c.Flush(t.Context()); err != nil {
					t.Fatal(err)
				}
				if v, _ := storedValue(t, st, "memory/k.md"); v != tc.value {
					t.Errorf("the store holds %q under the key, want %q", v, tc.value)
				}
				if cs := conflictCopies(c, "memory/k.md"); !slices.Equal(cs, tc.copies) {
					t.Errorf("conflict copies %q, want %q", cs, tc.copies)
				}
			})
		}
	}
}

// TestLateHelperUnlink checks the helper's unlink arriving after its
// announcement expired, of a key the user changed since the other program
// removed it: the user's value stays.
func TestLateHelperUnlink(t *testing.T) {
	now := time.Unix(1900000000, 0)
	c, st, _, _ := newSession(t, session.Options{Now: func() time.Time { return now }})
	c.Set("memory/a.md", []byte("a"))
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(t.Context(), "memory/a.md"); err != nil {
		t.Fatal(err)
	}
	c.AnnounceRemove("memory/a.md")
	c.Set("memory/a.md", []byte("the user's")) // meanwhile
	now = now.Add(session.AnnounceTTL + time.Second)
	mountUnlink(c, "memory/a.md") // the helper's, late
	c.ApplyAnnounced("memory/a.md")
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, ok := storedValue(t, st, "memory/a.md"); v != "the user's" {
		t.Fatalf("the store holds %q (%v), want the user's value", v, ok)
	}
}
