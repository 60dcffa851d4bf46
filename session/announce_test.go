package session_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/session"
)

func extEntry(key, value string) backend.Entry {
	return backend.Entry{Key: key, Value: []byte(value),
		Info: backend.Info{Size: int64(len(value)), Mode: 0o640, MTime: time.Unix(1800000000, 7)}}
}

// TestAnnounceCreate checks the helper's create: announced, it is taken
// once, by the mount's next create of the key, which opens the file with
// the whole external value, clean.
func TestAnnounceCreate(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	if f, ok, err := c.External().CreateAnnounced(t.Context(), "memory/ext.md"); ok || f != nil || err != nil {
		t.Fatalf("CreateAnnounced of a key never announced = %v, %v, %v; want nothing", f, ok, err)
	}
	if ok, err := c.External().AnnounceCreate(extEntry("memory/ext.md", "external"), false); !ok || err != nil {
		t.Fatalf("AnnounceCreate = %v, %v; want true", ok, err)
	}
	if c.Has("memory/ext.md") {
		t.Fatal("an announced create is in the session before the helper's request")
	}
	f, ok, err := c.External().CreateAnnounced(t.Context(), "memory/ext.md")
	if !ok || err != nil {
		t.Fatalf("CreateAnnounced = %v, %v; want the announced create", ok, err)
	}
	f.Close()
	if v, _ := c.Get("memory/ext.md"); string(v) != "external" {
		t.Fatalf("the created file holds %q, want the external value", v)
	}
	if c.Pending().Dirty("memory/ext.md") {
		t.Fatal("the external value is dirty: the store has it")
	}
	if _, ok, _ := c.External().CreateAnnounced(t.Context(), "memory/ext.md"); ok {
		t.Fatal("one announcement taken twice")
	}
	// A key the session has already: nothing to announce, the caller
	// applies the change itself.
	if ok, err := c.External().AnnounceCreate(extEntry("memory/ext.md", "again"), false); ok || err != nil {
		t.Fatalf("AnnounceCreate of a key the session has = %v, %v; want false", ok, err)
	}
	// dirty: the store does not hold the value yet (its rewrite failed).
	c.External().AnnounceCreate(extEntry("memory/dirty.md", "redacted"), true)
	f, _, _ = c.External().CreateAnnounced(t.Context(), "memory/dirty.md")
	f.Close()
	if !c.Pending().Dirty("memory/dirty.md") {
		t.Fatal("an announced dirty create is clean: the next flush would not write it")
	}
}

// TestAnnounceCreateConflict checks a create announced for a key the user
// created meanwhile: the helper's create fails with EEXIST and the
// external value is kept beside the user's.
func TestAnnounceCreateConflict(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	c.External().AnnounceCreate(extEntry("memory/ext.md", "external"), false)
	c.Put(extEntry("memory/ext.md", "the user's")) // dirty, not through the announcement
	_, ok, err := c.External().CreateAnnounced(t.Context(), "memory/ext.md")
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
	c.External().AnnounceRemove("memory/a.md")
	c.External().AnnounceRemove("memory/a.md")
	for i, want := range []bool{true, true, false} {
		if ok, _, _ := c.External().RemoveAnnounced("memory/a.md"); ok != want {
			t.Errorf("take %d = %v, want %v", i+1, ok, want)
		}
	}
	if c.Has("memory/a.md") {
		t.Error("an announced removal left the key")
	}
	if ok, _, _ := c.External().RemoveAnnounced("memory/b.md"); ok {
		t.Error("a key never announced was taken")
	}
	// A dirty key stays: the removal is taken and reports so.
	c.Set("memory/dirty.md", []byte("unflushed"))
	c.External().AnnounceRemove("memory/dirty.md")
	if ok, removed, err := c.External().RemoveAnnounced("memory/dirty.md"); !ok || removed || err != nil {
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
	c.External().AnnounceCreate(extEntry("memory/new.md", "external"), false)
	c.External().AnnounceRemove("memory/gone.md")
	for _, k := range []string{"memory/new.md", "memory/gone.md"} {
		if ok, err := c.External().ApplyAnnounced(k); !ok || err != nil {
			t.Fatalf("ApplyAnnounced(%s) = %v, %v; want applied", k, ok, err)
		}
	}
	if v, _ := c.Get("memory/new.md"); string(v) != "external" || c.Pending().Dirty("memory/new.md") {
		t.Fatalf("after the fallback memory/new.md holds %q (dirty %v), want the external value, clean", v, c.Pending().Dirty("memory/new.md"))
	}
	if c.Has("memory/gone.md") {
		t.Fatal("after the fallback the removed key is still there")
	}
	for _, k := range []string{"memory/new.md", "memory/gone.md"} {
		if ok, _ := c.External().ApplyAnnounced(k); ok {
			t.Errorf("ApplyAnnounced(%s) again found an announcement", k)
		}
	}
	if _, ok, _ := c.External().CreateAnnounced(t.Context(), "memory/new.md"); ok {
		t.Error("an applied announcement captured a later create")
	}
	if ok, _, _ := c.External().RemoveAnnounced("memory/gone.md"); ok {
		t.Error("an applied announcement captured a later unlink")
	}
}

// TestAnnouncementExpires checks that an announcement the helper did not
// take in time no longer captures the mount's requests (a user's own
// create must stay the user's), and is still there for the fallback.
func TestAnnouncementExpires(t *testing.T) {
	now := time.Unix(1900000000, 0)
	c, _, _, _ := newSession(t, session.Options{Now: func() time.Time { return now }})
	c.External().AnnounceCreate(extEntry("memory/late.md", "external"), false)
	now = now.Add(session.AnnounceTTL + time.Second)
	if _, ok, _ := c.External().CreateAnnounced(t.Context(), "memory/late.md"); ok {
		t.Fatal("an expired announcement captured a create")
	}
	if ok, err := c.External().ApplyAnnounced("memory/late.md"); !ok || err != nil {
		t.Fatalf("ApplyAnnounced of an expired announcement = %v, %v; want applied", ok, err)
	}
	if v, _ := c.Get("memory/late.md"); string(v) != "external" {
		t.Fatalf("memory/late.md holds %q", v)
	}
}

// TestAnnounceExpire checks the helper's unlink of an expired file: taken
// once, it removes the file only if it is still due (a write that renewed
// it keeps it); one taken back is no announcement, and the unlink is a
// user's.
func TestAnnounceExpire(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	at := func(d time.Duration) session.Deadline {
		return func(time.Time, map[string][]byte) (time.Time, bool) { return time.Now().Add(d), true }
	}
	c.Put(extEntry("memory/e.md", "short-lived"))
	x := c.External()
	x.AnnounceExpire("memory/e.md", at(time.Hour)) // renewed before the helper's unlink
	if ok, removed, err := x.RemoveAnnounced("memory/e.md"); !ok || removed || err != nil {
		t.Fatalf("the helper's unlink of a renewed file = %v, %v, %v; want taken, kept", ok, removed, err)
	}
	if !c.Has("memory/e.md") || x.TakeExpireBack("memory/e.md") {
		t.Fatal("a renewed file went, or its announcement was taken twice")
	}
	x.AnnounceExpire("memory/e.md", at(-time.Second))
	if !x.TakeExpireBack("memory/e.md") {
		t.Fatal("an announcement not taken was not taken back")
	}
	if ok, _, _ := x.RemoveAnnounced("memory/e.md"); ok {
		t.Fatal("an announcement taken back was taken by an unlink")
	}
	x.AnnounceExpire("memory/e.md", at(-time.Second))
	if ok, removed, err := x.RemoveAnnounced("memory/e.md"); !ok || !removed || err != nil {
		t.Fatalf("the helper's unlink of a due file = %v, %v, %v; want removed", ok, removed, err)
	}
	if c.Has("memory/e.md") || !c.Pending().Removed("memory/e.md") {
		t.Fatal("the due file is still there, or its removal is not pending")
	}
}
