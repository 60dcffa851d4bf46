package session_test

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/session"
)

func TestApplyExternal(t *testing.T) {
	c, st, rec, _ := newSession(t, session.Options{})
	var ops []string
	c.Watch(func(ch session.Change) { ops = append(ops, string(ch.Op)+":"+string(ch.Origin)) })
	info := backend.Info{Size: 3, Mode: 0o600, MTime: time.Unix(1800000000, 5)}
	// A clean key changes under the session: it takes the new value, clean.
	if conflict, err := c.External().Apply(backend.Entry{Key: "agents/explorer.json", Value: []byte("new"), Info: info}); err != nil || conflict != "" {
		t.Fatalf("ApplyExternal = %q, %v", conflict, err)
	}
	if v, ok := c.Get("agents/explorer.json"); !ok || string(v) != "new" {
		t.Fatalf("after ApplyExternal Get = %q %v", v, ok)
	}
	if c.Pending().Dirty("agents/explorer.json") {
		t.Fatal("an external value is dirty: memfs would write it back")
	}
	if !c.External().Echo("agents/explorer.json", info) {
		t.Fatal("the applied version is not recognised as known")
	}
	// A dirty key: conflict, both kept.
	c.Set("memory/global.md", []byte("mine"))
	conflict, err := c.External().Apply(backend.Entry{Key: "memory/global.md", Value: []byte("theirs"), Info: info})
	if err != nil || !strings.HasPrefix(conflict, "memory/global.conflict-") || !strings.HasSuffix(conflict, ".md") {
		t.Fatalf("conflict = %q, %v", conflict, err)
	}
	if v, _ := c.Get("memory/global.md"); string(v) != "mine" {
		t.Fatalf("the key lost the session's value: %q", v)
	}
	if v, _ := c.Get(conflict); string(v) != "theirs" {
		t.Fatalf("the conflict copy holds %q", v)
	}
	// A removal of a dirty key keeps it; of a clean key takes it away
	// without asking the store to delete it again.
	if ok, _ := c.External().Remove("memory/global.md"); ok || !c.Has("memory/global.md") {
		t.Fatal("an external removal dropped a dirty key")
	}
	if ok, _ := c.External().Remove("skills/go/SKILL.md"); !ok || c.Has("skills/go/SKILL.md") {
		t.Fatal("an external removal of a clean key did not apply")
	}
	rec.reset()
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d := rec.get("delete"); len(d) != 0 {
		t.Fatalf("flush deleted %v: the store had removed it already", d)
	}
	if v, _ := storedValue(t, st, conflict); v != "theirs" {
		t.Fatalf("conflict copy stored as %q", v)
	}
	if v, _ := storedValue(t, st, "memory/global.md"); v != "mine" {
		t.Fatalf("key stored as %q", v)
	}
	if !strings.Contains(strings.Join(ops, " "), "write:external") || !strings.Contains(strings.Join(ops, " "), "remove:external") {
		t.Fatalf("changes told: %v", ops)
	}
}

func TestConflictKey(t *testing.T) {
	at := time.Date(2026, 11, 22, 23, 24, 0, 5, time.UTC)
	for key, want := range map[string]string{
		"memory/notes.md": "memory/notes.conflict-20261122T232400.000000005Z.md",
		"agents/x.json":   "agents/x.conflict-20261122T232400.000000005Z.json",
		"README":          "README.conflict-20261122T232400.000000005Z",
		"a/.bashrc":       "a/.bashrc.conflict-20261122T232400.000000005Z",
	} {
		if got := session.ConflictKey(key, at); got != want {
			t.Errorf("ConflictKey(%s) = %s, want %s", key, got, want)
		}
	}
}

// A watcher that sees an older version memfs wrote, after a newer save
// began, recognises it as memfs's own: treated as another program's, it
// would put the store's (redacted) bytes under a process that holds the
// file open (seen under load: the writer read back redacted bytes).
func TestEchoKnowsOlderOwnVersions(t *testing.T) {
	c, st, _, _ := newSession(t, session.Options{})
	var infos []backend.Info
	for i := range 3 {
		if err := c.Set("memory/held.md", []byte(strings.Repeat("v", 10+i))); err != nil {
			t.Fatal(err)
		}
		if err := c.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		got, err := st.Load(t.Context(), "memory/held.md")
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, got[0].Info)
	}
	for i, info := range infos {
		if !c.External().Echo("memory/held.md", info) {
			t.Errorf("version %d memfs wrote is not recognised as its own", i)
		}
	}
	if c.External().Echo("memory/held.md", backend.Info{Size: 99, MTime: infos[0].MTime}) {
		t.Error("a version memfs never wrote is taken for its own")
	}
}

// Another program's hard link reaches the session as one node: its
// second name joins the first (the store names the group in Info.Link),
// and a write under one name shows under the other (the store reports
// the name written only). Issue 26: the two-writer model's dir rounds
// found a name of a group holding a value the store no longer has.
func TestApplyExternalHardLink(t *testing.T) {
	c, _, rec, _ := newSession(t, session.Options{})
	at := time.Unix(1800000000, 0)
	one := backend.Info{Size: 3, Mode: 0o644, MTime: at}
	apply := func(key, v string, info backend.Info) {
		t.Helper()
		info.Size = int64(len(v))
		if conflict, err := c.External().Apply(backend.Entry{Key: key, Value: []byte(v), Info: info}); err != nil || conflict != "" {
			t.Fatalf("Apply %s = %q, %v", key, conflict, err)
		}
	}
	apply("n1.md", "one", one)
	linked := one
	linked.Link, linked.CTime = "i1.42", at.Add(time.Second)
	apply("n2.md", "one", linked) // the new name, seen first
	apply("n1.md", "one", linked) // the first, its link count moved
	s1, _ := c.Stat("n1.md")
	s2, _ := c.Stat("n2.md")
	if s1.Ino != s2.Ino || s1.Nlink != 2 || s2.Nlink != 2 {
		t.Fatalf("after a hard link: n1 ino %d nlink %d, n2 ino %d nlink %d; want one node with two names", s1.Ino, s1.Nlink, s2.Ino, s2.Nlink)
	}
	linked.MTime = at.Add(2 * time.Second)
	apply("n1.md", "two", linked) // written in place under n1 alone
	if v, _ := c.Get("n2.md"); string(v) != "two" {
		t.Fatalf("n2.md = %q after a write under n1.md; want %q", v, "two")
	}
	if c.Pending().Dirty("n1.md") || c.Pending().Dirty("n2.md") {
		t.Fatal("another program's link is dirty: memfs would write it back")
	}
	rec.reset()
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d := rec.get("delete"); len(d) != 0 {
		t.Fatalf("flush deleted %v: the store has them", d)
	}
}

// Another program's version with the same size and mtime as the one the
// session took in, but another change time (a file of the same length
// renamed over it within one tick of the clock), is no echo: the
// session's clean copy is compared with the store's version it came from,
// change time included (issue 26: the dir rounds of the two-writer model
// kept "other 24" where the store held "other 22").
func TestEchoComparesTheChangeTime(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	at := time.Unix(1800000000, 0)
	info := backend.Info{Size: 9, Mode: 0o644, MTime: at, CTime: at}
	if _, err := c.External().Apply(backend.Entry{Key: "n3.md", Value: []byte("other 24\n"), Info: info}); err != nil {
		t.Fatal(err)
	}
	if !c.External().Echo("n3.md", info) {
		t.Fatal("the version taken in is not recognised")
	}
	renamed := info
	renamed.CTime = at.Add(time.Millisecond)
	if c.External().Echo("n3.md", renamed) {
		t.Fatal("a version with another change time is taken for the one the session holds")
	}
}

// TestApplyDirMovesItsParent: a directory another program made, with the
// directories above it the session lacked, is told as one OpMkdir each,
// from the top, and the directory it appeared in as OpAttr, its mtime
// moved, so that the mount drops the kernel's cached listing of it (which
// holds no entry of the new name to invalidate). Nothing of it is a change
// to flush: the store has it all.
func TestApplyDirMovesItsParent(t *testing.T) {
	now := time.Unix(1900000000, 0)
	c, _, _, _ := newSession(t, session.Options{Now: func() time.Time { return now }})
	before, err := c.Stat("memory")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	c.Watch(func(ch session.Change) { got = append(got, string(ch.Op)+" "+ch.Key+" "+string(ch.Origin)) })
	info := backend.Info{Mode: fs.ModeDir | 0o750, MTime: time.Unix(1800000000, 0)}
	if err := c.External().ApplyDir("memory/x/y", info); err != nil {
		t.Fatal(err)
	}
	want := []string{"mkdir memory/x external", "mkdir memory/x/y external", "attr memory external"}
	if !slices.Equal(got, want) {
		t.Errorf("got changes %q, want %q", got, want)
	}
	after, err := c.Stat("memory")
	if err != nil {
		t.Fatal(err)
	}
	if !after.MTime.Equal(now) || after.MTime.Equal(before.MTime) {
		t.Errorf("got memory's mtime %v (before %v), want %v", after.MTime, before.MTime, now)
	}
	for _, k := range []string{"memory", "memory/x", "memory/x/y"} {
		if st, err := c.Stat(k); err != nil || st.Dirty {
			t.Errorf("%s: got %+v, %v; want a clean directory", k, st, err)
		}
	}
	if st, _ := c.Stat("memory/x/y"); st.Mode != fs.ModeDir|0o750 {
		t.Errorf("got memory/x/y's mode %v, want the store's %v", st.Mode, info.Mode)
	}

	// A directory the session has: no mkdir, and its parent is left as it is.
	got = nil
	if err := c.External().ApplyDir("memory/x/y", info); err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(got, func(s string) bool { return !strings.HasPrefix(s, "attr memory/x/y ") }) {
		t.Errorf("applying a known directory again told %q", got)
	}
}
