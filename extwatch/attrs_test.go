package extwatch_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/extwatch"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/session"
)

// Every attribute is part of a version (issue 26, finding 1): another
// writer's change of a node's metadata alone (mode, owner, extended
// attributes), and the directories and symlinks it makes, reach the
// session live, and the session's next save of the node keeps them.

// stateOf is the part of key's session state these tests look at.
func stateOf(c *session.Context, key string) (fs.FileMode, uint32, string, bool) {
	st, err := c.Stat(key)
	if err != nil {
		return 0, 0, "", false
	}
	tag, _ := c.XAttrs().Get(key, "user.memfs.tags")
	return st.Mode, st.UID, string(tag), true
}

func TestExternalMetadataReachesTheSession(t *testing.T) {
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, k := range []string{"memory/f.md", "memory/x.sh", "memory/g.md"} {
		if err := st.Save(t.Context(), backend.Entry{Key: k, Value: []byte(k + "\n"), Info: backend.Info{Mode: 0o644}}); err != nil {
			t.Fatal(err)
		}
	}
	c := session.NewContext(st, session.Options{})
	if err := c.Bootstrap(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	w, err := extwatch.Start(st, c, extwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := func(k string) string { return filepath.Join(dir, filepath.FromSlash(k)) }

	// Another program: chmod 600, chmod +x, setfattr, mkdir, symlink.
	must(t, os.Chmod(p("memory/f.md"), 0o600))
	must(t, os.Chmod(p("memory/x.sh"), 0o755))
	must(t, unix.Setxattr(p("memory/g.md"), "user.memfs.tags", []byte("ops"), 0))
	must(t, os.Mkdir(p("memory/sub"), 0o700))
	must(t, os.Symlink("f.md", p("memory/link")))

	waitFor(t, "chmod 600", func() bool { m, _, _, _ := stateOf(c, "memory/f.md"); return m.Perm() == 0o600 })
	waitFor(t, "chmod +x", func() bool { m, _, _, _ := stateOf(c, "memory/x.sh"); return m.Perm() == 0o755 })
	waitFor(t, "setfattr", func() bool { _, _, tag, _ := stateOf(c, "memory/g.md"); return tag == "ops" })
	waitFor(t, "mkdir", func() bool { s, err := c.Stat("memory/sub"); return err == nil && s.IsDir && s.Mode.Perm() == 0o700 })
	waitFor(t, "symlink", func() bool {
		target, err := c.Readlink(t.Context(), "memory/link")
		return err == nil && target == "f.md"
	})

	// The session's next save of each keeps what the other program set.
	for _, k := range []string{"memory/f.md", "memory/x.sh", "memory/g.md"} {
		must(t, c.Set(k, []byte("ours "+k+"\n")))
	}
	must(t, c.Flush(t.Context()))
	fi, err := os.Stat(p("memory/f.md"))
	must(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("f.md after the session's save: %v, want -rw------- (another program's chmod reverted)", fi.Mode())
	}
	fi, err = os.Stat(p("memory/x.sh"))
	must(t, err)
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("x.sh after the session's save: %v, want -rwxr-xr-x", fi.Mode())
	}
	buf := make([]byte, 64)
	n, err := unix.Getxattr(p("memory/g.md"), "user.memfs.tags", buf)
	if err != nil || string(buf[:n]) != "ops" {
		t.Errorf("g.md's user.memfs.tags after the session's save: %q, %v; want \"ops\"", buf[:max(n, 0)], err)
	}
	for _, e := range mustList(t, st) {
		if strings.Contains(e.Key, ".conflict-") {
			t.Errorf("conflict copy %s: a metadata change of a clean file is no conflict", e.Key)
		}
	}
}

func mustList(t *testing.T, st backend.Store) []backend.Entry {
	t.Helper()
	es, err := st.List(t.Context())
	must(t, err)
	return es
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Two sessions over one etcd namespace, each following the other's
// changes: a chmod, chown and setxattr flushed by A reach B.
func TestSharedMetadataReachesTheOtherSession(t *testing.T) {
	srv := etcdtest.Start(t)
	open := func() *etcdstore.Store {
		st, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "shared"})
		must(t, err)
		t.Cleanup(func() { st.Close() })
		return st
	}
	sa, sb := open(), open()
	for _, k := range []string{"f.md", "g.md", "h.md"} {
		must(t, sa.Save(t.Context(), backend.Entry{Key: k, Value: []byte(k + "\n"), Info: backend.Info{Mode: 0o644}}))
	}
	start := func(st *etcdstore.Store) *session.Context {
		c, err := session.New(st, session.Options{OnConflict: session.KeepBoth})
		must(t, err)
		must(t, c.Bootstrap(t.Context(), ""))
		w, err := extwatch.Start(st, c, extwatch.Options{})
		must(t, err)
		t.Cleanup(func() { w.Close() })
		return c
	}
	a, b := start(sa), start(sb)
	mode := fs.FileMode(0o600)
	_, err := a.SetAttr(t.Context(), "f.md", session.Attr{Mode: &mode})
	must(t, err)
	nobody := uint32(65534)
	_, err = a.SetAttr(t.Context(), "g.md", session.Attr{UID: &nobody})
	must(t, err)
	must(t, a.XAttrs().Set(t.Context(), "h.md", "user.memfs.tags", []byte("ops"), 0))
	must(t, a.Flush(t.Context()))

	waitFor(t, "A's chmod on B", func() bool { m, _, _, _ := stateOf(b, "f.md"); return m.Perm() == 0o600 })
	waitFor(t, "A's chown on B", func() bool { _, uid, _, _ := stateOf(b, "g.md"); return uid == nobody })
	waitFor(t, "A's setxattr on B", func() bool { _, _, tag, _ := stateOf(b, "h.md"); return tag == "ops" })
	// B's own flush afterwards reverts nothing and copies nothing.
	must(t, b.Set("other.md", []byte("b\n")))
	must(t, b.Flush(t.Context()))
	for _, e := range mustList(t, sb) {
		if strings.Contains(e.Key, ".conflict-") {
			t.Errorf("conflict copy %s after B's flush", e.Key)
		}
		switch e.Key {
		case "f.md":
			if e.Info.Mode.Perm() != 0o600 {
				t.Errorf("f.md in the store: %v, want 0600", e.Info.Mode)
			}
		case "g.md":
			if e.Info.UID != nobody {
				t.Errorf("g.md in the store: uid %d, want %d", e.Info.UID, nobody)
			}
		}
	}
}

// Both sides changed one file: the session its value (unflushed), another
// writer its metadata alone. The flush keeps both by the documented rule
// (the most restrictive mode, their attributes beside ours): no conflict
// copy, and their chmod is not reverted.
func TestMetadataOfADirtyFile(t *testing.T) {
	t.Run("dir", func(t *testing.T) {
		dir := t.TempDir()
		st, err := dirstore.Open(dir)
		must(t, err)
		defer st.Close()
		must(t, st.Save(t.Context(), backend.Entry{Key: "f.md", Value: []byte("base\n"), Info: backend.Info{Mode: 0o664}}))
		c := session.NewContext(st, session.Options{})
		must(t, c.Bootstrap(t.Context(), ""))
		w, err := extwatch.Start(st, c, extwatch.Options{})
		must(t, err)
		defer w.Close()
		must(t, c.Set("f.md", []byte("ours\n")))
		p := filepath.Join(dir, "f.md")
		must(t, unix.Setxattr(p, "user.memfs.tags", []byte("theirs"), 0))
		must(t, os.Chmod(p, 0o640))
		waitFor(t, "their chmod in the session", func() bool { m, _, _, _ := stateOf(c, "f.md"); return m.Perm() == 0o640 })
		must(t, c.Flush(t.Context()))
		checkMerged(t, st, 0o640)
	})
	t.Run("etcd", func(t *testing.T) {
		srv := etcdtest.Start(t)
		open := func() *etcdstore.Store {
			st, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "dirty"})
			must(t, err)
			t.Cleanup(func() { st.Close() })
			return st
		}
		sa, sb := open(), open()
		must(t, sa.Save(t.Context(), backend.Entry{Key: "f.md", Value: []byte("base\n"), Info: backend.Info{Mode: 0o664}}))
		start := func(st *etcdstore.Store) *session.Context {
			c, err := session.New(st, session.Options{OnConflict: session.KeepBoth})
			must(t, err)
			must(t, c.Bootstrap(t.Context(), ""))
			return c
		}
		a, b := start(sa), start(sb)
		must(t, b.Set("f.md", []byte("ours\n")))
		mode := fs.FileMode(0o640)
		_, err := a.SetAttr(t.Context(), "f.md", session.Attr{Mode: &mode})
		must(t, err)
		must(t, a.XAttrs().Set(t.Context(), "f.md", "user.memfs.tags", []byte("theirs"), 0))
		must(t, a.Flush(t.Context()))
		must(t, b.Flush(t.Context()))
		checkMerged(t, sb, 0o640)
	})
}

func checkMerged(t *testing.T, st backend.Store, mode fs.FileMode) {
	t.Helper()
	for _, e := range mustList(t, st) {
		if strings.Contains(e.Key, ".conflict-") {
			t.Errorf("conflict copy %s: a metadata change is merged, not kept beside", e.Key)
		}
	}
	got, err := st.Load(t.Context(), "f.md")
	must(t, err)
	e := got[0]
	if string(e.Value) != "ours\n" || e.Info.Mode.Perm() != mode || string(e.Info.XAttrs["user.memfs.tags"]) != "theirs" {
		t.Errorf("f.md in the store: %q, %v, tags %q; want ours, %v, their tags", e.Value, e.Info.Mode, e.Info.XAttrs["user.memfs.tags"], mode)
	}
}

// A directory another program removes from a directory store leaves the
// session: an empty one, and one with a file in it.
func TestExternalRmdirReachesTheSession(t *testing.T) {
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	must(t, err)
	defer st.Close()
	must(t, st.Save(t.Context(), backend.Entry{Key: "memory/full/f.md", Value: []byte("f\n"), Info: backend.Info{Mode: 0o644}}))
	must(t, st.Save(t.Context(), backend.Entry{Key: "memory/empty", Info: backend.Info{Mode: fs.ModeDir | 0o755}}))
	c := session.NewContext(st, session.Options{})
	must(t, c.Bootstrap(t.Context(), ""))
	w, err := extwatch.Start(st, c, extwatch.Options{})
	must(t, err)
	defer w.Close()
	must(t, os.Remove(filepath.Join(dir, "memory/empty")))
	must(t, os.RemoveAll(filepath.Join(dir, "memory/full")))
	gone := func(k string) bool { _, err := c.Stat(k); return err != nil }
	waitFor(t, "the empty directory gone", func() bool { return gone("memory/empty") })
	waitFor(t, "the full directory gone", func() bool { return gone("memory/full/f.md") && gone("memory/full") })
	// The session's next flush brings neither back.
	must(t, c.Set("memory/other.md", []byte("o\n")))
	must(t, c.Flush(t.Context()))
	for _, k := range []string{"memory/empty", "memory/full"} {
		if _, err := os.Lstat(filepath.Join(dir, k)); !os.IsNotExist(err) {
			t.Errorf("%s in the store after the session's flush: %v; want it gone", k, err)
		}
	}
}
