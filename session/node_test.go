package session_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/session"
)

// nodeStores opens a store of each kind in dir.
var nodeStores = []struct {
	name string
	open func(dir string) (backend.Store, error)
}{
	{"dir", func(dir string) (backend.Store, error) { return dirstore.Open(dir) }},
	{"badger", func(dir string) (backend.Store, error) { return badgerstore.Open(dir, badgerstore.Options{}) }},
}

var (
	tAtime = time.Date(2020, 1, 2, 3, 4, 5, 6000, time.UTC)
	tMtime = time.Date(2021, 6, 7, 8, 9, 10, 11000, time.UTC)
)

// makeNodes makes one node of every kind in c.
func makeNodes(t *testing.T, c *session.Context) {
	t.Helper()
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Mkdir("empty", 0o700, 1, 2))
	must(c.Mkdir("sticky", fs.ModeSticky|0o777, 0, 0))
	must(c.Mkdir("sgid", fs.ModeSetgid|0o2775&0o777, 0, 5))
	must(c.XAttrs().Set(ctx, "empty", "user.note", []byte("dir attr"), 0))
	must(c.Set(".git/HEAD", []byte("ref: refs/heads/main\n")))
	must(c.Set("bin/tool", []byte("#!/bin/sh\n")))
	mode := fs.ModeSetuid | 0o755
	if _, err := c.SetAttr(ctx, "bin/tool", session.Attr{Mode: &mode, ATime: &tAtime, MTime: &tMtime}); err != nil {
		t.Fatal(err)
	}
	must(c.Symlink(ctx, "bin/link", "../.git/HEAD", 0, 0))
	must(c.Symlink(ctx, "bin/abs", "/etc/passwd", 0, 0))
	must(c.MakeNode(ctx, "bin/fifo", fs.ModeNamedPipe|0o600, 0, 0, 0))
	must(c.MakeNode(ctx, "bin/sock", fs.ModeSocket|0o755, 0, 0, 0))
	must(c.MakeNode(ctx, "bin/null", fs.ModeDevice|fs.ModeCharDevice|0o666, 0x0103, 0, 0))
	must(c.Set("memory/a.md", []byte("shared")))
	must(c.Link(ctx, "memory/a.md", "bin/a-link"))
	must(c.Link(ctx, "memory/a.md", "sticky/a3"))
	zero := fs.FileMode(0)
	must(c.Set("memory/zero", []byte("z")))
	if _, err := c.SetAttr(ctx, "memory/zero", session.Attr{Mode: &zero}); err != nil {
		t.Fatal(err)
	}
}

// checkNodes checks what makeNodes made, in a session that may be new.
func checkNodes(t *testing.T, c *session.Context) {
	t.Helper()
	checkDirNodes(t, c)
	checkSpecialNodes(t, c)
	checkLinkedNodes(t, c)
}

// nodeStat is c.Stat(key), which must succeed.
func nodeStat(t *testing.T, c *session.Context, key string) session.Stat {
	t.Helper()
	st, err := c.Stat(key)
	if err != nil {
		t.Fatalf("Stat(%s): %v", key, err)
	}
	return st
}

// checkDirNodes checks makeNodes' directories.
func checkDirNodes(t *testing.T, c *session.Context) {
	t.Helper()
	ctx := t.Context()
	stat := func(key string) session.Stat { t.Helper(); return nodeStat(t, c, key) }
	if st := stat("empty"); !st.IsDir || st.Mode != fs.ModeDir|0o700 || st.UID != 1 || st.GID != 2 || st.Nlink != 2 {
		t.Errorf("empty: %+v", st)
	}
	if v, err := c.XAttrs().Get("empty", "user.note"); err != nil || string(v) != "dir attr" {
		t.Errorf("empty's xattr = %q, %v", v, err)
	}
	if st := stat("sticky"); st.Mode != fs.ModeDir|fs.ModeSticky|0o777 {
		t.Errorf("sticky: %v", st.Mode)
	}
	if st := stat("sgid"); st.Mode != fs.ModeDir|fs.ModeSetgid|0o775 || st.GID != 5 {
		t.Errorf("sgid: %v %d", st.Mode, st.GID)
	}
	if st := stat(""); st.Nlink != 2+6 { // empty sticky sgid .git bin memory
		t.Errorf("root nlink = %d, want 8", st.Nlink)
	}
	if v, ok := c.Get(".git/HEAD"); ok && string(v) != "ref: refs/heads/main\n" {
		t.Errorf(".git/HEAD = %q", v)
	}
	if err := c.Resolve(ctx, ".git/HEAD"); err != nil {
		t.Errorf(".git/HEAD: %v", err)
	}
}

// checkSpecialNodes checks makeNodes' special files: setuid, symlinks,
// fifo, socket, device, mode 0.
func checkSpecialNodes(t *testing.T, c *session.Context) {
	t.Helper()
	ctx := t.Context()
	stat := func(key string) session.Stat { t.Helper(); return nodeStat(t, c, key) }
	st := stat("bin/tool")
	if st.Mode != fs.ModeSetuid|0o755 || !st.ATime.Equal(tAtime) || !st.MTime.Equal(tMtime) || !st.CTime.After(tMtime) {
		t.Errorf("bin/tool: mode %v atime %v mtime %v ctime %v", st.Mode, st.ATime, st.MTime, st.CTime)
	}
	for key, want := range map[string]string{"bin/link": "../.git/HEAD", "bin/abs": "/etc/passwd"} {
		if got, err := c.Readlink(ctx, key); err != nil || got != want {
			t.Errorf("Readlink(%s) = %q, %v", key, got, err)
		}
		if st := stat(key); st.Mode.Type() != fs.ModeSymlink || st.Size != int64(len(want)) {
			t.Errorf("%s: %v size %d", key, st.Mode, st.Size)
		}
	}
	if st := stat("bin/fifo"); st.Mode != fs.ModeNamedPipe|0o600 {
		t.Errorf("fifo: %v", st.Mode)
	}
	if st := stat("bin/sock"); st.Mode != fs.ModeSocket|0o755 {
		t.Errorf("socket: %v", st.Mode)
	}
	if st := stat("bin/null"); st.Mode != fs.ModeDevice|fs.ModeCharDevice|0o666 || st.Rdev != 0x0103 {
		t.Errorf("device: %v rdev %#x", st.Mode, st.Rdev)
	}
	if st := stat("memory/zero"); st.Mode != 0 {
		t.Errorf("mode 0 file: %v", st.Mode)
	}
}

// checkLinkedNodes checks makeNodes' hard links: one node, and a write
// through one name shows through the others.
func checkLinkedNodes(t *testing.T, c *session.Context) {
	t.Helper()
	ctx := t.Context()
	stat := func(key string) session.Stat { t.Helper(); return nodeStat(t, c, key) }
	a, b, s3 := stat("memory/a.md"), stat("bin/a-link"), stat("sticky/a3")
	if a.Ino != b.Ino || a.Ino != s3.Ino || a.Nlink != 3 {
		t.Errorf("hard links: inos %d %d %d, nlink %d", a.Ino, b.Ino, s3.Ino, a.Nlink)
	}
	// A write through one name shows through the others.
	h, err := c.Open(ctx, "bin/a-link")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("SHARED"), 0); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if err := c.Resolve(ctx, "sticky/a3"); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get("sticky/a3"); string(v) != "SHARED" {
		t.Errorf("sticky/a3 after a write through bin/a-link = %q", v)
	}
}

func reopen(t *testing.T, open func(string) (backend.Store, error), dir string, opts session.Options) (*session.Context, backend.Store) {
	t.Helper()
	st, err := open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := session.NewContext(st, opts)
	if err := c.Bootstrap(t.Context(), "memory/"); err != nil {
		t.Fatal(err)
	}
	return c, st
}

// Every node type, attribute and hard link survives a flush and a new
// session over the store.
func TestNodesSurviveReopen(t *testing.T) {
	for _, s := range nodeStores {
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			c, st := reopen(t, s.open, dir, session.Options{})
			makeNodes(t, c)
			checkNodes(t, c)
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			st.Close()
			c2, st2 := reopen(t, s.open, dir, session.Options{})
			defer st2.Close()
			checkNodes(t, c2)
			// The write through a link is flushed under every name.
			if err := c2.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			st2.Close()
			c3, st3 := reopen(t, s.open, dir, session.Options{})
			defer st3.Close()
			for _, k := range []string{"memory/a.md", "bin/a-link", "sticky/a3"} {
				if err := c3.Resolve(t.Context(), k); err != nil {
					t.Fatal(err)
				}
				if v, _ := c3.Get(k); string(v) != "SHARED" {
					t.Errorf("%s = %q after a flush of the write", k, v)
				}
			}
			// Removing names one by one: the node stays with the last.
			if err := c3.Delete("memory/a.md"); err != nil {
				t.Fatal(err)
			}
			if err := c3.Rmdir("empty"); err != nil {
				t.Fatal(err)
			}
			if err := c3.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			st3.Close()
			c4, st4 := reopen(t, s.open, dir, session.Options{})
			defer st4.Close()
			if _, err := c4.Stat("empty"); err == nil {
				t.Error("a removed empty directory came back")
			}
			if _, err := c4.Stat("memory/a.md"); err == nil {
				t.Error("an unlinked name came back")
			}
			x, y := mustStat(t, c4, "bin/a-link"), mustStat(t, c4, "sticky/a3")
			if x.Ino != y.Ino || x.Nlink != 2 {
				t.Errorf("after unlinking one name: inos %d %d nlink %d", x.Ino, y.Ino, x.Nlink)
			}
		})
	}
}

func mustStat(t *testing.T, c *session.Context, key string) session.Stat {
	t.Helper()
	st, err := c.Stat(key)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Every node made before a crash (no flush) comes back from the journal.
func TestNodesReplayFromJournal(t *testing.T) {
	for _, s := range nodeStores {
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			jpath := filepath.Join(t.TempDir(), "journal")
			j, _, err := journal.Open(jpath)
			if err != nil {
				t.Fatal(err)
			}
			c, st := reopen(t, s.open, dir, session.Options{Journal: j})
			makeNodes(t, c)
			// The crash: nothing flushed.
			j.Close()
			st.Close()
			j2, recs, err := journal.Open(jpath)
			if err != nil {
				t.Fatal(err)
			}
			defer j2.Close()
			c2, st2 := reopen(t, s.open, dir, session.Options{Journal: j2})
			defer st2.Close()
			if err := c2.Pending().Replay(recs); err != nil {
				t.Fatal(err)
			}
			if err := c2.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			st2.Close()
			c3, st3 := reopen(t, s.open, dir, session.Options{})
			defer st3.Close()
			checkNodes(t, c3)
		})
	}
}

// A directory replaced by a file, and a file by a directory, in one flush.
func TestTypeChangesInOneFlush(t *testing.T) {
	for _, s := range nodeStores {
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			c, st := reopen(t, s.open, dir, session.Options{})
			if err := c.Set("d/x", []byte("x")); err != nil {
				t.Fatal(err)
			}
			if err := c.Set("f", []byte("f")); err != nil {
				t.Fatal(err)
			}
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete("d/x"); err != nil {
				t.Fatal(err)
			}
			if err := c.Rmdir("d"); err != nil {
				t.Fatal(err)
			}
			if err := c.Set("d", []byte("now a file")); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete("f"); err != nil {
				t.Fatal(err)
			}
			if err := c.Mkdir("f", 0o750, 0, 0); err != nil {
				t.Fatal(err)
			}
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			st.Close()
			c2, st2 := reopen(t, s.open, dir, session.Options{})
			defer st2.Close()
			if st := mustStat(t, c2, "d"); st.IsDir || st.Size != int64(len("now a file")) {
				t.Errorf("d: %+v", st)
			}
			if st := mustStat(t, c2, "f"); !st.IsDir || st.Mode != fs.ModeDir|0o750 {
				t.Errorf("f: %+v", st)
			}
		})
	}
}
