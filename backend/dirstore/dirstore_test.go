package dirstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/storetest"
	"github.com/memfs/memfs/internal/await"
)

// conformance names what a directory store physically cannot do: times
// outside its filesystem's range, device nodes without CAP_MKNOD, and a
// key without the real directories above it; and how another program
// changes it (for the change feed).
var conformance = storetest.Options{HostTimes: true, HostDevices: true, ImplicitDirs: true, External: dirstore.ExternalWrite}

func TestConformance(t *testing.T) {
	storetest.RunWith(t, func(t *testing.T, dir string) (backend.Store, error) {
		return dirstore.Open(dir)
	}, conformance)
}

func openT(t *testing.T, dir string) *dirstore.Store {
	t.Helper()
	s, err := dirstore.Open(dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func entry(key, value string) backend.Entry {
	return backend.Entry{Key: key, Value: []byte(value), Info: backend.Info{
		Mode:  0o644,
		MTime: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		UID:   uint32(os.Getuid()),
		GID:   uint32(os.Getgid()),
	}}
}

func save(t *testing.T, s *dirstore.Store, es ...backend.Entry) {
	t.Helper()
	if err := s.Save(t.Context(), es...); err != nil {
		t.Fatalf("Save: %v", err)
	}
}

func listKeys(t *testing.T, s *dirstore.Store) []string {
	t.Helper()
	es, err := s.List(t.Context())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	ks := []string{}
	for _, e := range es {
		ks = append(ks, e.Key)
	}
	return ks
}

// tree returns every path under dir that is not a directory, hidden ones
// included, without following symlinks.
// ownFiles are the files an opened store holds before any key: the
// marker, and the lock and the ignore file in the records' directory.
var ownFiles = []string{".memfs-store", ".memfs-sys/.gitignore", ".memfs-sys/.lock"}

func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestPlainFiles(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	es := []backend.Entry{entry("memory/global.md", "# global\n"), entry("skills/x/SKILL.md", "skill"), entry("top", "")}
	es[1].Info.Mode = 0o600
	save(t, s, es...)
	for _, e := range es {
		p := filepath.Join(dir, e.Key)
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("ReadFile(%s): %v", p, err)
		}
		if string(got) != string(e.Value) {
			t.Errorf("%s holds %q, want %q", p, got, e.Value)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != e.Info.Mode {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), e.Info.Mode)
		}
		if !fi.ModTime().Equal(e.Info.MTime) {
			t.Errorf("%s: mtime %v, want %v", p, fi.ModTime(), e.Info.MTime)
		}
	}
	// Nothing else but memfs's own files: no temp files after a successful Save.
	want := append(slices.Clone(ownFiles), "memory/global.md", "skills/x/SKILL.md", "top")
	if got := tree(t, dir); !slices.Equal(got, want) {
		t.Fatalf("files in the root = %v, want %v", got, want)
	}
}

// Owners are set as far as the process may: root gives files away, anyone
// else keeps them, and Save succeeds either way.
func TestOwner(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	var batch []backend.Entry
	for _, k := range []string{"single", "batch/a", "batch/b"} {
		e := entry(k, "v")
		e.Info.UID, e.Info.GID = 1234, 5678
		batch = append(batch, e)
	}
	save(t, s, batch[0])
	save(t, s, batch[1:]...)
	wantUID, wantGID := uint32(1234), uint32(5678)
	if os.Geteuid() != 0 {
		wantUID, wantGID = uint32(os.Geteuid()), uint32(os.Getegid())
	}
	got, err := s.Load(t.Context(), "single", "batch/a", "batch/b")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range got {
		if e.Info.UID != wantUID || e.Info.GID != wantGID {
			t.Errorf("%s: owner %d:%d, want %d:%d", e.Key, e.Info.UID, e.Info.GID, wantUID, wantGID)
		}
	}
}

// An edit made behind the store's back is what Load returns.
func TestExternalEdit(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	save(t, s, entry("a/k", "old"))
	writeFile(t, filepath.Join(dir, "a/k"), "edited by hand")
	got, err := s.Load(t.Context(), "a/k")
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Value) != "edited by hand" || got[0].Info.Size != int64(len("edited by hand")) {
		t.Fatalf("Load after an external edit = %q (size %d)", got[0].Value, got[0].Info.Size)
	}
}

func TestListOrder(t *testing.T) {
	s := openT(t, t.TempDir())
	// Directory walk order is not key order: "a-b" < "a/b" < "a0".
	save(t, s, entry("a/b", ""), entry("a-b", ""), entry("a0", ""), entry("a/a/z", ""))
	want := []string{"a", "a-b", "a/a", "a/a/z", "a/b", "a0"}
	if got := listKeys(t, s); !slices.Equal(got, want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
}

func TestRootRemovedAfterOpen(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	save(t, s, entry("a/k", "v"))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if got := listKeys(t, s); len(got) != 0 {
		t.Fatalf("List of a removed root = %v, want empty", got)
	}
	if _, err := s.Load(t.Context(), "a/k"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Fatalf("Load from a removed root = %v, want ErrKeyNotFound", err)
	}
}

func TestRejectedBatchWritesNothing(t *testing.T) {
	for _, bad := range []string{".memfs-x", "a/.memfs-tmp-1", "a/../b", "/abs", ""} {
		t.Run(fmt.Sprintf("%q", bad), func(t *testing.T) {
			dir := t.TempDir()
			s := openT(t, dir)
			err := s.Save(t.Context(), entry("ok/first", "1"), entry(bad, "2"), entry("ok/last", "3"))
			if !errors.Is(err, backend.ErrInvalidKey) {
				t.Fatalf("Save with %q = %v, want ErrInvalidKey", bad, err)
			}
			if got := tree(t, dir); !slices.Equal(got, ownFiles) {
				t.Fatalf("after a rejected Save the root holds %v, want only the marker and the lock", got)
			}
			if _, err := os.Lstat(filepath.Join(dir, "ok")); err == nil {
				t.Fatal("a rejected Save created a directory")
			}
			if _, err := s.Load(t.Context(), bad); !errors.Is(err, backend.ErrInvalidKey) {
				t.Errorf("Load(%q) = %v, want ErrInvalidKey", bad, err)
			}
			if err := s.Delete(t.Context(), "ok/first", bad); !errors.Is(err, backend.ErrInvalidKey) {
				t.Errorf("Delete(%q) = %v, want ErrInvalidKey", bad, err)
			}
		})
	}
}

func TestFailedSaveLeavesNoTempFiles(t *testing.T) {
	tests := []struct {
		name  string
		setup []backend.Entry
		batch []backend.Entry
	}{
		// The parent of the last key is a file: MkdirAll fails before
		// any rename.
		{"parent is a file", []backend.Entry{entry("f", "file")},
			[]backend.Entry{entry("k1", "new"), entry("d/k2", "new"), entry("f/x", "new")}},
		// The key is a directory: its rename fails.
		{"key is a directory", []backend.Entry{entry("d/k", "v"), entry("k1", "old")},
			[]backend.Entry{entry("k1", "new"), entry("k3", "new"), entry("d", "new")}},
		{"single key is a directory", []backend.Entry{entry("d/k", "v")},
			[]backend.Entry{entry("d", "new")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openT(t, dir)
			save(t, s, tt.setup...)
			if err := s.Save(t.Context(), tt.batch...); err == nil {
				t.Fatal("Save succeeded, want an error")
			}
			for _, p := range tree(t, dir) {
				if strings.Contains(p, ".memfs-tmp-") {
					t.Errorf("temp file left behind: %s", p)
				}
			}
			// Every key holds its old value or its new one.
			for _, e := range tt.batch {
				got, err := os.ReadFile(filepath.Join(dir, e.Key))
				if err != nil {
					continue
				}
				old := ""
				for _, o := range tt.setup {
					if o.Key == e.Key {
						old = string(o.Value)
					}
				}
				if string(got) != string(e.Value) && string(got) != old {
					t.Errorf("%s holds %q, want %q or %q", e.Key, got, old, e.Value)
				}
			}
		})
	}
}

func TestCanceledSave(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.Save(ctx, entry("a", "1"), entry("b", "2"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Save with a canceled context = %v, want context.Canceled", err)
	}
	if got := tree(t, dir); !slices.Equal(got, ownFiles) {
		t.Fatalf("after a canceled Save the root holds %v", got)
	}
}

// Concurrent Saves and Deletes in one directory: the directories stay
// (they are entries, never pruned), and nothing else is left.
func TestConcurrentSaveAndDelete(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	const workers, rounds = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers*rounds)
	for w := range workers {
		key := fmt.Sprintf("shared/deep/w%d", w)
		wg.Go(func() {
			for r := range rounds {
				if err := s.Save(context.Background(), entry(key, "v")); err != nil {
					errs <- err
				}
				if r%2 == 0 {
					// A batch, so both Save paths meet the pruning.
					if err := s.Save(context.Background(), entry(key+"-a", "a"), entry(key+"-b", "b")); err != nil {
						errs <- err
					}
				}
				if err := s.Delete(context.Background(), key, key+"-a", key+"-b"); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got, want := listKeys(t, s), []string{"shared", "shared/deep"}; !slices.Equal(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
	if got := tree(t, dir); !slices.Equal(got, ownFiles) {
		t.Errorf("root holds %v, want only the marker and the lock", got)
	}
}

func TestDuplicateKeysLastWins(t *testing.T) {
	s := openT(t, t.TempDir())
	save(t, s, entry("k", "first"), entry("other", "x"), entry("k", "second"))
	got, err := s.Load(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Value) != "second" {
		t.Fatalf("k = %q, want the last entry's %q", got[0].Value, "second")
	}
}

func TestOpen(t *testing.T) {
	t.Run("creates the root", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "x", "y")
		s := openT(t, dir)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Fatalf("Open did not create %s: %v", dir, err)
		}
		if s.Root() != dir {
			t.Errorf("Root() = %q, want %q", s.Root(), dir)
		}
	})
	t.Run("relative path", func(t *testing.T) {
		base := t.TempDir()
		t.Chdir(base)
		s := openT(t, "rel")
		if want := filepath.Join(base, "rel"); s.Root() != want {
			t.Errorf("Root() = %q, want %q", s.Root(), want)
		}
	})
	t.Run("root is a file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "f")
		writeFile(t, f, "")
		if s, err := dirstore.Open(f); err == nil {
			s.Close()
			t.Fatal("Open of a file succeeded")
		}
	})
	t.Run("close twice", func(t *testing.T) {
		s, err := dirstore.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close = %v, want nil", err)
		}
	})
}

func TestInUseInThisProcess(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	_, err := dirstore.Open(dir)
	if !errors.Is(err, backend.ErrStoreInUse) {
		t.Fatalf("second Open = %v, want ErrStoreInUse", err)
	}
	want := fmt.Sprintf("dirstore: %s is in use by process %d: store is in use", s.Root(), os.Getpid())
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

// holdEnv names the directory that the helper process opens and holds.
const holdEnv = "DIRSTORE_TEST_HOLD"

// TestHelperHold is not a test: run as a subprocess by TestInUseByAnotherProcess,
// it holds a store until its stdin closes.
func TestHelperHold(t *testing.T) {
	dir := os.Getenv(holdEnv)
	if dir == "" {
		t.Skip("helper process only")
	}
	s, err := dirstore.Open(dir)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
	s.Close()
	os.Exit(0)
}

func TestInUseByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHold$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}

	_, err = dirstore.Open(dir)
	if !errors.Is(err, backend.ErrStoreInUse) {
		t.Fatalf("Open of a store held by process %d = %v, want ErrStoreInUse", cmd.Process.Pid, err)
	}
	if !strings.Contains(err.Error(), "process "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("error %q does not name the holder %d", err, cmd.Process.Pid)
	}

	// Once the holder exits, the store opens.
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	s := openT(t, dir)
	listKeys(t, s)
}

func TestOpenSweepsCrashLeftovers(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a/b/.memfs-tmp-crashed"), "left by a crash")
	writeFile(t, filepath.Join(dir, ".memfs-tmp-top"), "left by a crash")
	writeFile(t, filepath.Join(dir, ".git/.memfs-tmp-crashed"), "dotfiles are keys: swept too")
	writeFile(t, filepath.Join(dir, "a/keep.md"), "a key")
	if err := os.Mkdir(filepath.Join(dir, "a/.memfs-tmp-dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "a/.memfs-tmp-fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	symlink(t, "/etc", filepath.Join(dir, "a/.memfs-tmp-link"))
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, ".memfs-tmp-outside"), "not ours")
	symlink(t, outside, filepath.Join(dir, "out"))
	openT(t, dir)
	if _, err := os.Lstat(filepath.Join(outside, ".memfs-tmp-outside")); err != nil {
		t.Errorf("Open swept through a symlink: %v", err)
	}
	for _, p := range []string{"a/b/.memfs-tmp-crashed", ".memfs-tmp-top", ".git/.memfs-tmp-crashed", "a/.memfs-tmp-dir", "a/.memfs-tmp-fifo", "a/.memfs-tmp-link"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s survived Open: %v", p, err)
		}
	}
	for _, p := range []string{"a/keep.md", "out"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s was removed by Open: %v", p, err)
		}
	}
}

func TestStat(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	save(t, s, entry("a/b.md", "12345"))
	info, err := s.Stat(t.Context(), "a/b.md")
	if err != nil || info.Size != 5 {
		t.Fatalf("Stat = %+v, %v", info, err)
	}
	if info, err := s.Stat(t.Context(), "a"); err != nil || !info.Mode.IsDir() {
		t.Errorf("Stat(a) = %+v, %v; want a directory", info, err)
	}
	for _, k := range []string{"nope", "a/b.md/c"} {
		if _, err := s.Stat(t.Context(), k); !errors.Is(err, backend.ErrKeyNotFound) {
			t.Errorf("Stat(%s) = %v, want ErrKeyNotFound", k, err)
		}
	}
	if _, err := s.Stat(t.Context(), "../x"); !errors.Is(err, backend.ErrInvalidKey) {
		t.Errorf("Stat(../x) = %v", err)
	}
}

// TestListSkipsControlNames: a name with a control character, made by
// another program, is no key: List leaves it out (a directory whole),
// Skipped names it, and it stays on disk untouched.
func TestListSkipsControlNames(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	if err := s.Save(t.Context(), backend.Entry{Key: "memory/a.md", Value: []byte("a"), Info: backend.Info{Mode: 0o644}}); err != nil {
		t.Fatal(err)
	}
	bad := []string{"memory/esc\x1b[2J.md", "new\nline.md", "c1\u009b.md", "bel\a/inside.md"}
	for _, k := range bad {
		p := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("kept"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.List(t.Context())
	if err != nil {
		t.Fatalf("List = %v, want no error", err)
	}
	var got []string
	for _, e := range l {
		got = append(got, e.Key)
	}
	if want := []string{"memory", "memory/a.md"}; !slices.Equal(got, want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
	want := []string{"bel\a", "c1\u009b.md", "memory/esc\x1b[2J.md", "new\nline.md"}
	if got := slices.Sorted(slices.Values(s.Skipped())); !slices.Equal(got, want) {
		t.Fatalf("Skipped = %q, want %q", got, want)
	}
	for _, k := range bad {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(k))); err != nil || string(b) != "kept" {
			t.Errorf("%q after List: %q, %v; want it kept", k, b, err)
		}
	}
}

// TestWatchIgnoresOwnNames checks that the change feed never reports
// memfs's own names (lock, journal, temp nodes) and does not enter a
// hidden directory, while a key beside them is reported.
func TestWatchIgnoresOwnNames(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	ch, err := s.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{dirstore.JournalName, ".memfs-sys/.lock", ".memfs-sys/.gitignore", ".memfs.lock", ".memfs-journal", "memory/.memfs-tmp-x", ".git/objects/ab"} {
		dirstore.ExternalWrite(t, dir, name, []byte("x"))
	}
	dirstore.ExternalWrite(t, dir, ".git/objects/cd", []byte("in a hidden directory"))
	dirstore.ExternalWrite(t, dir, "memory/key.md", []byte("x"))
	for c := range ch {
		switch {
		case c.Lost:
			t.Fatal("Lost reported for a handful of changes")
		case c.Key == "memory/key.md":
			return
		case c.Key != "memory" && c.Key != ".git":
			t.Errorf("reported %q", c.Key)
		}
	}
	t.Fatal("the channel closed")
}

// TestWatchLeavesNoGoroutine checks that a Watch's goroutines (its own and
// fsnotify's) end when its context is cancelled and when the store closes.
func TestWatchLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, byClose := range []bool{false, true} {
		dir := t.TempDir()
		s, err := dirstore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var chans []<-chan backend.Change
		for range 5 {
			ch, err := s.Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			chans = append(chans, ch)
		}
		dirstore.ExternalWrite(t, dir, "a/b.md", []byte("unread changes pending"))
		if byClose {
			s.Close()
		} else {
			cancel()
		}
		for _, ch := range chans {
			for range ch {
			}
		}
		cancel()
		s.Close()
	}
	if !await.Cond(5*time.Second, 10*time.Millisecond, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines, %d before the watches:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
	}
}

// TestWatchSeesWritesRightAfter checks that a file written into an
// existing subdirectory right after Watch returns is reported: the
// directories below the root are watched before Watch returns. (They were
// watched by Watch's goroutine, after it returned: a write that came
// first was lost, and a mount missed an external change for good.)
func TestWatchSeesWritesRightAfter(t *testing.T) {
	dir := t.TempDir()
	const dirs = 1000
	for i := range dirs {
		if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("d%04d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := openT(t, dir)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	ch, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := fmt.Sprintf("d%04d/late.md", dirs-1) // the walk's last directory
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(last)), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for c := range ch {
		if c.Key == last || c.Lost {
			return
		}
	}
	t.Fatalf("no change reported for %s written right after Watch returned", last)
}
