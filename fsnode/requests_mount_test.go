package fsnode_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/internal/await"
)

// The request-count tests: what reaches memfs during one workload run by
// the real program, counted by opcode through the kernel (a real mount),
// against a budget written beside it with its reason. A budget lists
// the most requests of each synchronous opcode (a process waits for
// those); any synchronous opcode it leaves out must not appear at all.
// FORGET, RELEASE and RELEASEDIR are sent without waiting and are not
// budgeted (they may also arrive after the program has exited).
//
// The mounts of these tests cache names and attributes for an hour, so
// that a slow machine cannot let a cache expire in the middle of a
// workload: the budgets are the counts while the kernel's caches are
// valid. With memfs's default of 1 s they are the same whenever the
// workload takes less than that.

const longTTL = time.Hour

// countingMount mounts a dir store holding files, counting requests.
func countingMount(t *testing.T, files map[string]string) (*mounted, *fsnode.Requests) {
	t.Helper()
	st := newDirStore(t, t.TempDir())
	seedStore(t, st, files)
	n := &fsnode.Requests{}
	m := mount(t, st, mountConfig{
		fopts: fsnode.Options{EntryTimeout: longTTL, AttrTimeout: longTTL, NegativeTimeout: longTTL},
		mopts: fsnode.MountOptions{Requests: n},
	})
	return m, n
}

// during returns the requests that reached memfs while fn ran.
func during(n *fsnode.Requests, fn func()) fsnode.RequestCounts {
	before := n.Counts()
	fn()
	return n.Counts().Sub(before)
}

// prog runs a program in dir and fails t if it fails.
func prog(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is not installed (Debian package of the same name): the request-count tests run the real program", name)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// budget fails t if got holds more synchronous requests of an opcode
// than max allows (an opcode max leaves out allows none).
func budget(t *testing.T, workload string, got fsnode.RequestCounts, max map[string]int64, why string) {
	t.Helper()
	var over []string
	for op, n := range got {
		if !fsnode.Async(op) && n > max[op] {
			over = append(over, fmt.Sprintf("%s %d > %d", op, n, max[op]))
		}
	}
	slices.Sort(over)
	if len(over) > 0 {
		t.Errorf("%s: over budget: %s\n  all requests: %v\n  budget %v: %s", workload, strings.Join(over, ", "), got, max, why)
	} else {
		t.Logf("%s: %v (sync %d)", workload, got, got.Sync())
	}
}

func manyFiles(dir string, n int) map[string]string {
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("%s/f%04d.md", dir, i)] = fmt.Sprintf("note %d\nsome text to grep\n", i)
	}
	return files
}

const nFiles = 1000

// stat of 1,000 files twice: the first asks each name once; the second
// is answered by the kernel from its caches alone.
func TestRequestsStat(t *testing.T) {
	files := manyFiles("d", nFiles)
	m, n := countingMount(t, files)
	args := []string{"-c", "%s"}
	for k := range files {
		args = append(args, filepath.Join(m.dir, k))
	}
	first := during(n, func() { prog(t, m.dir, "stat", args...) })
	if first["LOOKUP"] < nFiles {
		t.Errorf("cold stat of %d files: %d LOOKUPs counted, want one per file (is the counter wired?)", nFiles, first["LOOKUP"])
	}
	budget(t, "stat, cold", first, map[string]int64{"LOOKUP": nFiles + 1},
		"one LOOKUP per file and one for d; a LOOKUP's reply carries the attributes, so no GETATTR")
	budget(t, "stat, warm", during(n, func() { prog(t, m.dir, "stat", args...) }), nil,
		"names and attributes are cached: nothing reaches memfs")
}

// ls -l of a directory of 1,000 files.
func TestRequestsLsLong(t *testing.T) {
	m, n := countingMount(t, manyFiles("d", nFiles))
	budget(t, "ls -l, cold", during(n, func() { prog(t, m.dir, "ls", "-l", "d") }), map[string]int64{
		"LOOKUP": 1, "OPENDIR": 1, "READDIRPLUS": nFiles / 100, "GETXATTR": 2*nFiles + 3,
	}, "READDIRPLUS hands the kernel names and attributes (~170 a request); ls asks every file for "+
		"security.selinux and system.posix_acl_access (answered ENODATA before the node tree: labelFS)")
	budget(t, "ls -l, warm", during(n, func() { prog(t, m.dir, "ls", "-l", "d") }), map[string]int64{
		"OPENDIR": 1, "GETATTR": 1, "GETXATTR": nFiles + 2,
	}, "the listing is cached (FOPEN_CACHE_DIR) and so are the ACLs (FUSE_POSIX_ACL: the kernel keeps "+
		"the absent ACL); the kernel caches no security label, so one GETXATTR a file remains; one GETATTR of d, whose atime the listing changed")
}

// cat of an unchanged file: once warm, only the OPEN waits.
func TestRequestsCatWarm(t *testing.T) {
	m, n := countingMount(t, manyFiles("d", 3))
	cat := func() { prog(t, m.dir, "cat", "d/f0001.md") }
	budget(t, "cat, cold", during(n, cat), map[string]int64{"LOOKUP": 2, "OPEN": 1, "READ": 1},
		"the first read fills the page cache")
	budget(t, "cat, after the first read", during(n, cat), map[string]int64{"OPEN": 1, "GETATTR": 1},
		"the kernel marks atime stale after every READ (fuse_invalidate_atime), so cat's fstat asks once; "+
			"the page cache is kept (FOPEN_KEEP_CACHE): no READ")
	warm := during(n, cat)
	budget(t, "cat, warm", warm, map[string]int64{"OPEN": 1},
		"OPEN only: KEEP_CACHE, no READ; FOPEN_NOFLUSH, no FLUSH at close; RELEASE is sent without waiting")
	if warm.Sync() > 1 {
		t.Errorf("warm cat: %d synchronous requests, want at most 1", warm.Sync())
	}
}

// grep -r over 1,000 files, warm: one OPEN per file, nothing read.
func TestRequestsGrepWarm(t *testing.T) {
	files := manyFiles("d", nFiles/2)
	for k, v := range manyFiles("d/sub", nFiles/2) {
		files[k] = v
	}
	m, n := countingMount(t, files)
	grep := func() { prog(t, m.dir, "grep", "-rc", "grep", "d") }
	during(n, grep)
	// stray: a clean-clone CI under -race once counted READ 2 after the
	// first read and GETATTR 2 warm (two files' cache dropped between
	// passes, cause not found yet); without FOPEN_KEEP_CACHE it would be
	// READ 1,000, so a 1% allowance keeps the budget's point.
	const stray = nFiles / 100
	budget(t, "grep -r, after the first read", during(n, grep), map[string]int64{
		"OPEN": nFiles, "GETATTR": nFiles + 2 + stray, "READ": stray, "OPENDIR": 3, "STATFS": 1,
	}, "one OPEN a file, plus one GETATTR a file or directory read before (its atime marked stale by the READ); no READ (1% stray), no FLUSH")
	budget(t, "grep -r, warm", during(n, grep), map[string]int64{"OPEN": nFiles, "GETATTR": stray, "READ": stray, "OPENDIR": 3, "STATFS": 1},
		"one OPEN a file; an OPENDIR a directory (3 for the 2, measured), the listings cached; grep's fstatfs of the top asks once (1% stray)")
}

// sed -i on one file: a temp file renamed over the original
// (FUSE-NOTES: exclusive create, fchown, ACL copy, write, rename).
func TestRequestsSedInPlace(t *testing.T) {
	m, n := countingMount(t, manyFiles("d", 3))
	prog(t, m.dir, "cat", "d/f0001.md")
	budget(t, "sed -i", during(n, func() { prog(t, m.dir, "sed", "-i", "s/note/NOTE/", "d/f0001.md") }), map[string]int64{
		"OPEN": 1, "READ": 1, "LOOKUP": 2, "CREATE": 1, "GETATTR": 3, "SETATTR": 2,
		"GETXATTR": 3, "SETXATTR": 1, "IOCTL": 1, "WRITE": 1, "FLUSH": 1, "RENAME": 1,
	}, "open and read the original; LOOKUP and exclusive CREATE of the temp file; fchown and fchmod (SETATTR 2); "+
		"the ACL copy (GETXATTR of the original's ACL and label, SETXATTR of the temp's); sed's FIONREAD-style ioctl; "+
		"one WRITE, the FLUSH that commits it, the RENAME over the original; GETATTR of the original (its atime, stale after the "+
		"cat's READ) and of d after its changes")
	if got := readFile(t, filepath.Join(m.dir, "d/f0001.md")); !strings.HasPrefix(got, "NOTE 1") {
		t.Errorf("after sed -i: %q", got)
	}
}

// An editor's save: vim, with no vimrc (its defaults: a swap file, the
// 4913 probe, a backup, write, fsync).
func TestRequestsVimSave(t *testing.T) {
	m, n := countingMount(t, manyFiles("d", 3))
	prog(t, m.dir, "cat", "d/f0001.md")
	got := during(n, func() {
		prog(t, m.dir, "vim", "-u", "NONE", "-i", "NONE", "-N", "-es", "-c", "normal Gox", "-c", "wq", "d/f0001.md")
	})
	budget(t, "vim save", got, map[string]int64{
		"LOOKUP": 6, "CREATE": 3, "OPEN": 3, "OPENDIR": 3, "GETATTR": 7, "SETATTR": 3, "GETXATTR": 5, "SETXATTR": 1,
		"WRITE": 6, "FLUSH": 4, "FSYNC": 2, "UNLINK": 3, "READ": 1,
	}, "vim's save protocol (FUSE-NOTES): swap file (create, writes, fsync, unlink), the 4913 probe (create, fchown, unlink), "+
		"the file rewritten in place (open, write, fsync, ACL copy: security.selinux read, the ACL kept by the kernel); "+
		"one security.capability read per new inode written (8 GETXATTR before HANDLE_KILLPRIV_V2 and POSIX ACLs); "+
		"GETATTR of d after each change in it")
	if got := readFile(t, filepath.Join(m.dir, "d/f0001.md")); !strings.HasSuffix(got, "x\n") {
		t.Errorf("after vim's save: %q", got)
	}
}

// git status in a repository of 1,000 files, warm.
func TestRequestsGitStatus(t *testing.T) {
	m, n := countingMount(t, manyFiles("repo", nFiles))
	repo := filepath.Join(m.dir, "repo")
	prog(t, repo, "git", "init", "-q")
	prog(t, repo, "git", "add", "-A")
	prog(t, repo, "git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "x")
	prog(t, repo, "git", "status", "--porcelain")
	got := during(n, func() { prog(t, repo, "git", "status", "--porcelain") })
	budget(t, "git status, warm", got, map[string]int64{
		"LOOKUP": 4, "OPEN": 20, "OPENDIR": 4, "GETATTR": 4, "CREATE": 1, "FLUSH": 1, "UNLINK": 1,
	}, "no request per tracked file (lstat is answered by the kernel); git opens its own files "+
		"(HEAD, config, index, refs, info/exclude: ~16 OPENs) and the directories it scans for untracked files; "+
		"the index.lock it creates and removes when nothing changed (CREATE, FLUSH, UNLINK, LOOKUPs and GETATTRs of .git)")
	if got["LOOKUP"]+got["GETATTR"] >= nFiles {
		t.Errorf("git status asked memfs per tracked file: %v", got)
	}
}

// A create and a close.
func TestRequestsCreateClose(t *testing.T) {
	m, n := countingMount(t, manyFiles("d", 3))
	prog(t, m.dir, "ls", "d")
	got := during(n, func() {
		f, err := os.Create(filepath.Join(m.dir, "d/new.md"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	})
	budget(t, "create + close", got, map[string]int64{"LOOKUP": 1, "CREATE": 1, "GETATTR": 1, "FLUSH": 1},
		"the LOOKUP of the missing name, the CREATE, the FLUSH that commits the file to the journal at close; "+
			"the kernel drops d's attributes at every change in it and asks them again (GETATTR)")
}

// A file written in 20 writes: no request but the writes, and no
// GETXATTR of security.capability before each (HANDLE_KILLPRIV_V2: memfs
// clears setuid and setgid itself, TestKillPrivByOtherWriter).
func TestRequestsWrite(t *testing.T) {
	m, n := countingMount(t, manyFiles("d", 3))
	dd := func(conv string) fsnode.RequestCounts {
		return during(n, func() {
			prog(t, m.dir, "dd", "if=/dev/zero", "of=d/big", "bs=64k", "count=20", "conv="+conv, "status=none")
		})
	}
	budget(t, "dd, new file", dd("fsync"), map[string]int64{"LOOKUP": 2, "CREATE": 1, "WRITE": 20, "FSYNC": 1, "FLUSH": 2, "GETXATTR": 1},
		"the LOOKUP of the missing name (and of d), CREATE, one WRITE a write(2), the fsync, the FLUSH "+
			"of each descriptor dd closed (it dups its output); one GETXATTR of security.capability at the "+
			"inode's first write, then the kernel marks it S_NOSEC (20 without HANDLE_KILLPRIV_V2)")
	budget(t, "dd, over the file", dd("notrunc"), map[string]int64{"OPEN": 1, "GETATTR": 1, "WRITE": 20, "FLUSH": 2},
		"OPEN, one WRITE a write(2), a GETATTR after the writes, FLUSH per descriptor; no GETXATTR (the inode is S_NOSEC)")
}

// With HANDLE_KILLPRIV_V2 the kernel leaves clearing setuid and setgid to
// memfs: a write, a truncate or an O_TRUNC open by a user without
// CAP_FSETID, and any chown, clear them as on a native filesystem
// (setgid only with group execute).
func TestKillPrivByOtherWriter(t *testing.T) {
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("this test runs commands as another user with setpriv (util-linux): %v", err)
	}
	m := mount(t, newDirStore(t, t.TempDir()), mountConfig{mopts: fsnode.MountOptions{AllowOther: true}})
	if err := os.Chmod(filepath.Dir(m.dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(m.dir, "d"), 0o777); err != nil {
		t.Fatal(err)
	}
	const suidgid = os.ModeSetuid | os.ModeSetgid
	cases := []struct {
		name string
		as   []string // setpriv's arguments; nil: root
		cmd  string   // sh -c, $1 the file
		mode os.FileMode
		want os.FileMode
	}{
		{"write by another user", []string{"--reuid=65534", "--regid=65534", "--clear-groups"}, `echo x >> "$1"`, suidgid | 0o777, 0o777},
		{"write keeps setgid without group execute", []string{"--reuid=65534", "--regid=65534", "--clear-groups"}, `echo x >> "$1"`, suidgid | 0o767, os.ModeSetgid | 0o767},
		{"truncate by another user", []string{"--reuid=65534", "--regid=65534", "--clear-groups"}, `truncate -s 1 "$1"`, suidgid | 0o777, 0o777},
		{"O_TRUNC open by another user", []string{"--reuid=65534", "--regid=65534", "--clear-groups"}, `: > "$1"`, suidgid | 0o777, 0o777},
		{"chown by root", nil, `chown 0:0 "$1"`, suidgid | 0o755, 0o755},
		{"write by root keeps them", nil, `echo x >> "$1"`, suidgid | 0o755, suidgid | 0o755},
	}
	for i, c := range cases {
		p := filepath.Join(m.dir, "d", fmt.Sprintf("f%d", i))
		if err := os.WriteFile(p, []byte("data\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, c.mode); err != nil {
			t.Fatal(err)
		}
		argv := []string{"sh", "-c", c.cmd, "sh", p}
		if c.as != nil {
			argv = append(append(append([]string{"setpriv"}, c.as...), "--"), argv...)
		}
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		st, err := m.c.Stat("d/" + filepath.Base(p))
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode & (os.ModePerm | suidgid); got != c.want {
			t.Errorf("%s: mode %v in the session, want %v", c.name, got, c.want)
		}
		// What the kernel shows at once (no attribute left stale).
		if fi, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", c.name, err)
		} else if got := fi.Mode() & (os.ModePerm | suidgid); got != c.want {
			t.Errorf("%s: stat through the mount = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSteadyKeysStayCached: the kernel keeps the names and attributes of
// a steady key (a read-only route's, Options.Steady) long after the
// mount's own timeout has let the others go: a stat of one then asks
// memfs only for the route's own directory, which is no steady key.
func TestSteadyKeysStayCached(t *testing.T) {
	st := newDirStore(t, t.TempDir())
	seedStore(t, st, map[string]string{"skills/git/SKILL.md": "team\n", "memory/git/SKILL.md": "mine\n"})
	n := &fsnode.Requests{}
	m := mount(t, st, mountConfig{
		fopts: fsnode.Options{EntryTimeout: time.Nanosecond, AttrTimeout: time.Nanosecond, NegativeTimeout: time.Nanosecond,
			Steady: func(key string) bool { return strings.HasPrefix(key, "skills/") }},
		mopts: fsnode.MountOptions{Requests: n},
	})
	stat := func(rel string) int64 {
		c := during(n, func() {
			if _, err := os.Stat(filepath.Join(m.dir, rel)); err != nil {
				t.Fatal(err)
			}
		})
		return c["LOOKUP"] + c["GETATTR"]
	}
	stat("skills/git/SKILL.md")
	stat("memory/git/SKILL.md")
	// Once the mount's timeout (a jiffy) has let the names go, a stat of
	// memory/git/SKILL.md asks memfs for each of its three names again.
	await.True(t, "the names under memory/ to expire", 10*time.Second, func() bool { return stat("memory/git/SKILL.md") >= 3 })
	if got := stat("skills/git/SKILL.md"); got != 1 {
		t.Errorf("a stat of a steady key cost %d lookups and getattrs, want 1 (skills, the route's directory)", got)
	}
}

// TestEveryKeySteady: with every key steady (the engine's default, when
// every change reaches the kernel), a second stat of each of 100 files,
// long after the mount's own timeouts, asks memfs nothing; a change
// behind the kernel (another writer's) is seen at once all the same: a
// new size, a new file, a file gone.
func TestEveryKeySteady(t *testing.T) {
	st := newDirStore(t, t.TempDir())
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("memory/n%02d.md", i)] = "note\n"
	}
	seedStore(t, st, files)
	n := &fsnode.Requests{}
	m := mount(t, st, mountConfig{
		fopts: fsnode.Options{EntryTimeout: time.Nanosecond, AttrTimeout: time.Nanosecond, NegativeTimeout: time.Nanosecond,
			Steady: func(string) bool { return true }},
		mopts: fsnode.MountOptions{Requests: n},
	})
	statAll := func() fsnode.RequestCounts {
		return during(n, func() {
			for k := range files {
				if _, err := os.Stat(filepath.Join(m.dir, k)); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	statAll()
	time.Sleep(10 * time.Millisecond) // far past the mount's own timeouts (a jiffy)
	if c := statAll(); c["LOOKUP"]+c["GETATTR"] != 0 {
		t.Errorf("a second stat of 100 steady files: %v, want no LOOKUP or GETATTR", c)
	}
	at := func(k string) string { return filepath.Join(m.dir, k) }
	ext := m.c.External()
	entry := func(k, v string) backend.Entry {
		return backend.Entry{Key: k, Value: []byte(v), Info: backend.Info{Mode: 0o644, Size: int64(len(v)), MTime: time.Now()}}
	}
	if _, err := ext.Apply(entry("memory/n05.md", "rewritten by another program\n")); err != nil {
		t.Fatal(err)
	}
	await.True(t, "another writer's new size", 5*time.Second, func() bool {
		fi, err := os.Stat(at("memory/n05.md"))
		return err == nil && fi.Size() == int64(len("rewritten by another program\n"))
	})
	if _, err := ext.Apply(entry("memory/new.md", "theirs\n")); err != nil {
		t.Fatal(err)
	}
	await.True(t, "another writer's new file", 5*time.Second, func() bool { _, err := os.Stat(at("memory/new.md")); return err == nil })
	if _, err := ext.Remove("memory/n06.md"); err != nil {
		t.Fatal(err)
	}
	await.True(t, "another writer's removal", 5*time.Second, func() bool {
		_, err := os.Stat(at("memory/n06.md"))
		return errors.Is(err, fs.ErrNotExist)
	})
}
