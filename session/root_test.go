package session_test

import (
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/session"
)

// TestRootAttributesSurviveACrash: a change of the root's attributes is
// journaled like a directory's; a killed session's journal gives it back,
// and the flush after the replay stores it (backend.RootRecord).
func TestRootAttributesSurviveACrash(t *testing.T) {
	st := openStore(t, t.TempDir())
	jpath := filepath.Join(t.TempDir(), "journal")
	j, _, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	c := session.NewContext(st, session.Options{Journal: j})
	if err := c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	mode, uid, mtime := backend.PermBits(0o1700), uint32(42), time.Unix(1600000000, 5)
	if _, err := c.SetAttr(t.Context(), "", session.Attr{Mode: &mode, UID: &uid, MTime: &mtime}); err != nil {
		t.Fatalf("setattr of the root: %v", err)
	}
	if err := c.XAttrs().Set(t.Context(), "", "user.note", []byte("root"), 0); err != nil {
		t.Fatalf("setxattr of the root: %v", err)
	}
	j.Close() // killed: no flush
	j2, recs, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	c2 := session.NewContext(st, session.Options{Journal: j2})
	if err := c2.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c2.Pending().Replay(recs); err != nil {
		t.Fatal(err)
	}
	if err := c2.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	b, err := st.LoadSys(t.Context(), backend.RootRecord)
	if err != nil {
		t.Fatalf("the root's record after the replay's flush: %v", err)
	}
	info, err := backend.DecodeRoot(b)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode != fs.ModeDir|mode || info.UID != 42 || !info.MTime.Equal(mtime) || string(info.XAttrs["user.note"]) != "root" {
		t.Errorf("stored root: mode %v uid %d mtime %v xattrs %q; want %v, 42, %v, user.note=root", info.Mode, info.UID, info.MTime, info.XAttrs, mode, mtime)
	}
	c3 := session.NewContext(st, session.Options{})
	if err := c3.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s, _ := c3.Stat(""); s.Mode.Perm() != 0o700 || s.UID != 42 || !s.MTime.Equal(mtime) {
		t.Errorf("root after a new bootstrap: %v uid %d mtime %v", s.Mode, s.UID, s.MTime)
	}
}
