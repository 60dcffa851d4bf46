package dirstore_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
)

func node(key string, mode fs.FileMode, value string) backend.Entry {
	e := entry(key, value)
	if value == "" {
		e.Value = nil
	}
	e.Info.Mode = mode
	return e
}

func listed(t *testing.T, s *dirstore.Store) map[string]backend.Entry {
	t.Helper()
	es, err := s.List(t.Context())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	m := map[string]backend.Entry{}
	for _, e := range es {
		m[e.Key] = e
	}
	return m
}

// within fails the test if fn does not return within a few seconds: a
// store that opened a fifo would block forever.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s blocked (did it open a fifo?)", what)
	}
}

// List reports every node as itself, dotfiles included, and never enters
// a symlink; only memfs's own names stay out.
func TestListEveryNode(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret"), "outside")
	s := openT(t, dir)
	save(t, s, entry("a/real.md", "1"), entry("real", "2"))

	writeFile(t, filepath.Join(dir, ".git/config"), "[core]")
	writeFile(t, filepath.Join(dir, "a/.x.swp"), "swap")
	writeFile(t, filepath.Join(dir, ".memfs-tmp-crashed"), "left by a crash")
	writeFile(t, filepath.Join(dir, "a/.memfs-tmp-crashed2"), "left by a crash")
	symlink(t, "real", filepath.Join(dir, "link-in"))
	symlink(t, outside, filepath.Join(dir, "a/link-out"))
	symlink(t, "a", filepath.Join(dir, "link-dir-in"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "empty/dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	var got []string
	within(t, "List", func() { got = listKeys(t, s) })
	want := []string{".git", ".git/config", "a", "a/.x.swp", "a/link-out", "a/real.md", "empty", "empty/dir", "fifo", "link-dir-in", "link-in", "real"}
	if !slices.Equal(got, want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
	m := listed(t, s)
	for k, typ := range map[string]fs.FileMode{"a": fs.ModeDir, "a/link-out": fs.ModeSymlink, "fifo": fs.ModeNamedPipe, "real": 0} {
		if m[k].Info.Mode.Type() != typ {
			t.Errorf("%s: mode %v, want type %v", k, m[k].Info.Mode, typ)
		}
	}
	if got := m["a/link-out"].Info.Size; got != int64(len(outside)) {
		t.Errorf("symlink size %d, want the target's length %d", got, len(outside))
	}
	if got := m["fifo"].Info.Mode.Perm(); got != 0o640 {
		t.Errorf("fifo perm %v, want 0640", got)
	}
}

// A symlink on a key's path is never followed, to a directory inside the
// root or outside it: Save fails naming the key, Load finds nothing,
// Delete removes nothing through it, List does not enter it. The link
// itself is a key like any other.
func TestSymlinkInPathNeverFollowed(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "x"), "outside")
	s := openT(t, dir)
	save(t, s, entry("memory/x", "inside"), node("skills/out", fs.ModeSymlink|0o777, outside), node("skills/in", fs.ModeSymlink|0o777, "../memory"))

	for _, link := range []string{"skills/out", "skills/in"} {
		t.Run(link, func(t *testing.T) {
			k := link + "/x"
			err := s.Save(t.Context(), entry(k, "through the link"))
			if err == nil || !errors.Is(err, syscall.ENOTDIR) || !strings.Contains(err.Error(), k) {
				t.Errorf("Save(%s) = %v, want ENOTDIR naming the key", k, err)
			}
			for _, deep := range []string{k, link + "/new/deeper"} {
				if err := s.Save(t.Context(), entry(deep, "x"), entry("ok/"+deep, "y")); err == nil {
					t.Errorf("Save(%s) in a batch succeeded", deep)
				}
			}
			if _, err := s.Load(t.Context(), k); !errors.Is(err, backend.ErrKeyNotFound) || !errors.Is(err, syscall.ENOTDIR) {
				t.Errorf("Load(%s) = %v, want ErrKeyNotFound and ENOTDIR", k, err)
			}
			if _, err := s.Stat(t.Context(), k); !errors.Is(err, backend.ErrKeyNotFound) {
				t.Errorf("Stat(%s) = %v, want ErrKeyNotFound", k, err)
			}
			if err := s.Delete(t.Context(), k); err != nil {
				t.Errorf("Delete(%s) = %v, want nil (not in the store)", k, err)
			}
			// The link itself loads as its target.
			got, err := s.Load(t.Context(), link)
			if err != nil || got[0].Info.Mode.Type() != fs.ModeSymlink || got[0].Info.Size != int64(len(got[0].Value)) {
				t.Errorf("Load(%s) = %+v, %v; want the symlink", link, got, err)
			}
		})
	}
	for _, p := range []string{filepath.Join(outside, "x"), filepath.Join(dir, "memory/x")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v; want it untouched", p, err)
		}
	}
	if got := tree(t, outside); !slices.Equal(got, []string{"x"}) {
		t.Errorf("outside holds %v, want only x", got)
	}
	if got := tree(t, filepath.Join(dir, "memory")); !slices.Equal(got, []string{"x"}) {
		t.Errorf("memory holds %v, want only x", got)
	}
	for _, k := range listKeys(t, s) {
		if strings.HasPrefix(k, "skills/out/") || strings.HasPrefix(k, "skills/in/") {
			t.Errorf("List entered a symlink: %s", k)
		}
	}
	// A symlink that replaces a directory after the store opened it is
	// not followed either: Delete and Save each resolve anew.
	if err := os.RemoveAll(filepath.Join(dir, "memory")); err != nil {
		t.Fatal(err)
	}
	symlink(t, outside, filepath.Join(dir, "memory"))
	if err := s.Delete(t.Context(), "memory/x"); err != nil {
		t.Errorf("Delete(memory/x) = %v", err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "x")); err != nil {
		t.Errorf("Delete removed a file through a symlink: %v", err)
	}
	// Deleting the link removes the link, not its target.
	if err := s.Delete(t.Context(), "memory", "skills/out"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "x")); err != nil {
		t.Errorf("Delete of a symlink removed its target's content: %v", err)
	}
}

// Fifos, sockets and devices are kept and listed; Load never opens one.
func TestSpecialNodes(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	es := []backend.Entry{
		node("p/fifo", fs.ModeNamedPipe|0o620, ""),
		node("p/sock", fs.ModeSocket|0o755, ""),
	}
	if os.Geteuid() == 0 {
		null := node("dev/null", fs.ModeDevice|fs.ModeCharDevice|0o666, "")
		null.Info.Rdev = 0x103 // 1:3
		loop := node("dev/loop", fs.ModeDevice|0o660, "")
		loop.Info.Rdev = 0x700
		es = append(es, null, loop)
	}
	within(t, "Save", func() { save(t, s, es...) })
	m := listed(t, s)
	for _, e := range es {
		var got []backend.Entry
		var err error
		within(t, "Load "+e.Key, func() { got, err = s.Load(t.Context(), e.Key) })
		if err != nil {
			t.Fatalf("Load(%s): %v", e.Key, err)
		}
		for src, g := range map[string]backend.Entry{"List": m[e.Key], "Load": got[0]} {
			if g.Info.Mode != e.Info.Mode || g.Info.Rdev != e.Info.Rdev || g.Info.Size != 0 || len(g.Value) != 0 {
				t.Errorf("%s %s = mode %v rdev %#x size %d value %q, want mode %v rdev %#x, nothing else",
					src, e.Key, g.Info.Mode, g.Info.Rdev, g.Info.Size, g.Value, e.Info.Mode, e.Info.Rdev)
			}
		}
	}
	// A fifo made behind the store's back, with a writer-less reader
	// nowhere: List, Stat and Load return at once.
	if err := syscall.Mkfifo(filepath.Join(dir, "p/external"), 0o644); err != nil {
		t.Fatal(err)
	}
	within(t, "List, Load and Stat of a fifo", func() {
		listKeys(t, s)
		if _, err := s.Load(t.Context(), "p/external"); err != nil {
			t.Errorf("Load(fifo) = %v", err)
		}
		if _, err := s.Stat(t.Context(), "p/external"); err != nil {
			t.Errorf("Stat(fifo) = %v", err)
		}
	})
	if err := s.Delete(t.Context(), "p/external", "p/fifo"); err != nil {
		t.Fatal(err)
	}
}

// Linux keeps user.* attributes on files and directories only: an entry
// of another type that carries some is refused before anything is written.
func TestXAttrsOnlyOnFilesAndDirs(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	for _, typ := range []fs.FileMode{fs.ModeSymlink, fs.ModeNamedPipe, fs.ModeSocket} {
		value := ""
		if typ == fs.ModeSymlink {
			value = "target"
		}
		e := node("x", typ|0o644, value)
		e.Info.XAttrs = map[string][]byte{"user.a": []byte("1")}
		err := s.Save(t.Context(), entry("first", "1"), e)
		if !errors.Is(err, backend.ErrInvalidXAttr) || !strings.Contains(err.Error(), `"x"`) && !strings.Contains(err.Error(), " x:") {
			t.Errorf("Save of a %s with xattrs = %v, want ErrInvalidXAttr naming the key", backend.TypeName(typ), err)
		}
	}
	if got := listKeys(t, s); len(got) != 0 {
		t.Fatalf("a refused batch wrote %v", got)
	}
	d := node("d", fs.ModeDir|0o750, "")
	d.Info.XAttrs = map[string][]byte{"user.a": []byte("1"), "user.b": []byte("2")}
	save(t, s, d)
	d.Info.XAttrs = map[string][]byte{"user.b": []byte("3")}
	save(t, s, d)
	if got := listed(t, s)["d"].Info.XAttrs; len(got) != 1 || string(got["user.b"]) != "3" {
		t.Errorf("directory xattrs after a second save = %q, want only user.b=3", got)
	}
}

// A hard-link group saved in one call is one inode under every name, and
// List and Load report one Link for all of them.
func TestHardLinkGroup(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	a := entry("a/one", "shared")
	a.Info.Link = "caller's name"
	b := entry("b/two", "shared")
	b.Info.Link = a.Info.Link
	c := entry("a/three", "shared")
	c.Info.Link = a.Info.Link
	solo := entry("solo", "alone")
	for range 2 { // a second save replaces the group with a new node
		save(t, s, a, solo, b, c)
		fa, err := os.Lstat(filepath.Join(dir, "a/one"))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"b/two", "a/three"} {
			fb, err := os.Lstat(filepath.Join(dir, k))
			if err != nil {
				t.Fatal(err)
			}
			if !os.SameFile(fa, fb) {
				t.Errorf("%s is not the same file as a/one", k)
			}
		}
		m := listed(t, s)
		got, err := s.Load(t.Context(), "a/one", "b/two", "a/three", "solo")
		if err != nil {
			t.Fatal(err)
		}
		link := m["a/one"].Info.Link
		if link == "" || m["b/two"].Info.Link != link || m["a/three"].Info.Link != link || m["solo"].Info.Link != "" {
			t.Errorf("List links = %q %q %q %q, want one non-empty name for the group and none for solo",
				link, m["b/two"].Info.Link, m["a/three"].Info.Link, m["solo"].Info.Link)
		}
		for _, e := range got {
			if want := m[e.Key].Info.Link; e.Info.Link != want {
				t.Errorf("Load(%s).Link = %q, List has %q", e.Key, e.Info.Link, want)
			}
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, "a/one")); err != nil || fi.Sys().(*syscall.Stat_t).Nlink != 3 {
		t.Errorf("a/one: %v, %v; want 3 links (the old node's names all replaced)", fi, err)
	}
}

// Directories are entries: their mode (0 too), owner, times and xattrs are
// kept, set after the entries saved into them, and they stay when their
// last key goes.
func TestDirectoryEntries(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a process that is not root cannot save into a directory of mode 0 or give it away")
	}
	dir := t.TempDir()
	s := openT(t, dir)
	mt := time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC)
	d := node("d", fs.ModeDir|fs.ModeSetgid|0o750, "")
	d.Info.MTime, d.Info.UID, d.Info.GID = mt, 1234, 5678
	zero := node("d/zero", fs.ModeDir, "")
	zero.Info.MTime = mt
	save(t, s, entry("d/zero/inside", "x"), d, zero, entry("d/f", "y"))
	m := listed(t, s)
	for _, w := range []backend.Entry{d, zero} {
		g := m[w.Key].Info
		if g.Mode != w.Info.Mode || !g.MTime.Equal(mt) || g.UID != w.Info.UID || g.GID != w.Info.GID {
			t.Errorf("%s = mode %v mtime %v owner %d:%d, want %v %v %d:%d", w.Key, g.Mode, g.MTime, g.UID, g.GID, w.Info.Mode, mt, w.Info.UID, w.Info.GID)
		}
	}
	if _, ok := m["d/zero/inside"]; !ok {
		t.Error("List does not enter a directory of mode 0")
	}
	// Saving over an existing directory applies the attributes in place;
	// what is in it stays.
	d.Info.Mode = fs.ModeDir | 0o700
	save(t, s, d)
	if got := listed(t, s)["d"].Info.Mode; got != d.Info.Mode {
		t.Errorf("d after a second save: mode %v, want %v", got, d.Info.Mode)
	}
	if _, err := s.Load(t.Context(), "d/zero/inside"); err != nil {
		t.Errorf("a directory's save lost what it holds: %v", err)
	}
	// Directories are never pruned; a non-empty one is not deleted, and
	// the error names it; children first works in one call in any order.
	if err := s.Delete(t.Context(), "d/zero/inside"); err != nil {
		t.Fatal(err)
	}
	if _, ok := listed(t, s)["d/zero"]; !ok {
		t.Error("the directory went with its last key")
	}
	err := s.Delete(t.Context(), "d")
	if err == nil || !strings.Contains(err.Error(), "delete d:") {
		t.Errorf("Delete of a non-empty directory = %v, want an error naming it", err)
	}
	if err := s.Delete(t.Context(), "d", "d/zero", "d/f"); err != nil {
		t.Errorf("Delete of a directory and its content: %v", err)
	}
	if got := listKeys(t, s); len(got) != 0 {
		t.Errorf("List = %v, want empty", got)
	}
}

// Owner first, then mode: chown clears setuid and setgid.
func TestSetuidSurvivesChown(t *testing.T) {
	s := openT(t, t.TempDir())
	e := entry("bin/tool", "#!/bin/sh\n")
	e.Info.Mode = fs.ModeSetuid | fs.ModeSetgid | 0o755
	if os.Geteuid() == 0 {
		e.Info.UID, e.Info.GID = 1234, 5678
	}
	save(t, s, e)
	got, err := s.Load(t.Context(), "bin/tool")
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Info.Mode != e.Info.Mode || got[0].Info.UID != e.Info.UID {
		t.Errorf("mode %v owner %d, want %v %d", got[0].Info.Mode, got[0].Info.UID, e.Info.Mode, e.Info.UID)
	}
}

// A key that holds another node type is replaced atomically; a directory
// that holds entries is not, and the error names the key.
func TestTypeChanges(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	save(t, s, entry("f2d", "file"), node("d2f", fs.ModeDir|0o755, ""), node("l2f", fs.ModeSymlink|0o777, "/etc"),
		entry("full/x", "x"), node("f2l", 0o644, "file"))
	// A directory never replaces another node: that file may be another
	// program's. It stays, and the caller deletes it first.
	if err := s.Save(t.Context(), node("f2d", fs.ModeDir|0o700, "")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Save of a directory over a file = %v, want fs.ErrExist", err)
	}
	if got, err := s.Load(t.Context(), "f2d"); err != nil || string(got[0].Value) != "file" {
		t.Fatalf("the file in the directory's way: %v", err)
	}
	if err := s.Delete(t.Context(), "f2d"); err != nil {
		t.Fatal(err)
	}
	save(t, s, node("f2d", fs.ModeDir|0o700, ""), entry("d2f", "now a file"), entry("l2f", "now a file"),
		node("f2l", fs.ModeSymlink|0o777, "f2d"))
	m := listed(t, s)
	for k, typ := range map[string]fs.FileMode{"f2d": fs.ModeDir, "d2f": 0, "l2f": 0, "f2l": fs.ModeSymlink} {
		if m[k].Info.Mode.Type() != typ {
			t.Errorf("%s: mode %v, want type %v", k, m[k].Info.Mode, typ)
		}
	}
	for _, batch := range [][]backend.Entry{{entry("full", "x")}, {entry("ok", "1"), entry("full", "x")}} {
		err := s.Save(t.Context(), batch...)
		if err == nil || !strings.Contains(err.Error(), "save full:") {
			t.Errorf("Save over a directory that holds a key = %v, want an error naming it", err)
		}
		if got, err := s.Load(t.Context(), "full/x"); err != nil || string(got[0].Value) != "x" {
			t.Errorf("full/x after the refused save: %v", err)
		}
	}
	for _, p := range tree(t, dir) {
		if strings.Contains(p, ".memfs-tmp-") {
			t.Errorf("temp node left behind: %s", p)
		}
	}
	// SaveIf meets a directory where it expects a file the same way.
	if _, err := s.SaveIf(t.Context(), []backend.Entry{entry("full", "x")}, []backend.Version{{}}); err == nil {
		t.Error("SaveIf over a directory that holds a key succeeded")
	}
	// An empty directory where nothing was expected keeps its name (it
	// may be another program's): EEXIST, and the caller keeps its file
	// beside it (TestSaveIfKeepsAnotherProgramsEmptyDirectory).
	if _, err := s.SaveIf(t.Context(), []backend.Entry{entry("f2d", "x")}, []backend.Version{{}}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("SaveIf over an empty directory = %v, want EEXIST", err)
	}
	if m := listed(t, s); !m["f2d"].Info.Mode.IsDir() {
		t.Errorf("f2d after the refused SaveIf: mode %v, want the directory kept", m["f2d"].Info.Mode)
	}
}

// Load moves no atime: memfs keeps them.
func TestLoadKeepsATime(t *testing.T) {
	s := openT(t, t.TempDir())
	at := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	f := entry("f", "content")
	f.Info.ATime = at
	l := node("l", fs.ModeSymlink|0o777, "f")
	l.Info.ATime = at
	d := node("d", fs.ModeDir|0o755, "")
	d.Info.ATime = at
	save(t, s, f, l, d, entry("d/x", "x"))
	for range 2 {
		if _, err := s.Load(t.Context(), "f", "l", "d", "d/x"); err != nil {
			t.Fatal(err)
		}
		m := listed(t, s)
		for _, k := range []string{"f", "l", "d"} {
			if got := m[k].Info.ATime; !got.Equal(at) {
				t.Errorf("%s: atime %v after Load and List, want %v", k, got, at)
			}
		}
	}
}

// A file saved where the store holds the symlink or fifo memfs saved
// there, stating that node's version (a name removed and made again as
// another type between flushes, issue 26), replaces it: no conflict copy
// of memfs's own node. Another version of the node is still kept beside.
func TestSaveIfOverOwnSymlinkOrFifo(t *testing.T) {
	s := openT(t, t.TempDir())
	nodes := []backend.Entry{
		{Key: "l", Info: backend.Info{Mode: os.ModeSymlink | 0o777, MTime: time.Unix(1700000000, 0)}, Value: []byte("target")},
		{Key: "p", Info: backend.Info{Mode: os.ModeNamedPipe | 0o644, MTime: time.Unix(1700000000, 0)}},
	}
	if err := s.Save(t.Context(), nodes...); err != nil {
		t.Fatal(err)
	}
	listed, err := s.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	version := map[string]backend.Version{}
	for _, e := range listed {
		version[e.Key] = backend.VersionOf(e.Info)
	}
	for _, k := range []string{"l", "p"} {
		conflicts, err := s.SaveIf(t.Context(), []backend.Entry{entry(k, "file")}, []backend.Version{version[k]})
		if err != nil || len(conflicts) > 0 {
			t.Errorf("SaveIf of a file over the %s it expects: %v, %v; want no conflict", k, conflicts, err)
		}
	}
	// A version it does not expect is kept beside.
	if err := s.Save(t.Context(), backend.Entry{Key: "m", Info: nodes[0].Info, Value: []byte("other")}); err != nil {
		t.Fatal(err)
	}
	conflicts, err := s.SaveIf(t.Context(), []backend.Entry{entry("m", "file")}, []backend.Version{version["l"]})
	if err != nil || len(conflicts) != 1 {
		t.Errorf("SaveIf over a symlink it does not expect: %v, %v; want one conflict", conflicts, err)
	}
}
