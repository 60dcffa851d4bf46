package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/await"
)

func TestStoreCommands(t *testing.T) {
	t.Parallel()
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			out := mustRun(t, "", "import", "--store", store, "../../testdata/sample")
			if !strings.Contains(out, "imported 8 files") {
				t.Fatalf("import said %q", out)
			}
			ls := mustRun(t, "", "ls", "--store", store)
			for _, k := range []string{"memory/global.md", "skills/go-patterns/SKILL.md", "agents/explorer.json"} {
				if !strings.Contains(ls, k+"\n") {
					t.Errorf("ls does not list %s:\n%s", k, ls)
				}
			}
			long := mustRun(t, "", "ls", "-l", "--store", store, "skills/shell-tools/scripts")
			if !strings.Contains(long, "-rwxr-xr-x") {
				t.Errorf("ls -l lost the executable mode:\n%s", long)
			}
			want, _ := os.ReadFile("../../testdata/sample/memory/global.md")
			if got := mustRun(t, "", "cat", "--store", store, "memory/global.md"); got != string(want) {
				t.Errorf("cat = %q, want %q", got, want)
			}
			mustRun(t, "from stdin\n", "put", "--store", store, "memory/new.md")
			if got := mustRun(t, "", "cat", "--store", store, "memory/new.md"); got != "from stdin\n" {
				t.Errorf("cat after put = %q", got)
			}
			mustRun(t, "", "rm", "-r", "--store", store, "agents")
			if got := mustRun(t, "", "ls", "--store", store, "agents/"); got != "" {
				t.Errorf("ls agents/ after rm -r = %q", got)
			}
			// export, then import into the other kind of store: a move between backends.
			exp := t.TempDir()
			mustRun(t, "", "export", "--store", store, exp)
			b, err := os.ReadFile(filepath.Join(exp, "memory/new.md"))
			if err != nil || string(b) != "from stdin\n" {
				t.Fatalf("exported file = %q, %v", b, err)
			}
			if fi, _ := os.Stat(filepath.Join(exp, "skills/shell-tools/scripts/count-notes.sh")); fi == nil || fi.Mode().Perm() != 0o755 {
				t.Fatalf("export lost the mode: %v", fi)
			}
			other := "dir:" + t.TempDir()
			mustRun(t, "", "import", "--store", other, exp)
			if got, want := mustRun(t, "", "ls", "--store", other), mustRun(t, "", "ls", "--store", store); got != want {
				t.Fatalf("after export+import:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestStoreCommandErrors(t *testing.T) {
	store := "dir:" + t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"cat", "--store", store, "no/such.md"}, "memfs ls lists the keys"},
		{[]string{"put", "--store", store, "../escape"}, "invalid key"},
		{[]string{"rm", "--store", store, "no/such.md"}, "no such key"},
		{[]string{"ls", "--store", "nfs:/x"}, "want badger:PATH, dir:PATH or etcd://"},
		{[]string{"mount", "--store", store}, "want exactly one MOUNTPOINT"},
		{[]string{"mount", "--store", store, "/no/such/dir"}, "create it first"},
		{[]string{"mount", "/no/such/dir", "--store", store}, "create it first"}, // flags after the arguments
	}
	for _, tt := range tests {
		_, _, err := run(t, "", tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("memfs %s = %v, want an error saying %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
	// A bad spec is quoted without the password a URL may carry.
	for _, spec := range []string{"etcd://u:hunter2@h/ns", "nfs://u:hunter2@h/x"} {
		if _, _, err := run(t, "", "ls", "--store", spec); err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "REDACTED") {
			t.Errorf("memfs ls --store %s = %v, want an error without the password", spec, err)
		}
	}
	// A non-empty mountpoint and one that overlaps the store are refused.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	if _, _, err := run(t, "", "mount", "--store", store, dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("mount on a non-empty dir = %v", err)
	}
	sdir := t.TempDir()
	os.Mkdir(filepath.Join(sdir, "mnt"), 0o755)
	if _, _, err := run(t, "", "mount", "--store", "dir:"+sdir, filepath.Join(sdir, "mnt")); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("mount inside the store = %v", err)
	}
}

// A store held by a program that serves no mount (a memfs command at
// work, here this process) is refused, naming the holder; a store a mount
// serves is gone through instead (route_test.go).
func TestStoreInUseByAnotherProgram(t *testing.T) {
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			spec, err := parseStore(store)
			if err != nil {
				t.Fatal(err)
			}
			st, err := openStoreAs(spec, false, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			_, _, err = run(t, "", "ls", "--store", store)
			if err == nil || !errors.Is(err, backend.ErrStoreInUse) || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) ||
				!strings.Contains(err.Error(), "wait for it") {
				t.Fatalf("ls of a held store = %v, want in-use naming pid %d and what to do", err, os.Getpid())
			}
		})
	}
}

func TestSignalFlushesAndUnmountCommand(t *testing.T) {
	t.Parallel()
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := newStore()
			mnt := t.TempDir()
			p := startMount(t, store, mnt, nil)
			os.MkdirAll(filepath.Join(mnt, "memory"), 0o755)
			if err := os.WriteFile(filepath.Join(mnt, "memory/a.md"), []byte("alpha"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := p.terminate(t); err != nil {
				t.Fatalf("exit after SIGTERM: %v\n%s", err, p.log)
			}
			if isMounted(mnt) {
				t.Fatal("still mounted after SIGTERM")
			}
			if got := mustRun(t, "", "cat", "--store", store, "memory/a.md"); got != "alpha" {
				t.Fatalf("after SIGTERM the store has %q", got)
			}
			// memfs unmount flushes through the running process.
			p2 := startMount(t, store, mnt, nil)
			os.WriteFile(filepath.Join(mnt, "memory/b.md"), []byte("beta"), 0o644)
			out := mustRun(t, "", "unmount", mnt)
			if !strings.Contains(out, "flushed and unmounted") {
				t.Fatalf("unmount said %q", out)
			}
			if err := <-p2.done; err != nil {
				t.Fatalf("memfs exit after unmount: %v\n%s", err, p2.log)
			}
			p2.done <- nil
			if got := mustRun(t, "", "cat", "--store", store, "memory/b.md"); got != "beta" {
				t.Fatalf("after unmount the store has %q", got)
			}
		})
	}
}

// content is the deterministic content of crash-test file i.
func content(i int) []byte {
	return bytes.Repeat(fmt.Appendf(nil, "file %d\n", i), 1+i%50)
}

func writeFiles(t *testing.T, mnt string, n int, fsyncEvery int) {
	t.Helper()
	for i := range n {
		dir := filepath.Join(mnt, fmt.Sprintf("memory/d%02d", i%20))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("f%05d.md", i)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o640)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(content(i)); err != nil {
			t.Fatal(err)
		}
		if fsyncEvery > 0 && i%fsyncEvery == 0 {
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func checkFiles(t *testing.T, mnt string, n int) {
	t.Helper()
	bad := 0
	for i := range n {
		p := filepath.Join(mnt, fmt.Sprintf("memory/d%02d/f%05d.md", i%20, i))
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, content(i)) {
			if bad++; bad < 5 {
				t.Errorf("%s: %d bytes, %v (want %d bytes, sha %x)", p, len(got), err, len(content(i)), sha256.Sum256(content(i)))
			}
			continue
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode %v, want 0640", p, fi.Mode())
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d files lost or damaged", bad, n)
	}
}

func TestCrashKill9KeepsClosedFiles(t *testing.T) {
	t.Parallel()
	const n = 300
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := newStore()
			mnt := t.TempDir()
			p := startMount(t, store, mnt, nil)
			writeFiles(t, mnt, n, 10) // every 10th with fsync, the rest a plain close
			p.kill9(t)
			p2 := startMount(t, store, mnt, nil)
			checkFiles(t, mnt, n)
			if !strings.Contains(p2.log.String(), "replaying the journal") {
				t.Errorf("remount did not replay a journal:\n%s", p2.log)
			}
			if err := p2.terminate(t); err != nil {
				t.Fatalf("exit: %v\n%s", err, p2.log)
			}
		})
	}
}

func TestCrashKill9DuringFlush(t *testing.T) {
	t.Parallel()
	const n = 4000
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := newStore()
			mnt := t.TempDir()
			p := startMount(t, store, mnt, nil)
			writeFiles(t, mnt, n, 0)
			// One fsync flushes all n files; kill memfs while it runs.
			var wg sync.WaitGroup
			wg.Go(func() {
				f, err := os.Open(filepath.Join(mnt, "memory/d00/f00000.md"))
				if err == nil {
					f.Sync() // fails with ENOTCONN when the kill lands first
					f.Close()
				}
			})
			if name == "dir" {
				// Kill as soon as the flush has begun writing into the store.
				probe := filepath.Join(strings.TrimPrefix(store, "dir:"), "memory", "d00")
				// (A flush that never begins shows below: nothing saved.)
				await.Cond(10*time.Second, 200*time.Microsecond, func() bool {
					ents, _ := os.ReadDir(probe)
					return len(ents) > 0
				})
			} else {
				time.Sleep(15 * time.Millisecond)
			}
			p.kill9(t)
			wg.Wait()
			if name == "dir" {
				// Evidence of where the kill landed: how much reached the store.
				saved, temps := 0, 0
				filepath.WalkDir(strings.TrimPrefix(store, "dir:"), func(path string, d fs.DirEntry, err error) error {
					switch {
					case err != nil || !d.Type().IsRegular():
					case strings.HasPrefix(d.Name(), ".memfs-tmp"):
						temps++
					case strings.HasSuffix(path, ".md"):
						saved++
					}
					return nil
				})
				t.Logf("the kill left %d of %d files and %d temp files in the store", saved, n, temps)
				if saved+temps == 0 {
					t.Errorf("the kill landed before the flush began: not the case under test")
				}
			}
			p2 := startMount(t, store, mnt, nil)
			checkFiles(t, mnt, n)
			if err := p2.terminate(t); err != nil {
				t.Fatalf("exit: %v\n%s", err, p2.log)
			}
		})
	}
}

func TestFinalFlushFailureWritesRecovery(t *testing.T) {
	t.Parallel()
	storeDir := t.TempDir()
	state := t.TempDir()
	mnt := t.TempDir()
	p := startMount(t, "dir:"+storeDir, mnt, []string{"XDG_STATE_HOME=" + state})
	os.MkdirAll(filepath.Join(mnt, "notes"), 0o755)
	if err := os.WriteFile(filepath.Join(mnt, "notes/keep.md"), []byte("must survive"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Break the store behind memfs's back: the directory made immutable
	// (a file or symlink in its place is kept beside, not refused).
	if err := os.Mkdir(filepath.Join(storeDir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	immutable(t, filepath.Join(storeDir, "notes"))
	err := p.terminate(t)
	var exit interface{ ExitCode() int }
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("memfs exited with %v after a failed final flush, want non-zero\n%s", err, p.log)
	}
	if !strings.Contains(p.log.String(), filepath.Join(state, "memfs", "recovery")) {
		t.Fatalf("the error does not name the recovery directory:\n%s", p.log)
	}
	matches, _ := filepath.Glob(filepath.Join(state, "memfs", "recovery", "*", "notes", "keep.md"))
	if len(matches) != 1 {
		t.Fatalf("recovery files: %v", matches)
	}
	if b, _ := os.ReadFile(matches[0]); string(b) != "must survive" {
		t.Fatalf("recovered %q", b)
	}
	if isMounted(mnt) {
		t.Fatal("still mounted")
	}
	_ = syscall.Getpid
}

func TestBusyMountKeepsServing(t *testing.T) {
	t.Parallel()
	mnt := t.TempDir()
	p := startMount(t, "dir:"+t.TempDir(), mnt, nil)
	f, err := os.Create(filepath.Join(mnt, "open.md"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("written while busy")
	p.cmd.Process.Signal(syscall.SIGTERM)
	// memfs must say who holds the mount and go on serving.
	if !await.Cond(10*time.Second, 20*time.Millisecond, func() bool { return strings.Contains(p.log.String(), "cannot unmount") }) {
		t.Fatalf("no busy message after SIGTERM:\n%s", p.log)
	}
	if !strings.Contains(p.log.String(), fmt.Sprint(os.Getpid())) {
		t.Errorf("the busy message does not name this process (%d):\n%s", os.Getpid(), p.log)
	}
	if _, err := os.ReadFile(filepath.Join(mnt, ".memfs", "status")); err != nil {
		t.Fatalf("mount stopped serving after a busy unmount: %v", err)
	}
	f.Close()
	// No second signal needed: memfs retries until the mountpoint is free.
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Fatalf("memfs exit: %v\n%s", err, p.log)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("memfs did not unmount once the mountpoint was free\n%s", p.log)
	}
	if isMounted(mnt) {
		t.Fatal("still mounted after memfs exited")
	}
}

// One flipped byte in the first journal record of a crashed mount: a read
// command says so and shows the intact records after it (the files closed
// later are all there), leaving the journal as it is; the next command that
// writes keeps the damaged bytes beside the journal, and leaves a journal
// that opens clean.
func TestDamagedJournalKeepsTheIntactRecords(t *testing.T) {
	t.Parallel()
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			mnt := t.TempDir()
			p := startMount(t, store, mnt, nil)
			for i := range 5 {
				if err := os.WriteFile(filepath.Join(mnt, fmt.Sprintf("f%d.md", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p.kill9(t)
			spec, err := parseStore(store)
			if err != nil {
				t.Fatal(err)
			}
			jpath := spec.JournalPath(memfs.DefaultStateDir(), "")
			data, err := os.ReadFile(jpath)
			if err != nil || len(data) < 40 {
				t.Fatalf("journal: %d bytes, %v", len(data), err)
			}
			data[30] ^= 0x5a // inside the first record
			if err := os.WriteFile(jpath, data, 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, err := run(t, "", "ls", "--store", store)
			if err != nil {
				t.Fatalf("ls: %v\n%s", err, errOut)
			}
			for i := 1; i < 5; i++ {
				if !strings.Contains(out, fmt.Sprintf("f%d.md", i)) {
					t.Errorf("f%d.md, closed after the damaged record, is missing from ls:\n%s", i, out)
				}
			}
			if !strings.Contains(errOut, "damaged") {
				t.Errorf("ls said nothing of the damage:\n%s", errOut)
			}
			// A command that only reads leaves the damage where it is;
			// the next one that writes moves it aside.
			if aside, _ := filepath.Glob(jpath + ".damaged-*"); len(aside) != 0 {
				t.Fatalf("ls moved the damaged bytes aside (%d files): a read writes nothing", len(aside))
			}
			mustRun(t, "after\n", "put", "--store", store, "after.md")
			aside, _ := filepath.Glob(jpath + ".damaged-*")
			if len(aside) != 1 {
				t.Fatalf("damaged bytes saved in %d files, want 1", len(aside))
			}
			if _, errOut, err := run(t, "", "ls", "--store", store); err != nil || strings.Contains(errOut, "damaged") {
				t.Errorf("an ls after the put: %v, and it reports damage again:\n%s", err, errOut)
			}
		})
	}
}
