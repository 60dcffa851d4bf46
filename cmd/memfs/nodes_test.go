package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/internal/testtree"
)

func TestDotfilesAreKeys(t *testing.T) {
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			mustRun(t, "hidden\n", "put", "--store", store, "memory/.hidden.md")
			mustRun(t, "env\n", "put", "--store", store, ".env")
			if got := mustRun(t, "", "cat", "--store", store, "memory/.hidden.md"); got != "hidden\n" {
				t.Errorf("cat memory/.hidden.md = %q, want %q", got, "hidden\n")
			}
			if got := mustRun(t, "", "ls", "--store", store); got != ".env\nmemory/.hidden.md\n" {
				t.Errorf("ls = %q, want both dotfiles", got)
			}
			mustRun(t, "", "rm", "--store", store, "memory/.hidden.md")
			if got := mustRun(t, "", "ls", "--store", store); got != ".env\n" {
				t.Errorf("ls after rm = %q, want %q", got, ".env\n")
			}
		})
	}
}

func TestStoreCommandsRefuseSessionOnlyNames(t *testing.T) {
	store := "dir:" + t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"put", "--store", store, "memory/.x.swp"}, "put: memory/.x.swp: a transient editor file lives only in a mounted session"},
		{[]string{"put", "--store", store, "memory/4913"}, "transient editor file"},
		{[]string{"put", "--store", store, ".#notes.md"}, "transient editor file"},
		{[]string{"put", "--store", store, ".memfs/search/x"}, "reserved for memfs's own files"},
		{[]string{"put", "--store", store, "a/.memfs-tmp-1"}, "reserved for memfs's own files"},
		{[]string{"cat", "--store", store, "memory/.x.swp"}, "transient editor file"},
		{[]string{"rm", "--store", store, "memory/.x.swp"}, "transient editor file"},
		{[]string{"rm", "-r", "--store", store, ".memfs-x/"}, "reserved"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[3:], " ")+" "+tt.args[0], func(t *testing.T) {
			_, _, err := run(t, "data", tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("memfs %s = %v, want an error saying %q", strings.Join(tt.args, " "), err, tt.want)
			}
		})
	}
	// The process exits 1 and says why.
	cmd := exec.Command(os.Args[0], "put", "--store", store, "memory/.x.swp")
	cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1")
	cmd.Stdin = strings.NewReader("swap")
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("memfs put memory/.x.swp: %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "memory/.x.swp: a transient editor file") {
		t.Errorf("memfs put memory/.x.swp said %q, want the reason", out)
	}
	if got := mustRun(t, "", "ls", "--store", store); got != "" {
		t.Errorf("ls after refused puts = %q, want nothing", got)
	}
}

func TestTransientFlag(t *testing.T) {
	// The mount refuses a bad pattern before it mounts anything.
	store := "dir:" + t.TempDir()
	for _, args := range [][]string{
		{"mount", "--store", store, "--transient", "[", t.TempDir()},
		{"mount", "--store", store, "--transient", "*.tmp", "--no-transient", t.TempDir()},
	} {
		_, _, err := run(t, "", args...)
		if err == nil || !strings.HasPrefix(err.Error(), "mount: ") || !strings.Contains(err.Error(), "transient") {
			t.Errorf("memfs %s = %v, want a mount: error about --transient", strings.Join(args, " "), err)
		}
	}
}

// import and ls -l, the command surface of what the engine carries
// (memfs.Import and Export, whose own test exports the tree back): the
// summary, the note on the transient file, each node type as ls shows it.
func TestImportThenLsEveryNodeType(t *testing.T) {
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			src := t.TempDir()
			testtree.Make(t, src)
			store := newStore()
			out, errOut, err := run(t, "", "import", "--store", store, src)
			if err != nil {
				t.Fatalf("import: %v\n%s", err, errOut)
			}
			wantSum := "imported 3 files, 6 directories, 2 symlinks, 1 fifo, 1 socket, "
			if os.Geteuid() == 0 {
				wantSum += "1 char device, 1 block device, "
			}
			wantSum += "2 hard links from "
			if !strings.HasPrefix(out, wantSum) {
				t.Errorf("import said %q, want %q...", out, wantSum)
			}
			if !strings.Contains(errOut, testtree.Swap+": a transient editor file") {
				t.Errorf("import did not report the transient file it skipped:\n%s", errOut)
			}
			long := mustRun(t, "", "ls", "-l", "--store", store)
			for _, w := range []string{" drwx------ ", " prw-r----- ", " srw------- ", "-rwsr-sr-x ", " drwxrwxrwt ", " drwxr-s--- ",
				" b/rel -> ../a/file.md", " dangling -> /no/such/target", " a/empty", " .git/HEAD"} {
				if !strings.Contains(long, w) {
					t.Errorf("ls -l does not show %q:\n%s", w, long)
				}
			}
			if os.Geteuid() == 0 && (!strings.Contains(long, " crw-") || !strings.Contains(long, " 1, 3 ")) {
				t.Errorf("ls -l does not show the char device 1, 3:\n%s", long)
			}
		})
	}
}

func TestExportDevicesNeedRoot(t *testing.T) {
	// A store with devices, written directly; exported by a process that
	// may not make a device: each one is reported, the rest exported.
	dir := sharedDir(t)
	storeDir := filepath.Join(dir, "store")
	st, err := badgerstore.Open(storeDir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	err = st.Save(t.Context(),
		backend.Entry{Key: "dev/null", Info: backend.Info{Mode: fs.ModeDevice | fs.ModeCharDevice | 0o666, Rdev: unix.Mkdev(1, 3), MTime: now}},
		backend.Entry{Key: "dev/loop0", Info: backend.Info{Mode: fs.ModeDevice | 0o660, Rdev: unix.Mkdev(7, 0), MTime: now}},
		backend.Entry{Key: "dev/README", Value: []byte("devices\n"), Info: backend.Info{Mode: 0o644, MTime: now}},
	)
	if err := errors.Join(err, st.Close()); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "export")
	args := []string{os.Args[0], "export", "--store", "badger:" + storeDir, dst}
	if os.Geteuid() == 0 {
		// Root may make devices: export as uid 65534, who owns the store.
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(os.Mkdir(dst, 0o755))
		must(filepath.WalkDir(storeDir, func(p string, d fs.DirEntry, err error) error {
			return errors.Join(err, os.Lchown(p, otherUID, otherUID))
		}))
		must(os.Chown(dst, otherUID, otherUID))
		args = append([]string{"setpriv", fmt.Sprintf("--reuid=%d", otherUID), fmt.Sprintf("--regid=%d", otherUID), "--clear-groups", "--"},
			append([]string{sharedBinary(t)}, args[1:]...)...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1", "HOME=/")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("export of devices by an unprivileged process exits %d, want 1\n%s%s", code, &stdout, &stderr)
	}
	for _, want := range []string{
		"export: dev/null: a char device (device 1:3) can be made by root only; skipped\n",
		"export: dev/loop0: a block device (device 7:0) can be made by root only; skipped\n",
		"memfs: export: 2 names could not be carried",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("export stderr does not say %q:\n%s", want, &stderr)
		}
	}
	if !strings.HasPrefix(stdout.String(), "exported 1 file, 1 directory from ") {
		t.Errorf("export said %q", &stdout)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "dev/README")); string(b) != "devices\n" {
		t.Errorf("dev/README = %q, %v; want it exported", b, err)
	}
}

func TestMountTransientPatterns(t *testing.T) {
	t.Parallel()
	names := []string{"memory/.notes.md.swp", "memory/4913", "memory/build.tmp", "memory/.hidden.md", ".git/HEAD"}
	tests := []struct {
		flags []string
		want  string // ls of the store after unmount
	}{
		{nil, ".git/HEAD\nmemory/.hidden.md\nmemory/build.tmp\n"},
		{[]string{"--transient", "*.tmp"}, ".git/HEAD\nmemory/.hidden.md\nmemory/.notes.md.swp\nmemory/4913\n"},
		{[]string{"--no-transient"}, ".git/HEAD\nmemory/.hidden.md\nmemory/.notes.md.swp\nmemory/4913\nmemory/build.tmp\n"},
		{[]string{"--transient", ""}, ".git/HEAD\nmemory/.hidden.md\nmemory/.notes.md.swp\nmemory/4913\nmemory/build.tmp\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.flags, "="), func(t *testing.T) {
			store := "badger:" + t.TempDir()
			mnt := t.TempDir()
			p := startMount(t, store, mnt, nil, tt.flags...)
			for _, k := range names {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(mnt, k)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(mnt, k), []byte(k), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p.stop(t)
			if !p.cmd.ProcessState.Success() {
				t.Fatalf("mount: %v\n%s", p.cmd.ProcessState, p.log)
			}
			if got := mustRun(t, "", "ls", "--store", store); got != tt.want {
				t.Errorf("stored after mount %v:\n%s\nwant\n%s", tt.flags, got, tt.want)
			}
			// What such a mount stored, commands show and remove.
			if strings.Contains(tt.want, "memory/4913\n") {
				if got := mustRun(t, "", "cat", "--store", store, "memory/4913"); got != "memory/4913" {
					t.Errorf("cat memory/4913 = %q", got)
				}
				mustRun(t, "", "rm", "--store", store, "memory/4913")
			}
		})
	}
}
