package extwatch_test

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/extwatch"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/session"
)

// linkedRig is a directory store whose other program makes hard links,
// watched by a session: what the two-writer model's `ln` rounds need.
type linkedRig struct {
	dir  string
	st   *dirstore.Store
	c    *session.Context
	seen *processed
}

func startLinkedRig(t *testing.T) *linkedRig {
	t.Helper()
	r := &linkedRig{dir: t.TempDir(), seen: newProcessed()}
	st, err := dirstore.Open(r.dir)
	must(t, err)
	t.Cleanup(func() { st.Close() })
	r.st = st
	lg := slog.New(slog.NewTextHandler(tlogWriter{t, "s"}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.c = session.NewContext(st, session.Options{Logger: lg})
	must(t, r.c.Bootstrap(t.Context(), ""))
	w, err := extwatch.Start(st, r.c, extwatch.Options{Debounce: 10 * time.Millisecond, Logger: lg,
		OnProcessed: func(k string) { r.seen.add(k, ctimeOf(filepath.Join(r.dir, k))) }})
	must(t, err)
	t.Cleanup(func() { w.Close() })
	return r
}

// linked has the session write value to a, link a to b and flush, and
// waits until the watcher saw both names come back.
func (r *linkedRig) linked(t *testing.T, a, b, value string) {
	t.Helper()
	must(t, r.c.Set(a, []byte(value)))
	must(t, r.c.Link(t.Context(), a, b))
	must(t, r.c.Flush(t.Context()))
	r.settled(t, a)
	r.settled(t, b)
}

// settled waits until the watcher processed key as the store holds it now.
func (r *linkedRig) settled(t *testing.T, key string) {
	t.Helper()
	if !r.seen.wait(key, ctimeOf(filepath.Join(r.dir, key)), 5*time.Second) {
		t.Fatalf("the watcher did not process %s", key)
	}
}

// same fails t unless the session and the store hold the same nodes
// within 5 s (the watcher takes what it saw in).
func (r *linkedRig) same(t *testing.T) string {
	t.Helper()
	var vs, vd string
	if !await.Cond(5*time.Second, 10*time.Millisecond, func() bool {
		vs, vd = sessionView(t, r.c), storeView(t, r.st)
		return vs == vd
	}) {
		t.Fatalf("the session and the store differ after a flush:\nsession: %s\nstore:   %s", vs, vd)
	}
	return vd
}

// Another program links one name (n2.md) over another that the session
// has unflushed changes to (n3.md, which it removed first): their node is
// kept beside as a conflict copy, a node of its own, not one more name of
// n2.md's node in the session (which the store never made); the session's
// later change of n2.md and its flush then leave the session and the
// store equal, with one conflict copy. The two-writer model's seed 24
// (dir, full) found the session with a copy the store lacked and two
// copies of one conflict.
func TestTheirLinkOverOurDirtyName(t *testing.T) {
	r := startLinkedRig(t)
	must(t, r.c.Set("n2.md", []byte("theirs\n")))
	must(t, r.c.Set("n3.md", []byte("ours\n")))
	must(t, r.c.Flush(t.Context()))
	must(t, r.c.Set("n3.md", []byte("ours again\n")))

	must(t, os.Remove(filepath.Join(r.dir, "n3.md")))
	must(t, os.Link(filepath.Join(r.dir, "n2.md"), filepath.Join(r.dir, "n3.md")))
	r.settled(t, "n3.md")
	var copies []string
	for _, k := range r.c.Keys() {
		if strings.HasPrefix(k, "n3.conflict-") {
			copies = append(copies, k)
		}
	}
	if len(copies) != 1 {
		t.Fatalf("conflict copies of n3.md in the session: %v, want one", copies)
	}
	if st, err := r.c.Stat(copies[0]); err != nil || st.Nlink != 1 {
		t.Fatalf("the conflict copy %s: %+v, %v; want a node of its own (one link)", copies[0], st, err)
	}
	uid, gid := uint32(1001), uint32(1001)
	_, err := r.c.SetAttr(t.Context(), "n2.md", session.Attr{UID: &uid, GID: &gid})
	must(t, err)
	must(t, r.c.Flush(t.Context()))
	vd := r.same(t)
	if n := strings.Count(vd, "n3.conflict-"); n != 1 {
		t.Fatalf("%d conflict copies of n3.md in the store, want 1:\n%s", n, vd)
	}
}

// The session links two names and flushes; another program then writes
// the node in place through one of them (the store's node has both
// names): the session must show the write under both, as the store does.
// The store names the group itself (a directory store: by its inode), so
// the session must know the group by the store's name after its save, not
// take the write for another node under one of its names. The two-writer
// model's seed 42 (dir, full) found the other name with the older value.
func TestTheirWriteThroughOurLink(t *testing.T) {
	r := startLinkedRig(t)
	r.linked(t, "n2.md", "n1.md", "ours\n")

	writeInPlace(t, filepath.Join(r.dir, "n1.md"), "theirs\n")
	r.settled(t, "n1.md")
	for _, k := range []string{"n1.md", "n2.md"} {
		must(t, r.c.Resolve(t.Context(), k))
		if v, _ := r.c.Get(k); string(v) != "theirs\n" {
			t.Errorf("%s in the session: %q, want their write through n1.md", k, v)
		}
	}
	must(t, r.c.Flush(t.Context()))
	r.same(t)
}

// Another program links a file of the store (n3.md) to a name where the
// session has an unflushed symlink (n2.md): the session's flush gives the
// symlink the name and keeps their node beside (a conflict copy, which is
// still n3.md's node in the store): the session must hold that copy and
// n3.md as one node, as the store does. The two-writer model's seed 58
// (dir, full) found them two nodes in the session.
func TestTheirLinkOverOurUnflushedSymlink(t *testing.T) {
	r := startLinkedRig(t)
	must(t, r.c.Set("n3.md", []byte("theirs\n")))
	must(t, r.c.Flush(t.Context()))
	r.settled(t, "n3.md")
	must(t, r.c.Symlink(t.Context(), "n2.md", "n1.md", 0, 0))

	must(t, os.Link(filepath.Join(r.dir, "n3.md"), filepath.Join(r.dir, "n2.md")))
	r.settled(t, "n2.md")
	must(t, r.c.Flush(t.Context()))
	var ck string
	for _, k := range mustList(t, r.st) {
		if strings.HasPrefix(k.Key, "n2.conflict-") {
			ck = k.Key
		}
	}
	if ck == "" {
		t.Fatalf("no conflict copy of n2.md in the store:\n%s", storeView(t, r.st))
	}
	r.settled(t, ck)
	r.same(t)
}

// The session writes one name of a node that another program linked
// (n3.md, with n2.md), and the program then writes the node in place
// through both names: the program's last value must survive the
// session's flush, under a name or as a conflict copy, beside the
// session's. The two-writer model's seed 2205 (dir, with links) ended
// with both names holding the session's value and the program's gone;
// its first fix, two identical conflict copies, one per name.
func TestTheirWritesThroughALinkAroundOurWrite(t *testing.T) {
	r := startLinkedRig(t)
	p2, p3 := filepath.Join(r.dir, "n2.md"), filepath.Join(r.dir, "n3.md")
	must(t, os.WriteFile(p2, []byte("first\n"), 0o644))
	r.settled(t, "n2.md")
	must(t, os.Link(p2, p3))
	r.settled(t, "n3.md")
	must(t, r.c.Set("n3.md", []byte("ours\n")))
	writeInPlace(t, p2, "theirs 1\n")
	writeInPlace(t, p3, "theirs 2\n")
	r.settled(t, "n2.md")
	r.settled(t, "n3.md")
	must(t, r.c.Flush(t.Context()))
	vd := r.same(t)
	for _, want := range []string{"ours\n", "theirs 2\n"} {
		if !strings.Contains(vd, fmt.Sprintf("%q", want)) {
			t.Errorf("%q is lost:\n%s", want, vd)
		}
	}
	// One change of the node, seen under each of its names: one copy.
	if n := strings.Count(vd, ".conflict-"); n != 1 {
		t.Errorf("%d conflict copies, want 1:\n%s", n, vd)
	}
}

// Another program links a file the session has unflushed changes to
// (n3.md, chowned) to a new name (n1.md), then sets an attribute
// through the old name: the session holds the two names apart (its n3.md
// is dirty), but the change is the stored node's, under both names; after
// the session's flush, which saves n3.md as a node of its own, n1.md
// must show it, as the store's does. The two-writer model's seed 1825
// (dir, with links) found n1.md's attributes as before.
func TestTheirChangeThroughANameWeHoldApart(t *testing.T) {
	r := startLinkedRig(t)
	must(t, r.c.Set("n3.md", []byte("x\n")))
	must(t, r.c.Flush(t.Context()))
	r.settled(t, "n3.md")
	uid, gid := uint32(1001), uint32(1002)
	_, err := r.c.SetAttr(t.Context(), "n3.md", session.Attr{UID: &uid, GID: &gid})
	must(t, err)
	p3 := filepath.Join(r.dir, "n3.md")
	must(t, os.Link(p3, filepath.Join(r.dir, "n1.md")))
	r.settled(t, "n1.md")
	r.settled(t, "n3.md") // the look at the listing a new group asks for
	must(t, unix.Lsetxattr(p3, "user.memfs.tags", []byte("theirs"), 0))
	r.settled(t, "n3.md")
	must(t, r.c.Flush(t.Context()))
	vd := r.same(t)
	if !strings.Contains(vd, `n1.md -rw-r--r-- 0:0`) || !strings.Contains(vd, `"theirs"`) {
		t.Errorf("n1.md should hold their attribute:\n%s", vd)
	}
}

// Another program writes a node in place through one of its two names
// and removes that name at once: the store reports a change of that name
// only, and the other name must show their write. The two-writer model's
// seed 12307 (dir, with links) found the other name with the older value.
func TestTheirWriteThenRemoveOfOneName(t *testing.T) {
	r := startLinkedRig(t)
	r.linked(t, "n1.md", "n2.md", "ours\n")
	p1 := filepath.Join(r.dir, "n1.md")
	writeInPlace(t, p1, "theirs\n")
	must(t, os.Remove(p1))
	vd := r.same(t)
	if !strings.Contains(vd, `n2.md -rw-r--r-- 0:0`) || !strings.Contains(vd, `"theirs\n"`) {
		t.Errorf("n2.md should hold their write:\n%s", vd)
	}
}

// Two names the session holds as one node with unflushed changes are the
// store's two nodes now (another program replaced one), and both changed
// with one size and one mtime (two writes within a tick of the clock):
// each is its own conflict, kept beside, never taken for the other's
// (nor, its size and mtime those of the version the other name's
// conflict left as the node's, for a change of attributes alone). The
// two-writer model's seed 12121 (dir, with links) lost one.
func TestTheirTwoNodesOfOneSizeAndTime(t *testing.T) {
	r := startLinkedRig(t)
	r.linked(t, "n1.md", "n2.md", "x\n")
	must(t, r.c.Set("n1.md", []byte("ours\n")))
	p1, p2 := filepath.Join(r.dir, "n1.md"), filepath.Join(r.dir, "n2.md")
	mt := time.Unix(1700000000, 0)
	writeInPlace(t, p1, "their a\n")
	must(t, os.Chtimes(p1, mt, mt))
	r.settled(t, "n1.md")
	tmp := filepath.Join(r.dir, ".n2.tmp")
	must(t, os.WriteFile(tmp, []byte("their b\n"), 0o644))
	must(t, os.Chtimes(tmp, mt, mt))
	must(t, os.Rename(tmp, p2))
	r.settled(t, "n2.md")
	must(t, r.c.Flush(t.Context()))
	vd := r.same(t)
	for _, want := range []string{"ours\n", "their a\n", "their b\n"} {
		if !strings.Contains(vd, fmt.Sprintf("%q", want)) {
			t.Errorf("%q is lost:\n%s", want, vd)
		}
	}
}

// writeInPlace writes v over the file at p, as another program's
// truncating write does: the node (and every name of it) keeps its inode.
func writeInPlace(t *testing.T, p, v string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	must(t, err)
	_, err = f.WriteString(v)
	must(t, err)
	must(t, f.Close())
}

// Another program sets the times of a linked node through one name, then
// renames another file over that name before the watcher took the change
// in: the node's other name keeps the times they set. The watcher saw
// the name hold another node, and the session's node under it lost that
// name (two-writer model, seed 31088, dir with links).
func TestTheirUtimesThenRenameOverOneName(t *testing.T) {
	r := startLinkedRig(t)
	r.linked(t, "n1.md", "n3.md", "x\n")
	must(t, r.c.Set("n2.md", []byte("two\n")))
	must(t, r.c.Flush(t.Context()))
	r.settled(t, "n2.md")
	p2, p3 := filepath.Join(r.dir, "n2.md"), filepath.Join(r.dir, "n3.md")
	mt := time.Unix(1700000017, 0)
	must(t, os.Chtimes(p3, mt, mt))
	must(t, os.Rename(p2, p3))
	vd := r.same(t)
	if !strings.Contains(vd, "n1.md -rw-r--r-- 0:0 1700000017") {
		t.Errorf("n1.md should have the times set through n3.md:\n%s", vd)
	}
}

// The session chmods a linked node, flushes, and another program chmods
// it back to the mode memfs wrote before: their mode is a change of
// theirs, not an echo of memfs's own earlier version (a linked node's
// version has no ctime to tell the two apart). Two-writer model, seeds
// 14457 and 14541 (dir, with links).
func TestTheirChmodBackOfALinkedNode(t *testing.T) {
	r := startLinkedRig(t)
	r.linked(t, "n2.md", "n3.md", "x\n")
	mode := fs.FileMode(0o600)
	_, err := r.c.SetAttr(t.Context(), "n2.md", session.Attr{Mode: &mode})
	must(t, err)
	must(t, r.c.Flush(t.Context()))
	r.settled(t, "n2.md")
	p3 := filepath.Join(r.dir, "n3.md")
	must(t, os.Chmod(p3, 0o644))
	r.settled(t, "n3.md")
	vd := r.same(t)
	if !strings.Contains(vd, "n3.md -rw-r--r--") {
		t.Errorf("n3.md should have their mode:\n%s", vd)
	}
}

// Another program links a stored file (n3.md) to a name the session
// holds with unflushed changes of its own (n1.md: kept, theirs beside),
// then chmods the node through that name, and the session flushes (before
// or after the watcher sees the chmod): the session's n3.md, a name of
// that node, takes the mode, and the session and the store agree
// (two-writer model, seed 50775, dir with links).
func TestTheirChmodThroughALinkOverOurDirtyName(t *testing.T) {
	for _, settle := range []bool{true, false} {
		t.Run(fmt.Sprintf("settled=%v", settle), func(t *testing.T) {
			r := startLinkedRig(t)
			must(t, r.c.Set("n3.md", []byte("three\n")))
			must(t, r.c.Flush(t.Context()))
			r.settled(t, "n3.md")
			must(t, r.c.Set("n1.md", []byte("ours\n")))
			p1, p3 := filepath.Join(r.dir, "n1.md"), filepath.Join(r.dir, "n3.md")
			must(t, os.Link(p3, p1))
			must(t, unix.Lsetxattr(p3, "user.memfs.tags", []byte("o21"), 0))
			r.settled(t, "n1.md")
			r.settled(t, "n3.md")
			must(t, os.Chmod(p1, 0o600))
			if settle {
				r.settled(t, "n1.md")
			}
			must(t, r.c.Flush(t.Context()))
			vd := r.same(t)
			if !strings.Contains(vd, "n3.md -rw------- ") {
				t.Errorf("n3.md should have their chmod's mode:\n%s", vd)
			}
		})
	}
}

// Another program renames a file the session holds (n1.md) to a new name
// and links it back under the old one: the store's one node of two names
// is one node in the session too (two-writer model, seed 61535, dir with
// links).
func TestTheirRenameThenLinkBack(t *testing.T) {
	for _, wasLinked := range []bool{false, true} {
		t.Run(fmt.Sprintf("wasLinked=%v", wasLinked), func(t *testing.T) { theirRenameThenLinkBack(t, wasLinked) })
	}
}

// theirRenameThenLinkBack is TestTheirRenameThenLinkBack; wasLinked: the
// node had another name before, which both removed.
func theirRenameThenLinkBack(t *testing.T, wasLinked bool) {
	r := startLinkedRig(t)
	if wasLinked {
		r.linked(t, "n1.md", "n2.md", "one\n")
		must(t, os.Remove(filepath.Join(r.dir, "n2.md")))
		must(t, r.c.Delete("n2.md"))
		must(t, r.c.Flush(t.Context()))
		r.same(t)
	} else {
		must(t, r.c.Set("n1.md", []byte("one\n")))
		must(t, r.c.Flush(t.Context()))
		r.settled(t, "n1.md")
	}
	p1, p3 := filepath.Join(r.dir, "n1.md"), filepath.Join(r.dir, "n3.md")
	must(t, os.Rename(p1, p3))
	must(t, os.Link(p3, p1))
	r.same(t)
}

// One change another program makes through one name of a linked node
// whose other name the session changed is one conflict copy, whether the
// flush or the watcher meets it first.
func TestTheirWriteThroughALinkIsOneCopy(t *testing.T) {
	for _, settle := range []bool{true, false} {
		t.Run(fmt.Sprintf("settled=%v", settle), func(t *testing.T) {
			r := startLinkedRig(t)
			r.linked(t, "n1.md", "n2.md", "x\n")
			must(t, r.c.Set("n1.md", []byte("ours\n")))
			writeInPlace(t, filepath.Join(r.dir, "n2.md"), "theirs\n")
			if settle {
				r.settled(t, "n2.md")
			}
			must(t, r.c.Flush(t.Context())) // unsettled: the flush may meet their change first
			r.settled(t, "n2.md")
			must(t, r.c.Flush(t.Context()))
			vd := r.same(t)
			if n := strings.Count(vd, `"theirs\n"`); n != 1 {
				t.Errorf("their write is in %d copies, want 1:\n%s", n, vd)
			}
		})
	}
}

// The session renames one name of a linked node (n3.md) over another
// file (n2.md) and changes the node; another program writes through its
// other name (n1.md): their write is kept, and the file the session
// renamed over is replaced knowingly, never kept beside as if another
// writer had changed it (found by this stop's second review: the
// version their write left was taken for every name of the session's
// node, the renamed one's too).
func TestTheirWriteThroughALinkOfANodeRenamedOverAFile(t *testing.T) {
	r := startLinkedRig(t)
	r.linked(t, "n1.md", "n3.md", "x\n")
	must(t, r.c.Set("n2.md", []byte("XXXX\n")))
	must(t, r.c.Flush(t.Context()))
	r.settled(t, "n2.md")
	must(t, r.c.Rename(t.Context(), "n3.md", "n2.md", 0))
	must(t, r.c.Set("n1.md", []byte("ours\n")))
	writeInPlace(t, filepath.Join(r.dir, "n1.md"), "theirs\n")
	r.settled(t, "n1.md")
	must(t, r.c.Flush(t.Context()))
	vd := r.same(t)
	// Their write also stays under the name the session renamed away
	// (its delete meets their change): a second copy, nothing lost.
	if !strings.Contains(vd, `"theirs\n"`) || strings.Contains(vd, `"XXXX\n"`) {
		t.Errorf("want their write kept and the renamed-over file gone:\n%s", vd)
	}
}
