package fsnode_test

import (
	"encoding/json"
	"errors"
	"golang.org/x/sys/unix"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/session"
)

// skipEnv is the one way to skip the mount tests, for machines without
// /dev/fuse. A silent skip would let CI pass without testing the product.
const skipEnv = "MEMFS_SKIP_MOUNT_TESTS"

type mounted struct {
	dir  string
	c    *session.Context
	root *fsnode.Root
}

type mountConfig struct {
	sopts session.Options
	fopts fsnode.Options
	mopts fsnode.MountOptions
}

// mount mounts a session over st under t.TempDir() and unmounts it in
// t.Cleanup (registered after TempDir's, so it runs first).
func mount(t *testing.T, st backend.Store, cfg mountConfig) *mounted {
	t.Helper()
	if os.Getenv(skipEnv) != "" {
		t.Skipf("%s is set: mount tests skipped", skipEnv)
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Fatalf("mount tests need /dev/fuse (%v); install fuse3 or set %s=1 to skip them", err, skipEnv)
	}
	dir := t.TempDir()
	if cfg.sopts.DirUID == 0 {
		cfg.sopts.DirUID, cfg.sopts.DirGID = uint32(os.Getuid()), uint32(os.Getgid())
	}
	c := session.NewContext(st, cfg.sopts)
	if err := c.Bootstrap(t.Context(), "memory/"); err != nil {
		t.Fatal(err)
	}
	root := fsnode.NewRoot(c, cfg.fopts)
	srv, err := fsnode.Mount(dir, root, cfg.mopts)
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	t.Cleanup(func() {
		var err error
		await.Cond(5*time.Second, 100*time.Millisecond, func() bool {
			err = srv.Unmount()
			return err == nil || !errors.Is(err, syscall.EBUSY)
		})
		if err != nil {
			// Never leave a mount behind, even when a test failed with a
			// descriptor still open on it: detach it.
			t.Errorf("unmount %s: %v (detaching it)", dir, err)
			syscall.Unmount(dir, syscall.MNT_DETACH)
		}
		srv.Wait()
		root.Close()
	})
	return &mounted{dir: dir, c: c, root: root}
}

func newDirStore(t *testing.T, dir string) *dirstore.Store {
	t.Helper()
	s, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func seedStore(t *testing.T, st backend.Store, files map[string]string) {
	t.Helper()
	var es []backend.Entry
	for k, v := range files {
		es = append(es, backend.Entry{Key: k, Value: []byte(v), Info: backend.Info{
			Mode: 0o644, MTime: time.Unix(1700000000, 0), UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}})
	}
	if err := st.Save(t.Context(), es...); err != nil {
		t.Fatal(err)
	}
}

var sample = map[string]string{
	"memory/global.md":            "global memory\nremember the milk\n",
	"memory/project/kernel.md":    "kernel notes\n",
	"skills/go/SKILL.md":          "---\nname: go\ndescription: Go patterns\n---\nbody\n",
	"skills/go/resources/ref.txt": "reference",
	"agents/explorer.json":        `{"name":"explorer"}`,
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantErrno(t *testing.T, what string, err error, want syscall.Errno) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got %v, want %v", what, err, want)
	}
}

func TestMountReadPath(t *testing.T) {
	st := newDirStore(t, t.TempDir())
	seedStore(t, st, sample)
	m := mount(t, st, mountConfig{})
	for k, v := range sample {
		p := filepath.Join(m.dir, k)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() != int64(len(v)) || fi.Mode() != 0o644 || !fi.ModTime().Equal(time.Unix(1700000000, 0)) {
			t.Errorf("stat %s = size %d mode %v mtime %v", k, fi.Size(), fi.Mode(), fi.ModTime())
		}
	}
	// stat answered from the index: nothing outside memory/ is loaded yet.
	if _, loaded, _, _ := m.c.Stats().Counts(); loaded != 2 {
		t.Errorf("after stat of every file %d values are loaded, want 2 (memory/ only)", loaded)
	}
	for k, v := range sample {
		if got := readFile(t, filepath.Join(m.dir, k)); got != v {
			t.Errorf("cat %s = %q, want %q", k, got, v)
		}
	}
	ents, err := os.ReadDir(m.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "agents memory skills" { // .memfs is reached by name
		t.Errorf("ls -a of root = %q", got)
	}
	status := readFile(t, filepath.Join(m.dir, ".memfs/status"))
	if !strings.Contains(status, "keys_indexed: 5\n") || !strings.Contains(status, "last_flush: never") {
		t.Errorf(".memfs/status = %q", status)
	}
	wantErrno(t, "write .memfs/status", os.WriteFile(filepath.Join(m.dir, ".memfs/status"), []byte("x"), 0o644), syscall.EPERM)
	wantErrno(t, "create in .memfs", os.WriteFile(filepath.Join(m.dir, ".memfs/new"), []byte("x"), 0o644), syscall.EPERM)
}

func TestMountWriteSemantics(t *testing.T) {
	st := newDirStore(t, t.TempDir())
	seedStore(t, st, sample)
	m := mount(t, st, mountConfig{sopts: session.Options{MaxFileSize: 1 << 20}})
	p := func(k string) string { return filepath.Join(m.dir, k) }

	// create, write past the end, append, truncate
	if err := os.WriteFile(p("memory/new.md"), []byte("hello"), 0o640); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p("memory/new.md"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("!"), 8)
	f.Close()
	f, _ = os.OpenFile(p("memory/new.md"), os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte("+tail"))
	f.Close()
	if got := readFile(t, p("memory/new.md")); got != "hello\x00\x00\x00!+tail" {
		t.Fatalf("content = %q", got)
	}
	if err := os.Truncate(p("memory/new.md"), 2); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p("memory/new.md")); got != "he" {
		t.Fatalf("after truncate = %q", got)
	}
	if err := os.WriteFile(p("memory/new.md"), []byte("O_TRUNC"), 0o640); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p("memory/new.md")); got != "O_TRUNC" {
		t.Fatalf("after O_TRUNC write = %q", got)
	}
	if fi, _ := os.Stat(p("memory/new.md")); fi.Mode() != 0o640 {
		t.Fatalf("mode = %v, want 0640", fi.Mode())
	}
	// exclusive create
	_, err = os.OpenFile(p("memory/new.md"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	wantErrno(t, "O_EXCL on existing", err, syscall.EEXIST)

	// directories
	if err := os.MkdirAll(p("a/b/c"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p("a/b/c/f"), []byte("f"), 0o644)
	wantErrno(t, "rmdir non-empty", syscall.Rmdir(p("a/b")), syscall.ENOTEMPTY)
	wantErrno(t, "rmdir file", syscall.Rmdir(p("a/b/c/f")), syscall.ENOTDIR)
	wantErrno(t, "unlink dir", syscall.Unlink(p("a/b")), syscall.EISDIR)
	wantErrno(t, "mkdir existing", os.Mkdir(p("a"), 0o755), syscall.EEXIST)
	wantErrno(t, "create under file", os.WriteFile(p("a/b/c/f/g"), nil, 0o644), syscall.ENOTDIR)
	wantErrno(t, "open missing", func() error { _, err := os.Open(p("nope")); return err }(), syscall.ENOENT)

	// rename of a directory with open handles inside
	h, err := os.Open(p("a/b/c/f"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p("a/b"), p("moved")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p("moved/c/f")); got != "f" {
		t.Fatalf("after dir rename = %q", got)
	}
	buf := make([]byte, 4)
	if n, _ := h.ReadAt(buf, 0); string(buf[:n]) != "f" {
		t.Fatalf("open handle after rename read %q", buf[:n])
	}
	h.Close()
	// rename over an existing file, with a handle open on the target
	os.WriteFile(p("x"), []byte("x-old"), 0o644)
	os.WriteFile(p("y"), []byte("y-new"), 0o644)
	hx, _ := os.Open(p("x"))
	if err := os.Rename(p("y"), p("x")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p("x")); got != "y-new" {
		t.Fatalf("x after rename-over = %q", got)
	}
	if n, _ := hx.ReadAt(buf, 0); string(buf[:n]) != "x-ol" {
		t.Fatalf("old handle of replaced file read %q", buf[:n])
	}
	hx.Close()

	// unlinked but open stays readable and fstat-able
	os.WriteFile(p("gone"), []byte("still here"), 0o600)
	hg, _ := os.Open(p("gone"))
	if err := os.Remove(p("gone")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 32)
	n, _ := hg.ReadAt(got, 0)
	fi, err := hg.Stat()
	if string(got[:n]) != "still here" || err != nil || fi.Size() != 10 {
		t.Fatalf("unlinked open file: read %q, stat %v %v", got[:n], fi, err)
	}
	hg.Close()

	// errors for bad names and sizes
	wantErrno(t, "long name", os.WriteFile(p(strings.Repeat("n", 256)), nil, 0o644), syscall.ENAMETOOLONG)
	wantErrno(t, "too big", os.WriteFile(p("big"), make([]byte, 1<<20+1), 0o644), syscall.EFBIG)
	wantErrno(t, "hard link to a directory", os.Link(p(""), p("dir2")), syscall.EPERM)
	wantErrno(t, "symlink over an existing name", os.Symlink("x", p("x")), syscall.EEXIST)
	wantErrno(t, "symlink with a target longer than PATH_MAX", os.Symlink(strings.Repeat("t", 4096), p("sym")), syscall.ENAMETOOLONG)
	_, err = syscall.Getxattr(p("x"), "user.foo", make([]byte, 64))
	wantErrno(t, "getxattr of an unset attribute", err, syscall.ENODATA)
}

func TestMountRenameFlags(t *testing.T) {
	m := mount(t, newDirStore(t, t.TempDir()), mountConfig{})
	a, b := filepath.Join(m.dir, "a"), filepath.Join(m.dir, "b")
	os.WriteFile(a, []byte("A"), 0o644)
	os.WriteFile(b, []byte("B"), 0o644)
	wantErrno(t, "RENAME_NOREPLACE", renameat2(a, b, 1), syscall.EEXIST)
	if err := renameat2(a, b, 2); err != nil {
		t.Fatalf("RENAME_EXCHANGE: %v", err)
	}
	if readFile(t, a) != "B" || readFile(t, b) != "A" {
		t.Fatalf("after exchange a=%q b=%q", readFile(t, a), readFile(t, b))
	}
	if err := renameat2(a, filepath.Join(m.dir, "c"), 1); err != nil {
		t.Fatalf("RENAME_NOREPLACE to a free name: %v", err)
	}
}

func renameat2(from, to string, flags uint) error {
	return unixRenameat2(from, to, flags)
}

func TestMountPersistsAttributesAcrossRemount(t *testing.T) {
	dir := t.TempDir()
	var mt = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	func() {
		st, err := dirstore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		t.Run("write", func(t *testing.T) {
			m := mount(t, st, mountConfig{})
			p := filepath.Join(m.dir, "skills/tool/run.sh")
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(p, 1234, 5678); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, mt, mt); err != nil {
				t.Fatal(err)
			}
			f, _ := os.Open(p)
			if err := f.Sync(); err != nil {
				t.Fatalf("fsync: %v", err)
			}
			f.Close()
			// fsync made it durable: the store has it now.
			if got, err := st.Load(t.Context(), "skills/tool/run.sh"); err != nil || got[0].Info.Mode != 0o755 {
				t.Fatalf("store after fsync: %v %v", got, err)
			}
		})
	}()
	st := newDirStore(t, dir)
	m := mount(t, st, mountConfig{})
	fi, err := os.Stat(filepath.Join(m.dir, "skills/tool/run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	sys := fi.Sys().(*syscall.Stat_t)
	if fi.Mode() != 0o755 || sys.Uid != 1234 || sys.Gid != 5678 || !fi.ModTime().Equal(mt) {
		t.Fatalf("after remount mode %v owner %d:%d mtime %v", fi.Mode(), sys.Uid, sys.Gid, fi.ModTime())
	}
}

// Transient editor files live in the session only; the rest, dotfiles
// included, reach the store.
func TestMountTransientNamesStayInSession(t *testing.T) {
	st := newDirStore(t, t.TempDir())
	m := mount(t, st, mountConfig{})
	os.MkdirAll(filepath.Join(m.dir, "memory"), 0o755)
	swp := filepath.Join(m.dir, "memory/.note.md.swp")
	if err := os.WriteFile(swp, []byte("swap"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(m.dir, "memory/note.md"), []byte("note"), 0o644)
	f, _ := os.Open(swp)
	f.Sync()
	f.Close()
	if got := readFile(t, swp); got != "swap" {
		t.Fatalf("hidden file reads %q", got)
	}
	os.WriteFile(filepath.Join(m.dir, "memory/.dotfile"), []byte("dot"), 0o644)
	f, _ = os.Open(filepath.Join(m.dir, "memory/note.md"))
	f.Sync()
	f.Close()
	l, err := st.List(t.Context())
	var keys []string
	for _, e := range l {
		keys = append(keys, e.Key)
	}
	if err != nil || !slices.Equal(keys, []string{"memory", "memory/.dotfile", "memory/note.md"}) {
		t.Fatalf("store lists %v (%v), want memory, memory/.dotfile and memory/note.md", keys, err)
	}
}

func TestMountFsyncFailureIsEIOAndKeepsData(t *testing.T) {
	base := newDirStore(t, t.TempDir())
	st := errorstore.Wrap(base, nil)
	m := mount(t, st, mountConfig{})
	p := filepath.Join(m.dir, "note.md")
	if err := os.WriteFile(p, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	st.SetInject(func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpSave {
			return errors.New("injected: disk full")
		}
		return nil
	})
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wantErrno(t, "fsync over a failing store", f.Sync(), syscall.EIO)
	if got := readFile(t, p); got != "precious" {
		t.Fatalf("after failed fsync the file reads %q", got)
	}
	if st, _ := m.c.Stat("note.md"); !st.Dirty {
		t.Fatal("after failed fsync the file is not dirty")
	}
	st.SetInject(nil)
	if err := f.Sync(); err != nil {
		t.Fatalf("fsync after the store recovered: %v", err)
	}
	if got, err := base.Load(t.Context(), "note.md"); err != nil || string(got[0].Value) != "precious" {
		t.Fatalf("store after recovery: %v %v", got, err)
	}
}

func TestMountKernelCacheKeptAndInvalidated(t *testing.T) {
	st := newDirStore(t, t.TempDir())
	seedStore(t, st, sample)
	// Long kernel timeouts: what the test sees within its 2 s deadline
	// comes from invalidation, not from expiry.
	m := mount(t, st, mountConfig{fopts: fsnode.Options{AttrTimeout: time.Minute, EntryTimeout: time.Minute}})
	p := filepath.Join(m.dir, "memory/global.md")
	readFile(t, p)
	before := m.root.Reads()
	for range 3 {
		if got := readFile(t, p); got != sample["memory/global.md"] {
			t.Fatalf("read %q", got)
		}
	}
	if after := m.root.Reads(); after != before {
		t.Errorf("re-reading an unchanged file sent %d READs to memfs, want 0 (page cache kept)", after-before)
	}
	// A change behind the kernel (the session changed by another path,
	// as an external edit of a dir store does) must show at once.
	s := filepath.Join(m.dir, "memory/pw.md")
	if err := os.WriteFile(s, []byte("the first version, rather long\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readFile(t, s)                                 // the kernel now caches these pages
	if err := m.c.Flush(t.Context()); err != nil { // clean: an external change is no conflict
		t.Fatal(err)
	}
	want := "second, shorter\n"
	behind := func(v string) {
		t.Helper()
		e := backend.Entry{Key: "memory/pw.md", Value: []byte(v), Info: backend.Info{Mode: 0o644, MTime: time.Now()}}
		if _, err := m.c.External().Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	behind(want)
	var got string
	if !await.Cond(2*time.Second, 10*time.Millisecond, func() bool { got = readFile(t, s); return got == want }) {
		t.Fatalf("after a change behind the kernel, the mount shows %q, want %q", got, want)
	}
	if fi, _ := os.Stat(s); fi.Size() != int64(len(want)) {
		t.Fatalf("size after the change = %d, want %d", fi.Size(), len(want))
	}
	// A descriptor that stays open sees the change too: that needs the
	// kernel notification, not just a fresh open.
	h, err := os.Open(s)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	buf := make([]byte, 100)
	h.ReadAt(buf, 0)
	want = "third\n"
	behind(want)
	var n int
	if !await.Cond(2*time.Second, 10*time.Millisecond, func() bool { n, _ = h.ReadAt(buf, 0); return string(buf[:n]) == want }) {
		t.Fatalf("an open descriptor reads %q after a change behind the kernel, want %q", buf[:n], want)
	}
}

func TestMountChangeFeed(t *testing.T) {
	m := mount(t, newDirStore(t, t.TempDir()), mountConfig{})
	feed := filepath.Join(m.dir, ".memfs/changes")
	f, err := os.Open(feed)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	os.Mkdir(filepath.Join(m.dir, "memory"), 0o755)
	os.WriteFile(filepath.Join(m.dir, "memory/a.md"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(m.dir, "memory/.a.md.swp"), []byte("swap"), 0o644) // hidden: not in the feed
	os.Rename(filepath.Join(m.dir, "memory/a.md"), filepath.Join(m.dir, "memory/b.md"))
	os.Remove(filepath.Join(m.dir, "memory/b.md"))
	// Read the way tail -f does: on from where the last read ended.
	var lines []string
	buf := make([]byte, 4096)
	await.Cond(2*time.Second, 10*time.Millisecond, func() bool { // fewer lines show below
		n, _ := f.Read(buf)
		for l := range strings.SplitSeq(strings.TrimSpace(string(buf[:n])), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
		return len(lines) >= 5
	})
	var got []string
	for _, l := range lines {
		var r struct{ Op, Key, Old_key, Origin string }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("feed line %q: %v", l, err)
		}
		got = append(got, r.Op+" "+r.Old_key+" "+r.Key+" "+r.Origin)
	}
	want := []string{"mkdir  memory mount", "create  memory/a.md mount", "write  memory/a.md mount",
		"rename memory/a.md memory/b.md mount", "remove  memory/b.md mount"}
	if !slices.Equal(got, want) {
		t.Fatalf("feed =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if fi, _ := os.Stat(feed); fi.Size() == 0 {
		t.Fatal("the feed reports size 0")
	}
	wantErrno(t, "write the feed", os.WriteFile(feed, []byte("x"), 0o644), syscall.EPERM)
}

// fallocate(KEEP_SIZE), the external-change helper's touch, changes
// nothing: not a byte, not the size, and the file stays clean.
func TestMountFallocateKeepSizeChangesNothing(t *testing.T) {
	m := mount(t, newDirStore(t, t.TempDir()), mountConfig{})
	p := filepath.Join(m.dir, "note.md")
	os.WriteFile(p, []byte("version 15\n"), 0o644)
	m.c.Flush(t.Context())
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{0, 1}, {0, 100}, {50, 10}} {
		if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, r[0], r[1]); err != nil {
			t.Fatalf("fallocate(KEEP_SIZE, %d, %d): %v", r[0], r[1], err)
		}
	}
	f.Close()
	if got := readFile(t, p); got != "version 15\n" {
		t.Fatalf("fallocate(KEEP_SIZE) changed the file: %q", got)
	}
	if st, _ := m.c.Stat("note.md"); st.Dirty {
		t.Fatal("fallocate(KEEP_SIZE) made the file dirty")
	}
}

// Directory listings are cached by the kernel (FOPEN_CACHE_DIR and
// KEEP_CACHE): a change through the mount shows at once, and a change made
// behind the kernel (in the session only, as an external change or a
// conflict copy is) shows once the directory's attributes are refreshed,
// within the attribute timeout.
func TestMountDirListingCache(t *testing.T) {
	m := mount(t, newDirStore(t, t.TempDir()), mountConfig{fopts: fsnode.Options{AttrTimeout: 200 * time.Millisecond, EntryTimeout: 200 * time.Millisecond}})
	d := filepath.Join(m.dir, "memory")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	names := func() string {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return strings.Join(n, " ")
	}
	os.WriteFile(filepath.Join(d, "a.md"), []byte("a"), 0o644)
	if got := names(); got != "a.md" {
		t.Fatalf("after create: %q", got)
	}
	os.WriteFile(filepath.Join(d, "b.md"), []byte("b"), 0o644)
	os.Remove(filepath.Join(d, "a.md"))
	if got := names(); got != "b.md" {
		t.Fatalf("a change through the mount is not listed at once: %q", got)
	}
	// The change behind gives the directory a later mtime than the
	// kernel's: the clock must have passed it.
	fi, err := os.Stat(d)
	if err != nil {
		t.Fatal(err)
	}
	await.Cond(time.Second, time.Millisecond, func() bool { return time.Now().After(fi.ModTime()) })
	if err := m.c.Set("memory/behind.md", []byte("set in the session")); err != nil {
		t.Fatal(err)
	}
	if !await.Cond(3*time.Second, 50*time.Millisecond, func() bool { return names() == "b.md behind.md" }) {
		t.Fatalf("a change behind the kernel is not listed within 3 s: %q", names())
	}
}
