package memfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/mountinfo"
	"github.com/memfs/memfs/session"
)

// These tests use the package's API alone, as a program embedding memfs
// would: Open, Mount, Serve, Flush, Close, and plain file calls through the
// kernel on the mountpoint.

func needFUSE(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: %v (mount tests need it)", err)
	}
}

// served is a mount running Serve in a goroutine; stop cancels it and
// waits. The cleanup unmounts even when the test failed early.
type served struct {
	m      *memfs.Mount
	cancel context.CancelFunc
	done   chan struct{} // closed when Serve has returned err
	err    error
}

func serve(t *testing.T, f *memfs.FS, mnt string, mo memfs.MountOptions) *served {
	t.Helper()
	m, err := f.Mount(mnt, mo)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{m: m, cancel: cancel, done: make(chan struct{})}
	go func() {
		s.err = m.Serve(ctx)
		close(s.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	return s
}

func (s *served) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	select {
	case <-s.done:
		if s.err != nil {
			t.Fatal(s.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return 20 s after its context ended")
	}
}

func openBadger(t *testing.T, dir string, ro bool) *memfs.FS {
	t.Helper()
	st, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := memfs.Open(context.Background(), st, memfs.Options{
		JournalPath: filepath.Join(dir, badgerstore.JournalName),
		Bootstrap:   []string{"memory/"},
		Namespace:   true,
		Session:     session.Options{ReadOnly: ro, MaxFileSize: 1 << 20, DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())},
		RecoveryDir: filepath.Join(t.TempDir(), "recovery"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// What is written through one mount (a file, a directory, a symlink, an
// extended attribute, a rename) is what the next mount of the store shows.
func TestMountWriteRemountRead(t *testing.T) {
	needFUSE(t)
	store, mnt := t.TempDir(), t.TempDir()
	f := openBadger(t, store, false)
	s := serve(t, f, mnt, memfs.MountOptions{})
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	for _, d := range memfs.NamespaceDirs() {
		if fi, err := os.Stat(p(d)); err != nil || !fi.IsDir() {
			t.Fatalf("namespace directory %s: %v", d, err)
		}
	}
	if err := os.WriteFile(p("memory/a.md"), []byte("alpha\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p("skills/x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("skills/x/SKILL.md"), []byte("---\nname: x\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../memory/a.md", p("agents/link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(p("memory/a.md"), "user.memfs.tags", []byte("t1"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("memory/old.md"), []byte("renamed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p("memory/old.md"), p("memory/new.md")); err != nil {
		t.Fatal(err)
	}
	s.stop(t)
	if err := f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	f = openBadger(t, store, true)
	s = serve(t, f, mnt, memfs.MountOptions{})
	check := func(rel, want string) {
		t.Helper()
		b, err := os.ReadFile(p(rel))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", rel, b, err, want)
		}
	}
	check("memory/a.md", "alpha\n")
	check("memory/new.md", "renamed\n")
	check("agents/link", "alpha\n") // through the symlink
	if _, err := os.Stat(p("memory/old.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("memory/old.md after the rename: %v, want ErrNotExist", err)
	}
	if fi, err := os.Stat(p("skills/x")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("skills/x: %v %v, want a 0700 directory", fi, err)
	}
	if fi, err := os.Stat(p("memory/a.md")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("memory/a.md: %v %v, want mode 0640", fi, err)
	}
	buf := make([]byte, 64)
	if n, err := unix.Getxattr(p("memory/a.md"), "user.memfs.tags", buf); err != nil || string(buf[:n]) != "t1" {
		t.Errorf("user.memfs.tags = %q, %v; want t1", buf[:max(n, 0)], err)
	}
	// The search index, opened at the first search, finds the note, and
	// the context pack holds the always-loaded memory.
	if b, err := os.ReadFile(p(".memfs/search/alpha")); err != nil || !strings.Contains(string(b), "memory/a.md") {
		t.Errorf(".memfs/search/alpha = %q, %v; want memory/a.md in it", b, err)
	}
	if b, err := os.ReadFile(p(".memfs/context.md")); err != nil || !strings.Contains(string(b), "alpha") {
		t.Errorf(".memfs/context.md = %q, %v; want memory/a.md's value in it", b, err)
	}
	if err := os.WriteFile(p("memory/b.md"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("write on a read-only mount: %v, want EROFS", err)
	}
	s.stop(t)
	if err := f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Flush saves through a live mount: the store holds the value before the
// mount ends.
func TestFlushWhileMounted(t *testing.T) {
	needFUSE(t)
	store, mnt := t.TempDir(), t.TempDir()
	st, err := dirstore.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	f, err := memfs.Open(context.Background(), st, memfs.Options{JournalPath: filepath.Join(store, dirstore.JournalName)})
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, f, mnt, memfs.MountOptions{})
	if err := os.WriteFile(filepath.Join(mnt, "note.md"), []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(store, "note.md")); err == nil {
		t.Fatalf("the store holds %q before any flush: the test cannot tell a flush", b)
	}
	if err := f.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(store, "note.md")); err != nil || string(b) != "v1" {
		t.Fatalf("store after Flush: %q, %v; want v1", b, err)
	}
	s.stop(t)
	if err := f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A busy mountpoint (a file open on it) does not end Serve: it retries
// until the file is closed, and loses nothing.
func TestServeRetriesABusyUnmount(t *testing.T) {
	needFUSE(t)
	store, mnt := t.TempDir(), t.TempDir()
	f := openBadger(t, store, false)
	s := serve(t, f, mnt, memfs.MountOptions{})
	h, err := os.Create(filepath.Join(mnt, "memory", "busy.md"))
	if err != nil {
		t.Fatal(err)
	}
	s.cancel()
	select {
	case <-s.done:
		t.Fatalf("Serve returned (%v) while a file was open on the mount", s.err)
	case <-time.After(500 * time.Millisecond):
	}
	if _, err := h.WriteString("written while unmounting"); err != nil {
		t.Fatal(err)
	}
	if users := mountinfo.MountUsers(mnt); len(users) == 0 || !strings.Contains(strings.Join(users, " "), "("+filepath.Base(os.Args[0])[:min(15, len(filepath.Base(os.Args[0])))]) {
		t.Errorf("Users(%s) = %v, want this test process", mnt, users)
	}
	h.Close()
	select {
	case <-s.done:
		if s.err != nil {
			t.Fatal(s.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not end 20 s after the mountpoint was free")
	}
	if err := f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	f = openBadger(t, store, true)
	defer f.Close(context.Background())
	c := f.Session()
	if err := c.Resolve(context.Background(), "memory/busy.md"); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get("memory/busy.md"); string(v) != "written while unmounting" {
		t.Errorf("memory/busy.md = %q after the retried unmount", v)
	}
}

// Serve returns when the mount is unmounted from outside.
func TestServeEndsOnAnOutsideUnmount(t *testing.T) {
	needFUSE(t)
	store, mnt := t.TempDir(), t.TempDir()
	f := openBadger(t, store, false)
	s := serve(t, f, mnt, memfs.MountOptions{})
	if err := os.WriteFile(filepath.Join(mnt, "memory", "x.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Unmount(mnt, 0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
		if s.err != nil {
			t.Fatal(s.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after umount(2)")
	}
	if err := f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A value the store refuses at Close goes to a recovery directory, named
// by the error: nothing acknowledged is lost. The values it accepts are
// saved.
func TestCloseRecoversWhatTheStoreRefuses(t *testing.T) {
	store := t.TempDir()
	inner, err := dirstore.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	var refuse atomic.Bool
	st := errorstore.Wrap(inner, func(op errorstore.Op, keys []string) error {
		if refuse.Load() && op == errorstore.OpSave && slices.Contains(keys, "bad.md") {
			return syscall.EFBIG
		}
		return nil
	})
	recovery := t.TempDir()
	f, err := memfs.Open(context.Background(), st, memfs.Options{
		JournalPath: filepath.Join(store, dirstore.JournalName), RecoveryDir: recovery,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := f.Session()
	if err := c.Set("good.md", []byte("good")); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("bad.md", []byte("refused")); err != nil {
		t.Fatal(err)
	}
	refuse.Store(true)
	err = f.Close(context.Background())
	if err == nil || !strings.Contains(err.Error(), recovery) {
		t.Fatalf("Close = %v, want an error naming the recovery directory under %s", err, recovery)
	}
	got, _ := filepath.Glob(filepath.Join(recovery, "*", "bad.md"))
	if len(got) != 1 {
		t.Fatalf("recovery holds %v, want one bad.md", got)
	}
	if b, _ := os.ReadFile(got[0]); !bytes.Equal(b, []byte("refused")) {
		t.Errorf("recovered bad.md = %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(store, "good.md")); err != nil || string(b) != "good" {
		t.Errorf("good.md in the store: %q, %v", b, err)
	}
}

// Open refuses what it cannot run with, and closes the store it was given.
func TestOpenRefuses(t *testing.T) {
	store := t.TempDir()
	st, err := dirstore.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := memfs.Open(context.Background(), st, memfs.Options{}); err == nil || !strings.Contains(err.Error(), "JournalPath") {
		t.Fatalf("Open without a journal path: %v", err)
	}
	// The store was closed: it can be opened again (its lock is free).
	st, err = dirstore.Open(store)
	if err != nil {
		t.Fatalf("the store was not closed by the failed Open: %v", err)
	}
	st.Close()
}

// An FS has one mount at a time; Close refuses while it is live, and a
// second Close does nothing.
func TestOneMountAndCloseAfterServe(t *testing.T) {
	needFUSE(t)
	store, mnt, mnt2 := t.TempDir(), t.TempDir(), t.TempDir()
	f := openBadger(t, store, false)
	s := serve(t, f, mnt, memfs.MountOptions{})
	if _, err := f.Mount(mnt2, memfs.MountOptions{}); err == nil || !strings.Contains(err.Error(), "already mounted") {
		t.Errorf("a second Mount: %v, want a refusal", err)
	}
	if err := f.Close(context.Background()); err == nil || !strings.Contains(err.Error(), "still mounted") {
		t.Errorf("Close while mounted: %v, want a refusal", err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "memory", "after.md"), []byte("kept"), 0o644); err != nil {
		t.Fatalf("the mount after the refused Close: %v", err)
	}
	s.stop(t)
	if err := f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(context.Background()); err != nil {
		t.Errorf("a second Close: %v, want nil", err)
	}
	if _, err := f.Mount(mnt2, memfs.MountOptions{}); err == nil {
		t.Error("Mount of a closed FS succeeded")
	}
}

// A mountpoint inside the journal's directory (the store's) is refused:
// memfs would serve its own journal writes.
func TestMountInsideTheStoreRefused(t *testing.T) {
	store := t.TempDir()
	f := openBadger(t, store, false)
	defer f.Close(context.Background())
	inside := filepath.Join(store, "mnt")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Mount(inside, memfs.MountOptions{}); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Fatalf("Mount inside the store: %v, want an overlap refusal", err)
	}
}

// A flush interval under the floor is refused before anything is mounted
// (at 1 ns an idle mount kept 60-77% of a core busy); 0 and the floor
// itself are taken.
func TestMountRefusesATinyFlushInterval(t *testing.T) {
	f := openBadger(t, t.TempDir(), false)
	defer f.Close(context.Background())
	for _, iv := range []time.Duration{time.Nanosecond, memfs.MinFlushInterval - 1, -time.Second} {
		mnt := t.TempDir()
		if m, err := f.Mount(mnt, memfs.MountOptions{FlushInterval: iv}); err == nil || !strings.Contains(err.Error(), "FlushInterval") {
			if err == nil {
				m.Unmount()
			}
			t.Errorf("Mount with FlushInterval %v: %v, want a refusal naming FlushInterval", iv, err)
		}
		if isMountpoint(t, mnt) {
			t.Errorf("FlushInterval %v: %s was mounted", iv, mnt)
		}
	}
}

// isMountpoint reports whether dir is in the mount table.
func isMountpoint(t *testing.T, dir string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), " "+dir+" ")
}

// A writable session without a Redactor redacts with the default rules:
// no secret reaches disk unless NoRedact says so.
func TestRedactionByDefault(t *testing.T) {
	const secret = "ghp_" + "0123456789abcdefghijABCDEFGHIJ012345"
	for _, noRedact := range []bool{false, true} {
		store := t.TempDir()
		st, err := dirstore.Open(store)
		if err != nil {
			t.Fatal(err)
		}
		f, err := memfs.Open(context.Background(), st, memfs.Options{
			JournalPath: filepath.Join(store, dirstore.JournalName), NoRedact: noRedact,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Session().Set("memory/token.md", []byte("token: "+secret+"\n")); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(store, "memory", "token.md"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), secret); got != noRedact {
			t.Errorf("NoRedact %v: the stored value %q holds the secret: %v", noRedact, b, got)
		}
	}
}

// Reindex builds an index of its own: refused once the session's is open.
func TestReindexRefusedOnceTheIndexIsOpen(t *testing.T) {
	store := t.TempDir()
	f := openBadger(t, store, false)
	defer f.Close(context.Background())
	if _, err := f.Reindex(context.Background(), nil); err != nil {
		t.Fatalf("Reindex before any search: %v", err)
	}
	if _, err := f.Search(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Reindex(context.Background(), nil); err == nil {
		t.Error("Reindex with the index open succeeded")
	}
}

// Another writer's change to a store with a change feed (backend.Watcher:
// here a memory store's Other, as another client of a shared store) shows
// in the mount, without a helper process.
func TestAnotherWritersChangeShows(t *testing.T) {
	needFUSE(t)
	st := memstore.New()
	mnt := t.TempDir()
	f, err := memfs.Open(context.Background(), st, memfs.Options{JournalPath: filepath.Join(t.TempDir(), "journal")})
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, f, mnt, memfs.MountOptions{EntryTimeout: -1, AttrTimeout: -1})
	other := st.Other()
	if err := other.Set("memory/theirs.md", []byte("from another agent\n")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(mnt, "memory", "theirs.md")
	var b []byte
	if !await.Cond(10*time.Second, 20*time.Millisecond, func() bool {
		b, err = os.ReadFile(p)
		return err == nil && string(b) == "from another agent\n"
	}) {
		t.Fatalf("another writer's file in the mount: %q, %v after 10 s", b, err)
	}
	if err := other.Remove("memory/theirs.md"); err != nil {
		t.Fatal(err)
	}
	if !await.Cond(10*time.Second, 20*time.Millisecond, func() bool {
		_, err = os.Stat(p)
		return errors.Is(err, os.ErrNotExist)
	}) {
		t.Fatalf("another writer's removal: stat %v, want ErrNotExist", err)
	}
	s.stop(t)
	if err := f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestLockJournal: two FS on one shared store each have a journal; a
// second Open of a journal another FS holds is refused (ErrStoreInUse),
// and the journal is free again once the first is closed.
func TestLockJournal(t *testing.T) {
	journalPath := filepath.Join(t.TempDir(), "state", "journal")
	st := memstore.New()
	opts := memfs.Options{JournalPath: journalPath, LockJournal: true}
	f, err := memfs.Open(context.Background(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = memfs.Open(context.Background(), memstore.New(), opts)
	if !errors.Is(err, backend.ErrStoreInUse) || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Fatalf("second Open of a locked journal: %v, want ErrStoreInUse naming pid %d", err, os.Getpid())
	}
	if err := f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	f2, err := memfs.Open(context.Background(), memstore.New(), opts)
	if err != nil {
		t.Fatalf("Open after the holder closed: %v", err)
	}
	f2.Close(context.Background())
}

// TestPeersInStatus: on a store with Presence, a mount registers itself
// while it serves, .memfs/status lists every live registration (another
// process's too; its odd agent name quoted on one line), and the mount's
// own is withdrawn when Serve returns.
func TestPeersInStatus(t *testing.T) {
	needFUSE(t)
	st := memstore.New()
	mnt := t.TempDir()
	f, err := memfs.Open(context.Background(), st, memfs.Options{JournalPath: filepath.Join(t.TempDir(), "journal")})
	if err != nil {
		t.Fatal(err)
	}
	leave, err := st.Other().Register(context.Background(), backend.Peer{Agent: "evil\nagent", Host: "elsewhere", PID: 42, Mount: "/mnt/x"})
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	s := serve(t, f, mnt, memfs.MountOptions{Agent: "planner"})
	status, err := os.ReadFile(filepath.Join(mnt, ".memfs", "status"))
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	for _, want := range []string{
		"peers: 2\n",
		fmt.Sprintf("peer: planner@%s pid %d %s since ", host, os.Getpid(), mnt),
		`peer: "evil\nagent"@elsewhere pid 42 /mnt/x since `,
	} {
		if !strings.Contains(string(status), want) {
			t.Errorf(".memfs/status lacks %q:\n%s", want, status)
		}
	}
	s.stop(t)
	peers, err := st.Peers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(peers) != 1 || peers[0].PID != 42 {
		t.Errorf("after the unmount the peers are %+v, want only the other process", peers)
	}
	if err := f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Keep-both through a mount: another writer changes a file while a process
// has it open and written; fsync resolves the conflict, the name shows
// theirs, and the open descriptor goes on writing to ours, which is kept
// under the agent's conflict key. user.memfs.rev is the store's revision,
// and read-only.
func TestKeepBothThroughTheMount(t *testing.T) {
	needFUSE(t)
	const key = "memory/n.md"
	mem := memstore.New()
	other := mem.Other()
	if err := other.Set(key, []byte("base\n")); err != nil {
		t.Fatal(err)
	}
	f, err := memfs.Open(context.Background(), mem, memfs.Options{
		JournalPath: filepath.Join(t.TempDir(), "journal"),
		Bootstrap:   []string{"memory/"},
		Session:     session.Options{OnConflict: session.KeepBoth, Agent: "me"},
	})
	if err != nil {
		t.Fatal(err)
	}
	mnt := t.TempDir()
	s := serve(t, f, mnt, memfs.MountOptions{})
	fd, err := os.OpenFile(filepath.Join(mnt, key), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	if _, err := fd.WriteAt([]byte("ours\n"), 0); err != nil {
		t.Fatal(err)
	}
	if err := other.Set(key, []byte("theirs\n")); err != nil {
		t.Fatal(err)
	}
	if err := fd.Sync(); err != nil {
		t.Fatalf("fsync = %v", err)
	}
	if _, err := fd.WriteAt([]byte("more\n"), 5); err != nil {
		t.Fatal(err)
	}
	if err := fd.Sync(); err != nil {
		t.Fatalf("second fsync = %v", err)
	}
	list, err := mem.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var copyKey string
	for _, e := range list {
		if strings.HasPrefix(e.Key, "memory/n.conflict-me-") {
			copyKey = e.Key
		}
	}
	if copyKey == "" {
		t.Fatalf("no conflict copy of ours in the store: %v", list)
	}
	for k, want := range map[string]string{key: "theirs\n", copyKey: "ours\nmore\n"} {
		got, err := mem.Load(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		if string(got[0].Value) != want {
			t.Errorf("store %s = %q; want %q", k, got[0].Value, want)
		}
		// The kernel drops its name of the moved node when the entry
		// notification, sent from a queue, reaches it: until then an
		// open of the name finds the old node and fails (ENOENT).
		var b []byte
		await.Cond(5*time.Second, 20*time.Millisecond, func() bool {
			b, err = os.ReadFile(filepath.Join(mnt, k))
			return err == nil && string(b) == want
		})
		if err != nil || string(b) != want {
			t.Errorf("mount %s = %q, %v; want %q", k, b, err, want)
		}
	}
	buf := make([]byte, 32)
	n, err := unix.Getxattr(filepath.Join(mnt, key), "user.memfs.rev", buf)
	if err != nil || n == 0 {
		t.Errorf("getxattr user.memfs.rev = %q, %v; want the store's revision", buf[:max(n, 0)], err)
	}
	if err := unix.Setxattr(filepath.Join(mnt, key), "user.memfs.rev", []byte("1"), 0); err != syscall.EPERM {
		t.Errorf("setxattr user.memfs.rev = %v, want EPERM", err)
	}
	fd.Close()
	s.stop(t)
	if err := f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
