package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memfs/memfs/internal/hint"
)

// noStoreEnv leaves MEMFS_STORE unset for the test, and the default store
// under a fresh XDG_DATA_HOME, which it returns.
func noStoreEnv(t *testing.T) string {
	t.Helper()
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	t.Setenv("MEMFS_STORE", "") // restored after the test
	os.Unsetenv("MEMFS_STORE")
	return data
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// With the default store mounted, every command given neither --store nor
// --mount goes through the mount: the store is held, the mount answers.
func TestCommandsGoThroughTheMount(t *testing.T) {
	data := noStoreEnv(t)
	store := "badger:" + filepath.Join(data, "memfs", "store")
	mnt := t.TempDir()
	p := startMount(t, store, mnt, []string{"XDG_DATA_HOME=" + data})
	if err := os.MkdirAll(filepath.Join(mnt, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	style := filepath.Join(mnt, "memory", "style.md")
	if err := os.WriteFile(style, []byte("always run gofmt before committing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("style.md", filepath.Join(mnt, "memory", "link")); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, style) // the event log shows flushed changes only

	if out := mustRun(t, "", "ls"); !strings.Contains(out, "memory/style.md\n") {
		t.Errorf("ls = %q, want memory/style.md", out)
	}
	if got := searchKeys(t, "gofmt"); strings.Join(got, " ") != "memory/style.md" {
		t.Errorf("search gofmt = %v, want memory/style.md", got)
	}
	if out := mustRun(t, "", "log"); !strings.Contains(out, "memory/style.md") {
		t.Errorf("log = %q, want the write of memory/style.md", out)
	}
	if out := mustRun(t, "", "cat", "memory/style.md"); out != "always run gofmt before committing\n" {
		t.Errorf("cat = %q", out)
	}
	if out := mustRun(t, "", "cat", "memory/link"); out != "style.md" {
		t.Errorf("cat of a symlink = %q, want its target, as the store holds it", out)
	}
	mustRun(t, "a new note\n", "put", "--mode", "0600", "memory/new.md")
	if got := readString(t, filepath.Join(mnt, "memory", "new.md")); got != "a new note\n" {
		t.Errorf("after put, the mount shows %q", got)
	}
	if fi, err := os.Stat(filepath.Join(mnt, "memory", "new.md")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("after put --mode 0600: %v, %v", fi, err)
	}
	mustRun(t, "", "rm", "memory/new.md")
	mustNotExist(t, filepath.Join(mnt, "memory", "new.md"), "after rm")
	if _, _, err := run(t, "", "rm", "memory/new.md"); err == nil || !strings.Contains(err.Error(), "no such key") {
		t.Errorf("rm of a missing key = %v, want no such key", err)
	}
	mustRun(t, "", "rm", "-f", "memory/new.md")
	if out := mustRun(t, "", "context"); !strings.Contains(out, "always run gofmt") {
		t.Errorf("context = %q, want the memory file", out)
	}
	mustRun(t, "", "summary", "add", "--run", "r1", "--step", "s1", "tested routing")
	if got := readString(t, filepath.Join(mnt, "memory", "summaries.jsonl")); !strings.Contains(got, "tested routing") {
		t.Errorf("summaries after summary add: %q", got)
	}
	exp := filepath.Join(t.TempDir(), "out")
	mustRun(t, "", "export", exp)
	if got := readString(t, filepath.Join(exp, "memory", "style.md")); got != "always run gofmt before committing\n" {
		t.Errorf("exported memory/style.md = %q", got)
	}
	if target, err := os.Readlink(filepath.Join(exp, "memory", "link")); err != nil || target != "style.md" {
		t.Errorf("exported memory/link: %q, %v; want a symlink to style.md", target, err)
	}
	mustNotExist(t, filepath.Join(exp, ".memfs"), "export through the mount")

	if err := p.terminate(t); err != nil {
		t.Fatalf("memfs exit: %v\n%s", err, p.log)
	}
	// What went through the mount is in the store.
	if out := mustRun(t, "", "ls"); !strings.Contains(out, "memory/summaries.jsonl\n") || strings.Contains(out, "memory/new.md") {
		t.Errorf("the store after the unmount lists:\n%s", out)
	}
	if out := mustRun(t, "", "cat", "memory/link"); out != "style.md" {
		t.Errorf("cat of the symlink from the store = %q; through the mount it gave style.md", out)
	}
}

// Run inside a mount, a command given no store uses that mount.
func TestCommandsInsideAMount(t *testing.T) {
	noStoreEnv(t)
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	startMount(t, store, mnt, nil)
	if err := os.MkdirAll(filepath.Join(mnt, "memory", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "memory", "here.md"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(mnt, "memory", "deep"))
	if out := mustRun(t, "", "ls"); out != "memory/here.md\n" {
		t.Errorf("ls inside the mount = %q, want memory/here.md", out)
	}
	// Keys are relative to the working directory there (issue 30).
	if out := mustRun(t, "", "cat", "../here.md"); out != "inside\n" {
		t.Errorf("cat ../here.md in memory/deep = %q", out)
	}
}

// An explicit --mount wins over MEMFS_STORE; --store and --mount may name
// the same store, and naming two is an error that names both.
func TestMountFlagAndStore(t *testing.T) {
	noStoreEnv(t)
	dir := t.TempDir()
	store := "dir:" + dir
	other := "dir:" + t.TempDir()
	mustRun(t, "", "put", "--store", other, "memory/other.md", "/dev/null")
	mnt := t.TempDir()
	startMount(t, store, mnt, nil)
	if err := os.MkdirAll(filepath.Join(mnt, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "memory", "m.md"), []byte("mounted gofmt\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Setenv("MEMFS_STORE", other)
	if out := mustRun(t, "", "ls", "--mount", mnt); out != "memory/m.md\n" {
		t.Errorf("MEMFS_STORE set: ls --mount = %q, want memory/m.md", out)
	}
	if got := searchKeys(t, "--mount", mnt, "gofmt"); strings.Join(got, " ") != "memory/m.md" {
		t.Errorf("MEMFS_STORE set: search --mount = %v", got)
	}
	if out := mustRun(t, "", "context", "--mount", mnt); !strings.Contains(out, "mounted gofmt") {
		t.Errorf("MEMFS_STORE set: context --mount = %q", out)
	}
	mustRun(t, "", "log", "--mount", mnt)
	if out := mustRun(t, "", "ls", "--store", store, "--mount", mnt); out != "memory/m.md\n" {
		t.Errorf("ls --store (the mounted one) --mount = %q", out)
	}
	for _, args := range [][]string{
		{"ls", "--store", other, "--mount", mnt},
		{"search", "--store", other, "--mount", mnt, "gofmt"},
		{"log", "--store", other, "--mount", mnt},
		{"context", "--store", other, "--mount", mnt},
	} {
		_, _, err := run(t, "", args...)
		if err == nil || !strings.Contains(err.Error(), other) || !strings.Contains(err.Error(), mnt) || !strings.Contains(err.Error(), store) {
			t.Errorf("memfs %s = %v, want an error naming %s, %s and the store it serves, %s", strings.Join(args, " "), err, other, mnt, store)
		}
	}
	// MEMFS_STORE naming the mounted store goes through the mount too.
	t.Setenv("MEMFS_STORE", store)
	if out := mustRun(t, "", "ls"); out != "memory/m.md\n" {
		t.Errorf("MEMFS_STORE=the mounted store: ls = %q", out)
	}
}

// import and reindex need the store to themselves: on a mounted store they
// refuse, naming the mount and what to do, and change nothing; so does a
// second mount of it.
func TestExclusiveCommandsOnAMountedStore(t *testing.T) {
	noStoreEnv(t)
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	startMount(t, store, mnt, nil)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "--store", store, "../../testdata/sample"}, "cp -a"},
		{[]string{"reindex", "--store", store}, "memfs unmount " + mnt},
		{[]string{"mount", "--store", store, filepath.Join(mnt + "-second")}, "already mounted"},
	} {
		_, _, err := run(t, "", tt.args...)
		if err == nil || !strings.Contains(err.Error(), mnt) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("memfs %s = %v, want an error naming %s and saying %q", strings.Join(tt.args, " "), err, mnt, tt.want)
		}
	}
	mustNotExist(t, filepath.Join(mnt, "agents", "reviewer.json"), "import refused") // memory/, skills/, agents/ are in every mount
	mustNotExist(t, mnt+"-second", "second mount refused")
}

// A command that only reads never creates a store, nor anything else.
func TestReadCommandsCreateNoStore(t *testing.T) {
	noStoreEnv(t)
	for _, kind := range []string{"dir", "badger"} {
		for _, args := range [][]string{{"ls"}, {"cat", "memory/a.md"}, {"search", "gofmt"}, {"log"}, {"context"}, {"export", "DST"}} {
			t.Run(kind+"/"+args[0], func(t *testing.T) {
				typo := filepath.Join(t.TempDir(), "typo", "store")
				dst := filepath.Join(t.TempDir(), "export")
				full := append([]string{args[0], "--store", kind + ":" + typo}, args[1:]...)
				for i, a := range full {
					if a == "DST" {
						full[i] = dst
					}
				}
				_, _, err := run(t, "", full...)
				if err == nil || !strings.Contains(err.Error(), "no store at "+typo) {
					t.Errorf("memfs %s = %v, want no store at %s", strings.Join(full, " "), err, typo)
				}
				mustNotExist(t, filepath.Dir(typo), "read command on a missing store")
				mustNotExist(t, dst, "read command on a missing store")
			})
		}
	}
}

// Through a symlink to the mount, a command still finds the mount it is in
// (the mount table holds real paths, the working directory may not).
func TestCommandsInsideAMountThroughASymlink(t *testing.T) {
	noStoreEnv(t)
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	startMount(t, store, mnt, nil)
	if err := os.WriteFile(filepath.Join(mnt, "memory", "here.md"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "mem")
	if err := os.Symlink(mnt, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(link, "memory"))
	if out := mustRun(t, "", "cat", "memory/here.md"); out != "inside\n" {
		t.Errorf("cat inside the mount reached through a symlink = %q", out)
	}
}

// --mount DIR that no memfs serves takes no write (summary add is the
// writing command with --mount): it refuses, and DIR is left as it was.
func TestWritesNeedALiveMount(t *testing.T) {
	noStoreEnv(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep.md"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"summary", "add", "--mount", dir, "--run", "r", "--step", "1", "a step"}} {
		_, _, err := run(t, "", args...)
		if err == nil || !strings.Contains(err.Error(), "not a live memfs mount") {
			t.Errorf("memfs %s on a plain directory = %v, want a refusal", strings.Join(args, " "), err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || readString(t, filepath.Join(dir, "keep.md")) != "mine\n" {
		t.Errorf("the plain directory changed: %v", ents)
	}
}

// A put through the mount that the mount refuses (past --max-file-size)
// leaves the key's old value, not an empty or cut file.
func TestPutThroughTheMountKeepsTheOldValueOnFailure(t *testing.T) {
	noStoreEnv(t)
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	startMount(t, store, mnt, nil, "--max-file-size", "100")
	src := filepath.Join(t.TempDir(), "v")
	if err := os.WriteFile(src, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "", "put", "--store", store, "memory/k.md", src)
	if err := os.WriteFile(src, []byte(strings.Repeat("x", 5000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "", "put", "--store", store, "memory/k.md", src); err == nil {
		t.Fatal("a put past --max-file-size through the mount succeeded")
	}
	if got := readString(t, filepath.Join(mnt, "memory", "k.md")); got != "keep me\n" {
		t.Errorf("after a refused put the key holds %q, want its old value", got)
	}
}

// A cp -a copy of a live mount that lists .memfs (--show-memfs) keeps a
// .memfs/status that names the live process; it is still plain disk. --mount COPY is refused by every
// command (summary add exited 0 having appended to the copy), and the
// copy is left as it was; inside the copy, no command takes it for a
// mount either.
func TestACopyOfAMountIsNoMount(t *testing.T) {
	noStoreEnv(t)
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	startMount(t, store, mnt, nil, "--show-memfs")
	if err := os.WriteFile(filepath.Join(mnt, "memory", "m.md"), []byte("mounted gofmt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", mnt, cp).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", mnt, cp, err, out)
	}
	if _, err := os.Stat(filepath.Join(cp, ".memfs", "status")); err != nil {
		t.Fatalf("the copy has no .memfs/status (%v): it tests nothing", err)
	}
	before := treeOf(t, cp)
	for _, args := range [][]string{
		{"summary", "add", "--mount", cp, "--run", "r", "--step", "1", "a step"},
		{"ls", "--mount", cp},
		{"search", "--mount", cp, "gofmt"},
		{"context", "--mount", cp},
		{"log", "--mount", cp},
	} {
		_, _, err := run(t, "", args...)
		if err == nil || !strings.Contains(err.Error(), "not a live memfs mount") {
			t.Errorf("memfs %s on a copy of a mount = %v, want a refusal", strings.Join(args, " "), err)
		}
	}
	if after := treeOf(t, cp); after != before {
		t.Errorf("the copy changed:\n%s\nwas\n%s", after, before)
	}
	// Inside the copy, with no store named: the default store, not the copy.
	t.Chdir(filepath.Join(cp, "memory"))
	if out, _, _ := run(t, "", "ls"); strings.Contains(out, "m.md") {
		t.Errorf("ls inside the copy listed the copy: %q", out)
	}
}

// treeOf lists every name under dir with its size.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(p + " " + fi.Mode().String() + " " + strconv.FormatInt(fi.Size(), 10) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Another user's mount, even one shared with --allow-other, is never
// where a command goes by itself: run inside it, ls does not list it, and
// hint does not offer it; named with --mount, it is read as that user may
// read it (its owner offered it with allow_other).
func TestAnotherUsersMountIsNotRouted(t *testing.T) {
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("this test runs commands as another user with setpriv (util-linux): %v", err)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root: it mounts with --allow-other and runs commands as uid %d", otherUID)
	}
	noStoreEnv(t)
	store := "dir:" + t.TempDir()
	mnt := sharedDir(t)
	bin := sharedBinary(t)
	startMount(t, store, mnt, nil, "--allow-other")
	if err := os.WriteFile(filepath.Join(mnt, "memory", "antelope.md"), []byte("gnu antelope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := sharedDir(t)
	if err := os.Chown(home, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
	other := caller{name: "uid 65534", priv: []string{"--reuid=65534", "--regid=65534", "--clear-groups"},
		env: []string{"MEMFS_TEST_MAIN=1", "HOME=" + home, "XDG_DATA_HOME=" + home, "MEMFS_STORE="}}

	if out, _ := other.run(t, filepath.Join(mnt, "memory"), bin, "ls"); strings.Contains(out, "antelope") {
		t.Errorf("ls as uid 65534 inside root's mount went through it: %q", out)
	}
	if out, err := other.run(t, "/", bin, "hint", "claude"); err != nil || strings.Contains(out, mnt) || !strings.Contains(out, hint.Placeholder) {
		t.Errorf("hint as uid 65534 with only root's mount on the machine = %v\n%.400s\nwant the placeholder, not %s", err, out, mnt)
	}
	if out, err := other.run(t, "/", bin, "ls", "--mount", mnt); err != nil || !strings.Contains(out, "memory/antelope.md") {
		t.Errorf("ls --mount of root's allow_other mount as uid 65534 = %v, %q; want it listed", err, out)
	}
}
