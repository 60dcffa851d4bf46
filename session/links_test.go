package session_test

// Hard links across a crash (journal replay), a failed batch, transient
// names and external changes: no name loses its node or its value.

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/session"
)

func crashReplay(t *testing.T, s int, dir, jpath string, j *journal.Journal, st interface{ Close() error }) *session.Context {
	j.Close()
	st.Close()
	j2, recs, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j2.Close() })
	c2, st2 := reopen(t, nodeStores[s].open, dir, session.Options{Journal: j2})
	t.Cleanup(func() { st2.Close() })
	if err := c2.Pending().Replay(recs); err != nil {
		t.Fatal(err)
	}
	return c2
}

func val(t *testing.T, c *session.Context, k string) string {
	if err := c.Resolve(t.Context(), k); err != nil {
		return "<" + err.Error() + ">"
	}
	v, _ := c.Get(k)
	return string(v)
}

// ln a b; flush; mv c a; crash: b must keep A.
func TestLinksRenameOverLinked(t *testing.T) {
	for s := range nodeStores {
		t.Run(nodeStores[s].name, func(t *testing.T) {
			dir := t.TempDir()
			jpath := filepath.Join(t.TempDir(), "journal")
			j, _, _ := journal.Open(jpath)
			c, st := reopen(t, nodeStores[s].open, dir, session.Options{Journal: j})
			c.Set("a", []byte("A"))
			if err := c.Link(t.Context(), "a", "b"); err != nil {
				t.Fatal(err)
			}
			c.Set("c", []byte("C"))
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := c.Rename(t.Context(), "c", "a", 0); err != nil {
				t.Fatal(err)
			}
			t.Logf("before crash: a=%q b=%q", val(t, c, "a"), val(t, c, "b"))
			c2 := crashReplay(t, s, dir, jpath, j, st)
			t.Logf("after replay: a=%q b=%q c=%v", val(t, c2, "a"), val(t, c2, "b"), c2.Has("c"))
			if val(t, c2, "b") != "A" {
				t.Errorf("b lost its content")
			}
		})
	}
}

// ln a b; flush; mv b x; crash: x must exist.
func TestLinksRenameAliasName(t *testing.T) {
	for s := range nodeStores {
		t.Run(nodeStores[s].name, func(t *testing.T) {
			dir := t.TempDir()
			jpath := filepath.Join(t.TempDir(), "journal")
			j, _, _ := journal.Open(jpath)
			c, st := reopen(t, nodeStores[s].open, dir, session.Options{Journal: j})
			c.Set("a", []byte("A"))
			c.Link(t.Context(), "a", "b")
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := c.Rename(t.Context(), "b", "x", 0); err != nil {
				t.Fatal(err)
			}
			c2 := crashReplay(t, s, dir, jpath, j, st)
			t.Logf("after replay: keys %v", c2.Keys())
			if !c2.Has("x") {
				t.Errorf("x lost")
			}
		})
	}
}

// exchange a (linked with b) and c; crash.
func TestLinksExchangeLinked(t *testing.T) {
	for s := range nodeStores {
		t.Run(nodeStores[s].name, func(t *testing.T) {
			dir := t.TempDir()
			jpath := filepath.Join(t.TempDir(), "journal")
			j, _, _ := journal.Open(jpath)
			c, st := reopen(t, nodeStores[s].open, dir, session.Options{Journal: j})
			c.Set("a", []byte("A"))
			c.Link(t.Context(), "a", "b")
			c.Set("c", []byte("C"))
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := c.Rename(t.Context(), "a", "c", session.RenameExchange); err != nil {
				t.Fatal(err)
			}
			t.Logf("before: a=%q b=%q c=%q", val(t, c, "a"), val(t, c, "b"), val(t, c, "c"))
			c2 := crashReplay(t, s, dir, jpath, j, st)
			t.Logf("after: a=%q b=%q c=%q", val(t, c2, "a"), val(t, c2, "b"), val(t, c2, "c"))
			if val(t, c2, "a") != "C" || val(t, c2, "b") != "A" || val(t, c2, "c") != "A" {
				t.Errorf("wrong after replay")
			}
		})
	}
}

// dir rename with a linked name whose primary is outside.
func TestLinksDirRenameLinked(t *testing.T) {
	for s := range nodeStores {
		t.Run(nodeStores[s].name, func(t *testing.T) {
			dir := t.TempDir()
			jpath := filepath.Join(t.TempDir(), "journal")
			j, _, _ := journal.Open(jpath)
			c, st := reopen(t, nodeStores[s].open, dir, session.Options{Journal: j})
			c.Set("a", []byte("A"))
			c.Mkdir("d", 0o755, 0, 0)
			c.Link(t.Context(), "a", "d/b")
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := c.Rename(t.Context(), "d", "e", 0); err != nil {
				t.Fatal(err)
			}
			c2 := crashReplay(t, s, dir, jpath, j, st)
			t.Logf("after replay: keys %v", c2.Keys())
			if !c2.Has("e/b") {
				t.Errorf("e/b lost")
			}
		})
	}
}
func TestLinksRemoveExternalLinked(t *testing.T) {
	dir := t.TempDir()
	c, st := reopen(t, nodeStores[0].open, dir, session.Options{})
	defer st.Close()
	c.Set("a", []byte("A"))
	c.Link(t.Context(), "a", "b")
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "a"))
	if ok, err := c.External().Remove("a"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	ls, _ := st.List(t.Context())
	for _, e := range ls {
		t.Logf("store: %s", e.Key)
	}
	if len(ls) != 1 {
		t.Errorf("want only b")
	}
}

// A batch that fails makes the flush save entries one by one: a hard-link
// group is then saved name by name.
func TestLinksRetrySplitsGroup(t *testing.T) {
	dir := t.TempDir()
	c, st := reopen(t, nodeStores[0].open, dir, session.Options{})
	c.Set("d/x", []byte("x"))
	c.Set("a", []byte("A"))
	c.Link(t.Context(), "a", "b")
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.Delete("d/x")
	c.Rmdir("d")
	c.Set("d", []byte("now a file")) // refused in the batch: d is still a directory
	c.Set("a", []byte("A2"))
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	c2, st2 := reopen(t, nodeStores[0].open, dir, session.Options{})
	defer st2.Close()
	x, _ := c2.Stat("a")
	y, _ := c2.Stat("b")
	t.Logf("a ino %d nlink %d, b ino %d nlink %d", x.Ino, x.Nlink, y.Ino, y.Nlink)
	if x.Ino != y.Ino {
		t.Errorf("hard link split by the per-entry retry")
	}
}
func TestLinksLinkedTransient(t *testing.T) {
	for s := range nodeStores {
		t.Run(nodeStores[s].name, func(t *testing.T) {
			dir := t.TempDir()
			c, st := reopen(t, nodeStores[s].open, dir, session.Options{})
			c.Set("a", []byte("A"))
			c.Link(t.Context(), "a", "b")
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := c.Rename(t.Context(), "a", ".a.swp", 0); err != nil {
				t.Fatal(err)
			}
			if err := c.Set("b", []byte("B2")); err != nil {
				t.Fatal(err)
			}
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			st.Close()
			c2, st2 := reopen(t, nodeStores[s].open, dir, session.Options{})
			defer st2.Close()
			t.Logf("keys %v b=%q", c2.Keys(), val(t, c2, "b"))
			if val(t, c2, "b") != "B2" {
				t.Errorf("write to b lost")
			}
		})
	}
}

// Unlinking one name of a node whose value was never loaded keeps the
// value under the other names.
func TestLinksUnlinkUnloaded(t *testing.T) {
	for s := range nodeStores {
		t.Run(nodeStores[s].name, func(t *testing.T) {
			dir := t.TempDir()
			c, st := reopen(t, nodeStores[s].open, dir, session.Options{})
			if err := c.Set("d/f", []byte("kept")); err != nil {
				t.Fatal(err)
			}
			if err := c.Mkdir("e", 0o755, 0, 0); err != nil {
				t.Fatal(err)
			}
			if err := c.Link(t.Context(), "d/f", "e/hl"); err != nil {
				t.Fatal(err)
			}
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			st.Close()
			c2, st2 := reopen(t, nodeStores[s].open, dir, session.Options{}) // loads memory/ only
			if err := c2.Delete("d/f"); err != nil {
				t.Fatal(err)
			}
			if err := c2.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			st2.Close()
			c3, st3 := reopen(t, nodeStores[s].open, dir, session.Options{})
			defer st3.Close()
			if got := val(t, c3, "e/hl"); got != "kept" {
				t.Fatalf("e/hl after unlinking d/f = %q, want kept", got)
			}
		})
	}
}

// A name of a node with hard links moved (with its directory) to where a
// removed file was is saved, never deleted by that removal (found by the
// differential test: seed 102, op 3,700).
func TestLinksNameTakesARemovedKey(t *testing.T) {
	for s := range nodeStores {
		t.Run(nodeStores[s].name, func(t *testing.T) {
			dir := t.TempDir()
			c, st := reopen(t, nodeStores[s].open, dir, session.Options{})
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(c.Set("x/c", []byte("old")))
			must(c.Flush(t.Context()))
			must(c.Delete("x/c"))
			must(c.Rmdir("x"))
			must(c.Set("p", []byte("node")))
			must(c.Mkdir("b", 0o755, 0, 0))
			must(c.Link(t.Context(), "p", "b/c"))
			must(c.Rename(t.Context(), "b", "x", 0))
			must(c.Flush(t.Context()))
			st.Close()
			c2, st2 := reopen(t, nodeStores[s].open, dir, session.Options{})
			defer st2.Close()
			if got := val(t, c2, "x/c"); got != "node" {
				t.Fatalf("x/c after the flush = %q, want node", got)
			}
			if a, b := mustStat(t, c2, "p"), mustStat(t, c2, "x/c"); a.Ino != b.Ino || a.Nlink != 2 {
				t.Errorf("p and x/c: inos %d %d, nlink %d", a.Ino, b.Ino, a.Nlink)
			}
		})
	}
}

// ln a b; flush; another program writes the node through b; rm b;
// flush: the store keeps b (their change), a is saved as a node of its
// own and the store's node is kept beside it; the store's group (b and
// that copy) is another node's now, so b, applied from the store as the
// watcher does, must not join a. The two-writer model's seed 1228 (dir,
// with links) found a, b and the copy one node in the session, and a a
// node of its own in the store.
func TestLinksSavedAloneLeavesTheGroup(t *testing.T) {
	c, st, dir := storedA(t, true)
	f, err := os.OpenFile(filepath.Join(dir, "b"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("theirs"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("b"); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	es, err := st.Load(t.Context(), "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.External().Apply(es[0]); err != nil {
		t.Fatal(err)
	}
	if v := val(t, c, "a"); v != "A" {
		t.Errorf("a: %q, want A", v)
	}
	if s, err := c.Stat("a"); err != nil || s.Nlink != 1 {
		t.Errorf("a: %+v, %v; want one name, as in the store", s, err)
	}
	if v := val(t, c, "b"); v != "theirs" {
		t.Errorf("b: %q, want theirs", v)
	}
}

// Another program links a to b; the session, which has not seen it,
// writes b and flushes: the store keeps their b beside as a conflict
// copy, still a name of a's node, and the session must hold a and the
// copy as one node, as the store does (the store reports no change of
// a). The two-writer model's seed 1555 (dir, with links) found them two
// nodes in the session, one in the store.
func TestLinksKeptCopyJoinsTheLinkedName(t *testing.T) {
	c, _, dir := storedA(t, false)
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("b", []byte("ours")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	var copyKey string
	for _, k := range c.Keys() {
		if strings.HasPrefix(k, "b.conflict-") {
			copyKey = k
		}
	}
	if copyKey == "" {
		t.Fatalf("no conflict copy of b in the session: %v", c.Keys())
	}
	sa, erra := c.Stat("a")
	sc, errc := c.Stat(copyKey)
	if erra != nil || errc != nil || sa.Ino != sc.Ino || sa.Nlink != 2 {
		t.Errorf("a %+v (%v) and %s %+v (%v): want one node of two names, as in the store", sa, erra, copyKey, sc, errc)
	}
	if v := val(t, c, "b"); v != "ours" {
		t.Errorf("b: %q, want ours", v)
	}
}

// ln a b; flush; the session chowns the node while another program sets
// an attribute on it (through a): the session's flush of the group must
// not drop their attribute. A node with several names has no ctime in
// its version (removing a name moves it), so the directory store saved a
// group whatever it held: the two-writer model's seeds 14457 and 14541
// (dir, with links) found another program's chmod and setxattr undone.
func TestLinkedSaveKeepsTheirAttributes(t *testing.T) {
	c, st, dir := storedA(t, true)
	uid, mode := uint32(1001), fs.FileMode(0o600)
	if _, err := c.SetAttr(t.Context(), "a", session.Attr{UID: &uid, Mode: &mode}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Lsetxattr(filepath.Join(dir, "a"), "user.memfs.tags", []byte("theirs"), 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	ls, err := st.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range ls {
		found = found || string(e.Info.XAttrs["user.memfs.tags"]) == "theirs"
	}
	if !found {
		t.Errorf("their attribute is gone from the store: %+v", ls)
	}
	for _, e := range ls {
		if (e.Key == "a" || e.Key == "b") && (e.Info.Mode.Perm() != 0o600 || e.Info.UID != 1001 || e.Info.Link == "") {
			t.Errorf("%s in the store: %v, owner %d, link %q; want the session's -rw------- 1001, two names", e.Key, e.Info.Mode, e.Info.UID, e.Info.Link)
		}
	}
}

// storedA is a session over a new directory store (dir) that has saved
// a, with value A, and b as its second name when linked.
func storedA(t *testing.T, linked bool) (c *session.Context, st backend.Store, dir string) {
	t.Helper()
	dir = t.TempDir()
	c, st = reopen(t, nodeStores[0].open, dir, session.Options{})
	t.Cleanup(func() { st.Close() })
	if err := c.Set("a", []byte("A")); err != nil {
		t.Fatal(err)
	}
	if linked {
		if err := c.Link(t.Context(), "a", "b"); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c, st, dir
}

// Another program links a to b while the session's flush of a change of
// a (a chown) is under way: b joins a's node in the session (a name of a
// node with unflushed changes), and the name the node gained during the
// flush is saved by the next one, never left out of the store while the
// session holds it clean. The two-writer model's seed 50010 (dir, with
// links) found a and b one node in the session, two in the store.
func TestLinksNameJoinedDuringAFlush(t *testing.T) {
	dir := t.TempDir()
	ds, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	var during func()
	st := errorstore.Wrap(ds, func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpSave && during != nil {
			f := during
			during = nil
			f()
		}
		return nil
	})
	c := session.NewContext(st, session.Options{})
	if err := c.Bootstrap(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("a", []byte("A")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	apply := func(k string) {
		es, err := ds.Load(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.External().Apply(es[0]); err != nil {
			t.Fatal(err)
		}
	}
	apply("a") // a is of the store's group now; b is not seen yet
	uid, gid := uint32(1001), uint32(1002)
	if _, err := c.SetAttr(t.Context(), "a", session.Attr{UID: &uid, GID: &gid}); err != nil {
		t.Fatal(err)
	}
	during = func() { apply("b") }
	for range 2 {
		if err := c.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	sa, erra := c.Stat("a")
	sb, errb := c.Stat("b")
	if erra != nil || errb != nil || sa.Ino != sb.Ino || sb.UID != uid {
		t.Fatalf("session: a %+v (%v), b %+v (%v); want one node of uid %d", sa, erra, sb, errb, uid)
	}
	var fa, fb unix.Stat_t
	if err := unix.Lstat(filepath.Join(dir, "a"), &fa); err != nil {
		t.Fatal(err)
	}
	if err := unix.Lstat(filepath.Join(dir, "b"), &fb); err != nil {
		t.Fatal(err)
	}
	if fa.Ino != fb.Ino || fb.Uid != uid {
		t.Errorf("store: a ino %d uid %d, b ino %d uid %d; want one node of uid %d, as the session holds", fa.Ino, fa.Uid, fb.Ino, fb.Uid, uid)
	}
}

// A flush whose caller gave up (a signal interrupted an fsync, and the
// kernel the request) logs no store refusal: nothing was refused, and
// what stays dirty is saved by the next flush. TestPosixNameReuse failed
// on such a line once (the Go runtime's preemption signal).
func TestFlushGivenUpByItsCallerIsNoFailure(t *testing.T) {
	var log bytes.Buffer
	dir := t.TempDir()
	c, st := reopen(t, nodeStores[0].open, dir, session.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	t.Cleanup(func() { st.Close() })
	if err := c.Set("memory/a.md", []byte("A")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Flush(ctx); err == nil {
		t.Fatal("a flush with its context canceled succeeded")
	}
	if strings.Contains(log.String(), "level=ERROR") || strings.Contains(log.String(), "refused") {
		t.Errorf("a flush its caller gave up logged a failure:\n%s", log.String())
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v := val(t, c, "memory/a.md"); v != "A" {
		t.Errorf("memory/a.md: %q", v)
	}
}

// ln a b; flush; rm b and chmod a, unflushed: the store's a, still of two
// names, is memfs's own earlier save coming back, not another writer's
// change to merge (which put back a narrower mode: found by this stop's
// second review).
func TestLinksOwnSaveBackAfterUnflushedUnlink(t *testing.T) {
	c, st, _ := storedA(t, true)
	if err := c.Delete("b"); err != nil {
		t.Fatal(err)
	}
	mode := fs.FileMode(0o666)
	if _, err := c.SetAttr(t.Context(), "a", session.Attr{Mode: &mode}); err != nil {
		t.Fatal(err)
	}
	es, err := st.Load(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if es[0].Info.Link == "" {
		t.Fatal("the store's a has one name")
	}
	if !c.External().Echo("a", es[0].Info) {
		t.Error("memfs's own save of a, of two names, is taken for another writer's change")
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s, err := c.Stat("a"); err != nil || s.Mode.Perm() != 0o666 {
		t.Errorf("a: %v, %v; want 0666", s.Mode, err)
	}
}
