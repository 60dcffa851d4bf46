package session_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/session"
)

// Attributes: set, get, list, remove with setxattr's flags; memfs's own
// validated; read-only ones refused; all persisted by Flush and found
// again by a new session.
func TestXAttrs(t *testing.T) {
	c, st, _, _ := newSession(t, session.Options{Derived: map[string]session.AttrFunc{meta.Skill: contextpack.SkillAttr}})
	ctx := t.Context()
	key := "skills/go/SKILL.md" // indexed, not loaded
	if err := c.XAttrs().Set(ctx, key, "user.memfs.tags", []byte("go, tools"), 0); err != nil {
		t.Fatal(err)
	}
	if err := c.XAttrs().Set(ctx, key, "user.memfs.tags", []byte("x"), session.XAttrCreate); !errors.Is(err, session.ErrXAttrExists) {
		t.Errorf("XATTR_CREATE of a set attribute = %v, want ErrXAttrExists", err)
	}
	if err := c.XAttrs().Set(ctx, key, "user.other", []byte("x"), session.XAttrReplace); !errors.Is(err, session.ErrNoXAttr) {
		t.Errorf("XATTR_REPLACE of a missing attribute = %v, want ErrNoXAttr", err)
	}
	for name, v := range map[string]string{
		"user.memfs.importance": "1.5", "user.memfs.source": "robot", "user.memfs.tag": "typo",
		"user.memfs.agent": "has space", "user.memfs.tags": "a,,b",
	} {
		if err := c.XAttrs().Set(ctx, key, name, []byte(v), 0); !errors.Is(err, session.ErrInvalidOp) || !errors.Is(err, meta.ErrInvalid) {
			t.Errorf("SetXAttr %s=%q = %v, want ErrInvalidOp wrapping meta.ErrInvalid", name, v, err)
		}
	}
	for _, name := range []string{meta.Created, meta.Writer} {
		if err := c.XAttrs().Set(ctx, key, name, []byte("x"), 0); !errors.Is(err, session.ErrReadOnly) {
			t.Errorf("SetXAttr %s = %v, want ErrReadOnly", name, err)
		}
	}
	if err := c.XAttrs().Set(ctx, key, "trusted.x", []byte("x"), 0); !errors.Is(err, session.ErrXAttrNotSupported) {
		t.Errorf("SetXAttr trusted.x = %v, want ErrXAttrNotSupported", err)
	}
	if err := c.XAttrs().Set(ctx, "skills/go", "user.x", []byte("x"), 0); err != nil {
		t.Errorf("SetXAttr on a directory = %v", err)
	}
	if v, err := c.XAttrs().Get("skills/go", "user.x"); err != nil || string(v) != "x" {
		t.Errorf("GetXAttr on a directory = %q, %v", v, err)
	}
	if err := c.XAttrs().Set(ctx, "", "user.x", []byte("x"), 0); err != nil {
		t.Errorf("SetXAttr on the root = %v (the root is a directory like any other)", err)
	}
	if err := c.XAttrs().Set(ctx, key, "user.big", make([]byte, backend.MaxXAttrSize), 0); !errors.Is(err, session.ErrXAttrSpace) {
		t.Errorf("SetXAttr over the limit = %v, want ErrXAttrSpace", err)
	}
	if err := c.XAttrs().Set(ctx, key, "user.note", []byte("keep"), 0); err != nil {
		t.Fatal(err)
	}
	if err := c.XAttrs().Set(ctx, key, "user.gone", []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	if err := c.XAttrs().Remove(ctx, key, "user.gone"); err != nil {
		t.Fatal(err)
	}
	if err := c.XAttrs().Remove(ctx, key, "user.gone"); !errors.Is(err, session.ErrNoXAttr) {
		t.Errorf("second RemoveXAttr = %v, want ErrNoXAttr", err)
	}
	if names, _ := c.XAttrs().List(key); !slices.Equal(names, []string{"user.memfs.tags", "user.note"}) {
		t.Errorf("ListXAttr = %q", names)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	// A SKILL.md also gets its front matter, as user.memfs.skill.
	if x := got[0].Info.XAttrs; len(x) != 3 || string(x["user.memfs.tags"]) != "go, tools" || string(x["user.note"]) != "keep" ||
		string(x[meta.Skill]) != `{"name":"go","description":""}` {
		t.Errorf("stored xattrs = %q", x)
	}
	if string(got[0].Value) != sample[key] {
		t.Errorf("value after an attribute-only flush = %q", got[0].Value)
	}
	c2 := session.NewContext(st, session.Options{})
	if err := c2.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := c2.XAttrs().Get(key, "user.note"); err != nil || string(v) != "keep" {
		t.Errorf("new session: user.note = %q, %v", v, err)
	}
}

// A new file gets user.memfs.created; a write through a handle names its
// writer; both survive a flush and are read-only.
func TestCreatedAndWriter(t *testing.T) {
	self := meta.WriterInfo{UID: 1, PID: 2, Comm: "memfs", Agent: "a1"}
	c, st, _, _ := newSession(t, session.Options{Self: &self})
	ctx := t.Context()
	w := meta.WriterInfo{UID: 1000, PID: 4242, Comm: "vim", Agent: "a1"}
	h, err := c.Create("memory/new.md", session.CreateOptions{Mode: 0o644, Writer: &w})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if err := c.Set("memory/set.md", []byte("by memfs")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(ctx, "memory/new.md", "memory/set.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []meta.WriterInfo{w, self} {
		x := got[i].Info.XAttrs
		if x[meta.Created] == nil {
			t.Errorf("%s: no %s", got[i].Key, meta.Created)
		}
		gotW, err := meta.DecodeWriter(x[meta.Writer])
		if err != nil || gotW != want {
			t.Errorf("%s: writer = %+v, %v; want %+v", got[i].Key, gotW, err, want)
		}
	}
	if err := c.XAttrs().Remove(ctx, "memory/new.md", meta.Created); !errors.Is(err, session.ErrReadOnly) {
		t.Errorf("RemoveXAttr created = %v, want ErrReadOnly", err)
	}
}

// Flush reports one event per change that reached the store, in the order
// of the changes, with the right operation, key, hash and writer; changes
// that never reached the store (created then removed) give none.
func TestFlushEvents(t *testing.T) {
	var mu sync.Mutex
	var got []session.Event
	self := meta.WriterInfo{PID: 1, Comm: "memfs"}
	c, _, _, _ := newSession(t, session.Options{Self: &self, Events: func(_ context.Context, evs []session.Event) error {
		mu.Lock()
		got = append(got, evs...)
		mu.Unlock()
		return nil
	}})
	ctx := t.Context()
	bob := meta.WriterInfo{UID: 7, PID: 99, Comm: "bob"}
	as := session.WithWriter(ctx, bob)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Set("memory/global.md", []byte("changed\n")))                                      // write
	must(c.Rename(as, "memory/project/kernel.md", "memory/project/kern.md", 0))               // rename
	must(c.XAttrs().Set(as, "agents/explorer.json", "user.memfs.source", []byte("agent"), 0)) // attr
	must(c.DeleteBy("skills/go/resources/ref.txt", &bob))                                     // delete
	must(c.Set("memory/tmp.md", []byte("short-lived")))                                       // never stored
	must(c.Delete("memory/tmp.md"))                                                           //
	must(c.Flush(ctx))
	var lines []string
	for _, e := range got {
		lines = append(lines, fmt.Sprintf("%s %s %s %d %s", e.Op, e.Key, e.OldKey, e.Size, e.Writer.Comm))
	}
	want := []string{
		"write memory/global.md  8 memfs",
		"rename memory/project/kern.md memory/project/kernel.md 13 bob",
		"attr agents/explorer.json  19 bob",
		"delete skills/go/resources/ref.txt  0 bob",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if sum := sha256.Sum256([]byte("changed\n")); got[0].SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 = %q, want the hash of the stored value", got[0].SHA256)
	}
	if got[3].SHA256 != "" {
		t.Errorf("delete event has a hash %q", got[3].SHA256)
	}
	// A second flush with nothing new reports nothing.
	n := len(got)
	must(c.Flush(ctx))
	if len(got) != n {
		t.Errorf("an empty flush gave %d events", len(got)-n)
	}
}

// A failing event sink loses no event: they come again after the next
// flush. The flush whose events it refused is no success (the values
// have no event yet).
func TestFlushEventsRetried(t *testing.T) {
	var got []string
	fail := true
	c, _, _, _ := newSession(t, session.Options{Events: func(_ context.Context, evs []session.Event) error {
		if fail {
			return errors.New("log is full")
		}
		for _, e := range evs {
			got = append(got, e.Op+" "+e.Key)
		}
		return nil
	}})
	if err := c.Set("a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err == nil {
		t.Fatal("a flush whose events the sink refused reported success")
	}
	fail = false
	if err := c.Set("b", []byte("2")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"write a", "write b"}) {
		t.Errorf("events = %q", got)
	}
}

// Saved hears what the store holds after a flush: values as persisted
// (redacted), and the keys deleted.
func TestSavedHook(t *testing.T) {
	var saved []backend.Entry
	var deleted []string
	c, _, _, _ := newSession(t, session.Options{
		Redactor: wordRedactor(t, "secret"),
		Saved: func(_ context.Context, s []backend.Entry, d []string) {
			saved = append(saved, s...)
			deleted = append(deleted, d...)
		},
	})
	if err := c.Set("memory/a.md", []byte("a secret")); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("agents/explorer.json"); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(saved) != 1 || string(saved[0].Value) != "a [REDACTED:word]" || saved[0].Info.Size != 17 || !slices.Equal(deleted, []string{"agents/explorer.json"}) {
		t.Errorf("Saved got %+v, deleted %v", saved, deleted)
	}
}

// Derived attributes are the caller's (Options.Derived): computed from each
// saved entry's key and value, stored with it, shown by the session after
// the flush, and taken away from a file renamed where they do not apply.
// Without them the session derives nothing: it knows no skills.
func TestDerivedAttrs(t *testing.T) {
	const name = "user.test.len"
	mdLen := func(key string, value []byte) ([]byte, bool) {
		return fmt.Appendf(nil, "%d", len(value)), strings.HasSuffix(key, ".md")
	}
	c, st, _, _ := newSession(t, session.Options{Derived: map[string]session.AttrFunc{name: mdLen}})
	ctx := t.Context()
	stored := func(key string) map[string][]byte {
		t.Helper()
		got, err := st.Load(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return got[0].Info.XAttrs
	}
	if err := c.Set("notes/a.md", []byte("12345")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if v := stored("notes/a.md")[name]; string(v) != "5" {
		t.Errorf("stored %s = %q, want 5", name, v)
	}
	if v, err := c.XAttrs().Get("notes/a.md", name); err != nil || string(v) != "5" {
		t.Errorf("session %s = %q, %v; want 5 after the flush", name, v, err)
	}
	if err := c.Rename(ctx, "notes/a.md", "notes/a.txt", 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if v, ok := stored("notes/a.txt")[name]; ok {
		t.Errorf("stored %s of a file renamed away = %q, want none", name, v)
	}
	if v, err := c.XAttrs().Get("notes/a.txt", name); !errors.Is(err, session.ErrNoXAttr) {
		t.Errorf("session %s of a file renamed away = %q, %v; want ErrNoXAttr", name, v, err)
	}

	c2, st2, _, _ := newSession(t, session.Options{})
	if err := c2.Set("skills/x/SKILL.md", []byte("---\nname: x\n---\n")); err != nil {
		t.Fatal(err)
	}
	if err := c2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := st2.Load(ctx, "skills/x/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := got[0].Info.XAttrs[meta.Skill]; ok {
		t.Errorf("a session without Derived stored %s = %q", meta.Skill, v)
	}
}
