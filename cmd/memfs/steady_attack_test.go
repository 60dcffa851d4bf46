package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/await"
)

// The steady kernel cache under attack (commit a2b360a): with neither
// --attr-timeout nor --entry-timeout given, the kernel keeps a file's
// name and attributes for up to an hour (fsnode.SteadyTimeout), and
// memfs must tell it of every change it did not see itself. Each test
// primes the kernel's caches (stat, ls, read) on the mount, has another
// writer (a program on a dir store, the other mount of an etcd
// namespace) or memfs itself change the file, and waits a few seconds
// for the mount to show the change: a stat's size, mode, owner, nlink,
// mtime, a read, a listing.
//
// MEMFS_STEADY_ATTACK_SHORT=1 mounts with --attr-timeout 1s
// --entry-timeout 1s instead (the control: a test that fails on the
// steady default and passes so is a steady-caching bug).
// MEMFS_STEADY_WAIT=30s waits longer (to tell a slow change from one
// never shown).
//
// Against a2b360a, four of these failed on the steady default and passed
// with 1 s (TestSteadyAttackEtcdDirMetadataMerge,
// TestSteadyAttackEtcdDirMergeAllowOther: a confidentiality bug,
// TestSteadyAttackEtcdLinkRounds, TestSteadyAttackEtcdNewLinkedPair);
// they are mended. The rest held, and each covers a real risk of it.

// steadyWait is how long a test waits for a change to show.
var steadyWait = 5 * time.Second

func init() {
	if d, err := time.ParseDuration(os.Getenv("MEMFS_STEADY_WAIT")); err == nil {
		steadyWait = d
	}
}

// steadyFlags are the mount flags of the tests: extra, and the 1 s
// timeouts when MEMFS_STEADY_ATTACK_SHORT is set.
func steadyFlags(extra ...string) []string {
	if os.Getenv("MEMFS_STEADY_ATTACK_SHORT") != "" {
		extra = append(extra, "--attr-timeout", "1s", "--entry-timeout", "1s")
	}
	return extra
}

// node is what stat(2) (lstat) says of a path on the mount.
type node struct {
	err          error
	mode         os.FileMode
	size         int64
	uid, gid     uint32
	nlink        uint64
	ino          uint64
	mtime        time.Time
	dir, regular bool
}

func look(p string) node {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return node{err: err}
	}
	fi, _ := os.Lstat(p)
	n := node{size: st.Size, uid: st.Uid, gid: st.Gid, nlink: uint64(st.Nlink), ino: st.Ino,
		mtime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec)}
	if fi != nil {
		n.mode = fi.Mode()
		n.dir, n.regular = fi.IsDir(), fi.Mode().IsRegular()
	}
	return n
}

func (n node) String() string {
	if n.err != nil {
		return n.err.Error()
	}
	return fmt.Sprintf("mode %v size %d uid %d gid %d nlink %d ino %d mtime %s", n.mode, n.size, n.uid, n.gid, n.nlink, n.ino,
		n.mtime.UTC().Format(time.RFC3339Nano))
}

func gone(p string) bool {
	_, err := os.Lstat(p)
	return errors.Is(err, fs.ErrNotExist)
}

// listNames lists dir on the mount (nil on error).
func listNames(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// expect waits steadyWait for cond, which also says what it saw, and
// fails t with the last thing seen.
func expect(t *testing.T, what string, cond func() (bool, string)) bool {
	t.Helper()
	var seen string
	if await.Cond(steadyWait, 10*time.Millisecond, func() bool {
		var ok bool
		ok, seen = cond()
		return ok
	}) {
		return true
	}
	t.Errorf("after %v, %s: still sees %s", steadyWait, what, seen)
	return false
}

// prime has the kernel cache what it can of each path: its name and
// attributes (stat), its parent's listing, and its pages (a read); then,
// until the test ends, it stats the path and its parent over and over
// (statLoop): a state memfs passes through on the way to the new one is
// cached by the kernel, as it would be for a program polling the file.
func prime(t *testing.T, paths ...string) {
	hammered.Lock()
	if hammered.paths == nil {
		hammered.paths = map[string]bool{}
	}
	var loop []string
	for _, p := range paths {
		for _, q := range []string{p, filepath.Dir(p)} {
			if !hammered.paths[q] {
				hammered.paths[q] = true
				loop = append(loop, q)
			}
		}
	}
	hammered.Unlock()
	if len(loop) > 0 {
		stop := statLoop(loop...)
		t.Cleanup(func() {
			stop()
			hammered.Lock()
			for _, q := range loop {
				delete(hammered.paths, q)
			}
			hammered.Unlock()
		})
	}
	for _, p := range paths {
		os.Lstat(p)
		os.ReadDir(filepath.Dir(p))
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			os.ReadFile(p)
		}
	}
}

// statLoop stats paths over and over, as a program polling them does
// (a build tool, watch ls -l), until the returned stop is called: any
// moment at which memfs's view passes through an intermediate state is
// then caught by the kernel's cache.
func statLoop(paths ...string) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-done:
				return
			default:
			}
			for _, p := range paths {
				var st syscall.Stat_t
				syscall.Lstat(p, &st)
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	return func() { close(done); <-ended }
}

// hammered are the paths a statLoop of the running test stats.
var hammered struct {
	sync.Mutex
	paths map[string]bool
}

// dirStoreMount makes a dir store holding files (key -> content, mode
// 0644) and mounts it.
func dirStoreMount(t *testing.T, files map[string]string, extra ...string) (store, mnt string, p *memfsProc) {
	t.Helper()
	store = t.TempDir()
	for k, v := range files {
		path := filepath.Join(store, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mnt = t.TempDir()
	p = startMount(t, "dir:"+store, mnt, nil, steadyFlags(extra...)...)
	return store, mnt, p
}

// Held on the steady default: another program's chmod 600 and chown of
// a file in a dir store reach the mount's stat.
func TestSteadyAttackDirChmodChown(t *testing.T) {
	store, mnt, _ := dirStoreMount(t, map[string]string{"memory/a.md": "a note\n"})
	a := filepath.Join(mnt, "memory/a.md")
	prime(t, a)
	if n := look(a); n.mode.Perm() != 0o644 {
		t.Fatalf("before: %v", n)
	}
	sh(t, store, "chmod 600 memory/a.md")
	expect(t, "chmod 600 in the store", func() (bool, string) { n := look(a); return n.mode.Perm() == 0o600, n.String() })
	prime(t, a)
	sh(t, store, "chown 1234:5678 memory/a.md")
	expect(t, "chown 1234:5678 in the store", func() (bool, string) { n := look(a); return n.uid == 1234 && n.gid == 5678, n.String() })
}

// Held on the steady default: another program's mv a b, rm, and mv of a
// directory: the old names go (stat and listing), the new ones come
// with their sizes.
func TestSteadyAttackDirRenameRemove(t *testing.T) {
	store, mnt, _ := dirStoreMount(t, map[string]string{
		"memory/a.md": "alpha\n", "memory/gone.md": "to be removed\n", "memory/d/x.md": "in d\n",
	})
	m := func(k string) string { return filepath.Join(mnt, k) }
	prime(t, m("memory/a.md"), m("memory/gone.md"), m("memory/d/x.md"), m("memory/b.md"), m("memory/e/x.md"))
	sh(t, store, "mv memory/a.md memory/b.md && rm memory/gone.md && mv memory/d memory/e")
	expect(t, "mv a b", func() (bool, string) {
		b := look(m("memory/b.md"))
		return gone(m("memory/a.md")) && b.size == 6 && readBack(m("memory/b.md")) == "alpha\n",
			fmt.Sprintf("a: %v; b: %v", look(m("memory/a.md")), b)
	})
	expect(t, "rm gone.md", func() (bool, string) { return gone(m("memory/gone.md")), look(m("memory/gone.md")).String() })
	expect(t, "mv d e", func() (bool, string) {
		return gone(m("memory/d/x.md")) && gone(m("memory/d")) && readBack(m("memory/e/x.md")) == "in d\n",
			fmt.Sprintf("d/x: %v; e/x: %v", look(m("memory/d/x.md")), look(m("memory/e/x.md")))
	})
	expect(t, "the listing", func() (bool, string) {
		l := listNames(m("memory"))
		return slices.Equal(l, []string{"b.md", "e"}), fmt.Sprint(l)
	})
}

// Held on the steady default: another program's echo >> and truncate -s:
// the mount's stat has the new size, and a read the new content (not
// cut short at the old size, nor padded).
func TestSteadyAttackDirAppendTruncate(t *testing.T) {
	store, mnt, _ := dirStoreMount(t, map[string]string{"memory/a.md": "one\n"})
	a := filepath.Join(mnt, "memory/a.md")
	prime(t, a)
	sh(t, store, "echo two >> memory/a.md")
	expect(t, "echo >> in the store", func() (bool, string) {
		n := look(a)
		got := readBack(a)
		return n.size == 8 && got == "one\ntwo\n", fmt.Sprintf("%v, reads %q", n, got)
	})
	prime(t, a)
	sh(t, store, "truncate -s 2 memory/a.md")
	expect(t, "truncate -s 2 in the store", func() (bool, string) {
		n := look(a)
		got := readBack(a)
		return n.size == 2 && got == "on", fmt.Sprintf("%v, reads %q", n, got)
	})
}

// Held on the steady default: another program's touch -d (the mtime
// alone, which make and git decide on).
func TestSteadyAttackDirTouchMtime(t *testing.T) {
	store, mnt, _ := dirStoreMount(t, map[string]string{"memory/a.md": "one\n"})
	a := filepath.Join(mnt, "memory/a.md")
	prime(t, a)
	sh(t, store, "touch -m -d '2001-02-03 04:05:06Z' memory/a.md")
	want := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	expect(t, "touch -d in the store", func() (bool, string) { n := look(a); return n.mtime.Equal(want), n.String() })
}

// Held on the steady default: another program's mkdir and rmdir: the
// listing, and the parent's link count.
func TestSteadyAttackDirMkdirRmdir(t *testing.T) {
	store, mnt, _ := dirStoreMount(t, map[string]string{"memory/a.md": "one\n"})
	mem := filepath.Join(mnt, "memory")
	prime(t, mem, filepath.Join(mem, "a.md"), filepath.Join(mem, "sub"))
	before := look(mem)
	sh(t, store, "mkdir memory/sub")
	expect(t, "mkdir in the store", func() (bool, string) {
		n, l := look(mem), listNames(mem)
		return slices.Contains(l, "sub") && look(filepath.Join(mem, "sub")).dir && n.nlink == before.nlink+1,
			fmt.Sprintf("memory %v, lists %v", n, l)
	})
	prime(t, filepath.Join(mem, "sub"))
	sh(t, store, "rmdir memory/sub")
	expect(t, "rmdir in the store", func() (bool, string) {
		n, l := look(mem), listNames(mem)
		return !slices.Contains(l, "sub") && gone(filepath.Join(mem, "sub")) && n.nlink == before.nlink,
			fmt.Sprintf("memory %v, lists %v", n, l)
	})
}

// Held on the steady default. Another program links a file of the store
// (ln a c), appends through c, then removes the link: the mount's a and c are one node with nlink 2, then a alone with
// nlink 1.
func TestSteadyAttackDirHardLink(t *testing.T) {
	store, mnt, _ := dirStoreMount(t, map[string]string{"memory/a.md": "one\n"})
	a, c := filepath.Join(mnt, "memory/a.md"), filepath.Join(mnt, "memory/c.md")
	prime(t, a, c)
	sh(t, store, "ln memory/a.md memory/c.md")
	expect(t, "ln a c in the store", func() (bool, string) {
		na, nc := look(a), look(c)
		return na.nlink == 2 && nc.nlink == 2 && na.ino == nc.ino, fmt.Sprintf("a: %v; c: %v", na, nc)
	})
	prime(t, a, c)
	sh(t, store, "echo more >> memory/c.md")
	expect(t, "echo >> c in the store, seen through a", func() (bool, string) {
		na := look(a)
		got := readBack(a)
		return na.size == 9 && got == "one\nmore\n", fmt.Sprintf("a: %v, reads %q", na, got)
	})
	prime(t, a, c)
	sh(t, store, "rm memory/c.md")
	expect(t, "rm c in the store", func() (bool, string) {
		na := look(a)
		return gone(c) && na.nlink == 1, fmt.Sprintf("a: %v; c: %v", na, look(c))
	})
}

// Held on the steady default: git checkout of another branch in the
// store directory: files change size, mode (git's executable bit), go
// and come; the mount shows the other branch's tree. (The mount's .git
// itself stays on the old branch, with 1 s timeouts too: hidden
// directories are not watched, as backend/dirstore/doc.go says, so git
// status on the mount is not asserted.)
func TestSteadyAttackDirGitCheckout(t *testing.T) {
	store, mnt, _ := dirStoreMount(t, map[string]string{})
	m := func(k string) string { return filepath.Join(mnt, k) }
	git := "git -c user.email=t@example.com -c user.name=t -c init.defaultBranch=main "
	// The branches are made through the mount: a repository of the
	// store's own, which the mount holds.
	sh(t, mnt, git+"init -q . && mkdir -p notes && printf 'short\\n' > notes/plan.md && printf 'old\\n' > notes/old.md && "+
		"printf '#!/bin/sh\\necho hi\\n' > notes/run.sh && chmod 644 notes/run.sh && "+
		git+"add -A && "+git+"commit -qm one && "+git+"checkout -qb other && "+
		"printf 'a much longer plan than before\\n' > notes/plan.md && rm notes/old.md && printf 'new\\n' > notes/new.md && chmod 755 notes/run.sh && "+
		git+"add -A && "+git+"commit -qm two && "+git+"checkout -q main")
	fsyncPath(t, m("notes/plan.md"))
	waitFor(t, "the store has main's tree", steadyWait, func() bool { return readBack(filepath.Join(store, "notes/plan.md")) == "short\n" })
	prime(t, m("notes/plan.md"), m("notes/old.md"), m("notes/new.md"), m("notes/run.sh"))
	sh(t, store, git+"checkout -q other")
	expect(t, "the other branch's tree on the mount", func() (bool, string) {
		plan, run, l := look(m("notes/plan.md")), look(m("notes/run.sh")), listNames(m("notes"))
		got := readBack(m("notes/plan.md"))
		ok := plan.size == 31 && got == "a much longer plan than before\n" && run.mode.Perm() == 0o755 &&
			gone(m("notes/old.md")) && readBack(m("notes/new.md")) == "new\n" && slices.Equal(l, []string{"new.md", "plan.md", "run.sh"})
		return ok, fmt.Sprintf("plan.md %v reads %q; run.sh %v; old.md %v; listing %v", plan, got, run, look(m("notes/old.md")), l)
	})
}

// Held on the steady default. With --allow-other (default_permissions:
// the kernel checks its cached
// mode), another program's chmod 600 of a file, and chmod 700 of a
// directory, in a dir store close them to uid 65534 reading through the
// mount.
func TestSteadyAttackDirChmodAllowOther(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root: it mounts with --allow-other and reads as uid %d", otherUID)
	}
	store := t.TempDir()
	sh(t, store, "mkdir -p memory/pub memory/box && printf 'public\\n' > memory/pub/a.md && printf 'boxed\\n' > memory/box/b.md && chmod 644 memory/pub/a.md memory/box/b.md")
	mnt := sharedDir(t)
	startMount(t, "dir:"+store, mnt, nil, steadyFlags("--allow-other")...)
	nobody := caller{name: "uid 65534", priv: []string{fmt.Sprintf("--reuid=%d", otherUID), fmt.Sprintf("--regid=%d", otherUID), "--clear-groups"}}
	a, b := filepath.Join(mnt, "memory/pub/a.md"), filepath.Join(mnt, "memory/box/b.md")
	for _, p := range []string{a, b} {
		if out, err := nobody.run(t, "/", "cat", p); err != nil {
			t.Fatalf("uid 65534 cannot read %s before: %v %s", p, err, out)
		}
	}
	sh(t, store, "chmod 600 memory/pub/a.md && chmod 700 memory/box")
	for _, p := range []string{a, b} {
		expect(t, "uid 65534 refused "+p, func() (bool, string) {
			out, err := nobody.run(t, "/", "cat", p)
			return err != nil && strings.Contains(out, "Permission denied"), fmt.Sprintf("cat: %v %q (%v)", err, out, look(p))
		})
	}
}

// Held on the steady default: the root is steady too; a file another
// program makes at the root, and one it removes there, show in its
// listing. (Another program's chmod of the store's root directory never
// reaches the mount, with 1 s timeouts too: not a matter of caching, and
// not asserted here.)
func TestSteadyAttackDirRoot(t *testing.T) {
	store, mnt, _ := dirStoreMount(t, map[string]string{"top.md": "top\n"})
	prime(t, mnt, filepath.Join(mnt, "top.md"), filepath.Join(mnt, "new.md"))
	sh(t, store, "printf 'new\\n' > new.md && rm top.md")
	expect(t, "the root's listing", func() (bool, string) {
		l := listNames(mnt)
		return slices.Contains(l, "new.md") && !slices.Contains(l, "top.md") && readBack(filepath.Join(mnt, "new.md")) == "new\n" &&
			gone(filepath.Join(mnt, "top.md")), fmt.Sprintf("lists %v", l)
	})
}

// Held on the steady default. A dir store's conflict (keep-beside): a file written through the mount,
// not flushed, that another program rewrites: the mount keeps its value
// under the name and shows theirs beside, listed, with its size.
func TestSteadyAttackDirConflictCopy(t *testing.T) {
	store, mnt, _ := dirStoreMount(t, map[string]string{"memory/n.md": "base\n"})
	n := filepath.Join(mnt, "memory/n.md")
	prime(t, n)
	if err := os.WriteFile(n, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prime(t, n)
	sh(t, store, "printf 'their longer version\\n' > memory/n.md")
	var copy string
	expect(t, "a conflict copy listed, with their size", func() (bool, string) {
		l := listNames(filepath.Join(mnt, "memory"))
		for _, e := range l {
			if strings.HasPrefix(e, "n.conflict-") {
				copy = e
				c := filepath.Join(mnt, "memory", e)
				return look(c).size == 21 && readBack(c) == "their longer version\n", fmt.Sprintf("%s: %v", e, look(c))
			}
		}
		return false, fmt.Sprint(l)
	})
	if got, sz := readBack(n), look(n).size; got != "mine\n" || sz != 5 {
		t.Errorf("n.md: %q, size %d; want mine (5)", got, sz)
	}
	_ = copy
}

// Held on the steady default. A directory of another program's where
// the mount has an unflushed
// file: at the flush the directory keeps the name and the mount's file is
// kept beside (memfs's own rename, behind the kernel).
func TestSteadyAttackDirYieldsToDirectory(t *testing.T) {
	store, mnt, _ := dirStoreMount(t, map[string]string{"memory/x": "file\n"})
	x := filepath.Join(mnt, "memory/x")
	if err := os.WriteFile(x, []byte("mine, unflushed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prime(t, x)
	sh(t, store, "rm memory/x && mkdir memory/x && printf 'theirs\\n' > memory/x/inner.md")
	fsyncPath(t, filepath.Join(mnt, "memory"))
	expect(t, "x a directory, ours beside", func() (bool, string) {
		n, l := look(x), listNames(filepath.Join(mnt, "memory"))
		var copy string
		for _, e := range l {
			if strings.HasPrefix(e, "x.conflict") {
				copy = e
			}
		}
		return n.dir && readBack(filepath.Join(x, "inner.md")) == "theirs\n" && copy != "" &&
				readBack(filepath.Join(mnt, "memory", copy)) == "mine, unflushed\n",
			fmt.Sprintf("x: %v; listing %v", n, l)
	})
}

// Held on the steady default. A file written through the mount,
// unflushed, that another program rewrites just before the mount's fsync (inside the watcher's 50 ms):
// the flush keeps the displaced version as a copy; the mount lists it,
// with its size, and keeps its own under the name.
func TestSteadyAttackDirFlushMeetsExternalWrite(t *testing.T) {
	store, mnt, _ := dirStoreMount(t, map[string]string{"memory/n.md": "base\n"})
	n := filepath.Join(mnt, "memory/n.md")
	prime(t, n)
	if err := os.WriteFile(n, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "memory/n.md"), []byte("their longer version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, n)
	expect(t, "theirs beside, listed, with its size; mine under the name", func() (bool, string) {
		l := listNames(filepath.Join(mnt, "memory"))
		nn := look(n)
		for _, e := range l {
			if strings.HasPrefix(e, "n.conflict") {
				c := filepath.Join(mnt, "memory", e)
				return look(c).size == 21 && readBack(c) == "their longer version\n" && nn.size == 5 && readBack(n) == "mine\n",
					fmt.Sprintf("%s: %v; n.md %v reads %q", e, look(c), nn, readBack(n))
			}
		}
		return false, fmt.Sprintf("listing %v; n.md %v reads %q", l, nn, readBack(n))
	})
}

// Held on the steady default. On etcd, B removes a file (unsaved) that A rewrote and saved: B's
// save brings A's version back (docs/conflicts.md), with its size.
func TestSteadyAttackEtcdRemovalRestored(t *testing.T) {
	a, b := etcdPair(t, map[string]string{"memory/n.md": "base\n"})
	inA, inB := filepath.Join(a.mnt, "memory/n.md"), filepath.Join(b.mnt, "memory/n.md")
	prime(t, inB)
	if err := os.Remove(inB); err != nil {
		t.Fatal(err)
	}
	if err := writeSync(inA, []byte("alice's longer version\n")); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, filepath.Join(b.mnt, "memory"))
	expect(t, "B shows A's version back", func() (bool, string) {
		nn, got := look(inB), readBack(inB)
		return nn.size == 23 && got == "alice's longer version\n" && slices.Contains(listNames(filepath.Dir(inB)), "n.md"), fmt.Sprintf("%v reads %q", nn, got)
	})
}

// Held on the steady default. Expiry (user.memfs.ttl): the file goes
// from stat and listing.
func TestSteadyAttackExpiry(t *testing.T) {
	_, mnt, _ := dirStoreMount(t, map[string]string{})
	m := func(k string) string { return filepath.Join(mnt, k) }
	if err := os.WriteFile(m("memory/short.md"), []byte("short-lived\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setxattr(m("memory/short.md"), "user.memfs.ttl", []byte("2s"), 0); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, m("memory/short.md"))
	prime(t, m("memory/short.md"))
	expect(t, "short.md expired", func() (bool, string) {
		l := listNames(m("memory"))
		return gone(m("memory/short.md")) && !slices.Contains(l, "short.md"), fmt.Sprintf("%v, listing %v", look(m("memory/short.md")), l)
	})
}

// Held on the steady default. A file with two names (ln through the
// mount), whose one name another
// program replaces by an editor's atomic save (write a temp file, mv it
// over the name): that name is a node of its own now, and the other keeps
// the old node, with nlink 1.
func TestSteadyAttackDirHardLinkEditorSave(t *testing.T) {
	store, mnt, _ := dirStoreMount(t, map[string]string{"memory/a.md": "one\n"})
	a, c := filepath.Join(mnt, "memory/a.md"), filepath.Join(mnt, "memory/c.md")
	if err := os.Link(a, c); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, a)
	waitFor(t, "the store has the link", steadyWait, func() bool {
		fi, err := os.Stat(filepath.Join(store, "memory/c.md"))
		return err == nil && fi.Sys().(*syscall.Stat_t).Nlink == 2
	})
	prime(t, a, c)
	if na := look(a); na.nlink != 2 {
		t.Fatalf("a before: %v", na)
	}
	sh(t, store, "printf 'their new version\\n' > memory/c.tmp && mv memory/c.tmp memory/c.md")
	expect(t, "c a node of its own, a the old one", func() (bool, string) {
		na, nc := look(a), look(c)
		ok := readBack(c) == "their new version\n" && nc.size == 18 && nc.nlink == 1 &&
			readBack(a) == "one\n" && na.size == 4 && na.nlink == 1 && na.ino != nc.ino
		return ok, fmt.Sprintf("a: %v reads %q; c: %v reads %q", na, readBack(a), nc, readBack(c))
	})
}

// mountHelperPID is the pid of the mount's helper process (a child of
// memfs), once it has started.
func mountHelperPID(t *testing.T, p *memfsProc) int {
	t.Helper()
	var pid int
	waitFor(t, "the mount's helper process", steadyWait, func() bool {
		out, _ := exec.Command("sh", "-c", fmt.Sprintf("cat /proc/%d/task/*/children", p.cmd.Process.Pid)).Output()
		f := strings.Fields(string(out))
		if len(f) == 0 {
			return false
		}
		fmt.Sscan(f[0], &pid)
		return pid > 0
	})
	return pid
}

// Held on the steady default. The helper that carries other programs'
// changes out through the
// mount dies (docs/stores.md: memfs then applies them to the mount
// directly): a removal of one name of a file with two names, which
// another program makes, leaves the other with nlink 1; a new file, a
// chmod, a new size and a removal show too.
func TestSteadyAttackDirWithoutHelper(t *testing.T) {
	store, mnt, p := dirStoreMount(t, map[string]string{"memory/a.md": "one\n", "memory/b.md": "bee\n"})
	m := func(k string) string { return filepath.Join(mnt, k) }
	sh(t, store, "printf 'x\\n' > memory/starter.md") // the helper starts on first use
	waitFor(t, "starter.md on the mount", steadyWait, func() bool { return readBack(m("memory/starter.md")) == "x\n" })
	pid := mountHelperPID(t, p)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "memfs to notice the helper's death", steadyWait, func() bool { return strings.Contains(p.log.String(), "helper") })
	if err := os.Link(m("memory/a.md"), m("memory/c.md")); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, m("memory/a.md"))
	prime(t, m("memory/a.md"), m("memory/c.md"), m("memory/b.md"), m("memory/starter.md"), m("memory/new.md"))
	sh(t, store, "rm memory/c.md && chmod 600 memory/b.md && printf 'longer now\\n' >> memory/starter.md && printf 'new\\n' > memory/new.md")
	expect(t, "the changes on the mount without the helper", func() (bool, string) {
		na, nb, ns := look(m("memory/a.md")), look(m("memory/b.md")), look(m("memory/starter.md"))
		ok := gone(m("memory/c.md")) && na.nlink == 1 && nb.mode.Perm() == 0o600 && ns.size == 13 &&
			readBack(m("memory/starter.md")) == "x\nlonger now\n" && readBack(m("memory/new.md")) == "new\n"
		return ok, fmt.Sprintf("a: %v; b: %v; starter: %v; c: %v; listing %v", na, nb, ns, look(m("memory/c.md")), listNames(m("memory")))
	})
}

// Held on the steady default. Expiry of one name of a file with two
// names: the other stays, with nlink 1.
func TestSteadyAttackExpiryHardLink(t *testing.T) {
	_, mnt, _ := dirStoreMount(t, map[string]string{})
	m := func(k string) string { return filepath.Join(mnt, k) }
	linkedWithTTL(t, m)
	expect(t, "a.md expired", func() (bool, string) {
		l := listNames(m("memory"))
		return gone(m("memory/a.md")) && !slices.Contains(l, "a.md"), fmt.Sprintf("%v, listing %v", look(m("memory/a.md")), l)
	})
	nb := look(m("memory/b.md"))
	l := listNames(m("memory"))
	t.Logf("after a.md expired: b.md %v, listing %v", nb, l)
	if nb.err == nil {
		expect(t, "b.md with nlink 1", func() (bool, string) { n := look(m("memory/b.md")); return n.nlink == 1, n.String() })
	}
}

// steadyToken is a fake GitHub token, which the default rules redact.
const steadyToken = "ghp_" + "R8dM2qLx7VbN4tKc9WzP3sHy6FjA1uEo5GiD"

// consistent reports whether path's stat size is the length of what a
// read gives (a stale size cuts a read short, or pads it), and what it
// saw.
func consistent(path string) (bool, node, string) {
	n, got := look(path), readBack(path)
	return n.err == nil && n.size == int64(len(got)), n, got
}

// Held on the steady default: secrets and the sizes they change. A value
// with a secret another program left in a dir store before the mount
// (loaded lazily: skills/), one it writes while mounted (memory/), and
// one written through the mount and closed: each stats at the size of
// what it reads, the others' redacted, the mount's own as written
// (docs/secrets.md).
func TestSteadyAttackDirSecretSizes(t *testing.T) {
	secret := "deploy with " + steadyToken + " then wait\n"
	store, mnt, _ := dirStoreMount(t, map[string]string{"skills/s.md": secret, "memory/n.md": "plain\n"})
	m := func(k string) string { return filepath.Join(mnt, k) }
	os.Lstat(m("skills/s.md")) // the store's size, before the load seals it
	prime(t, m("skills/s.md"), m("memory/n.md"))
	for _, k := range []string{"skills/s.md", "memory/n.md", "memory/mine.md"} {
		if k == "memory/n.md" {
			sh(t, store, "printf 'deploy with "+steadyToken+" then wait\\n' > memory/n.md")
		}
		if k == "memory/mine.md" {
			if err := os.WriteFile(m(k), []byte(secret), 0o644); err != nil {
				t.Fatal(err)
			}
			prime(t, m(k))
		}
		expect(t, k+": its size the length of what it reads", func() (bool, string) {
			ok, n, got := consistent(m(k))
			want := strings.Contains(got, "[REDACTED") && !strings.Contains(got, steadyToken)
			if k == "memory/mine.md" {
				want = got == secret
			}
			return ok && want, fmt.Sprintf("%v reads %q", n, got)
		})
	}
}

// Held on the steady default. Expiry without the helper (it died: memfs then removes the expired
// name itself, behind the kernel, and tells it with FUSE_NOTIFY_DELETE):
// one name of a file with two names expires; the other stays, with
// nlink 1.
func TestSteadyAttackExpiryHardLinkWithoutHelper(t *testing.T) {
	store, mnt, p := dirStoreMount(t, map[string]string{"memory/seed.md": "seed\n"})
	m := func(k string) string { return filepath.Join(mnt, k) }
	sh(t, store, "printf 'x\\n' > memory/starter.md") // the helper starts on first use
	waitFor(t, "starter.md on the mount", steadyWait, func() bool { return readBack(m("memory/starter.md")) == "x\n" })
	if err := syscall.Kill(mountHelperPID(t, p), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "memfs to notice the helper's death", steadyWait, func() bool { return strings.Contains(p.log.String(), "helper") })
	linkedWithTTL(t, m)
	expect(t, "a.md expired, b.md stays with nlink 1", func() (bool, string) {
		l, nb := listNames(m("memory")), look(m("memory/b.md"))
		return gone(m("memory/a.md")) && !slices.Contains(l, "a.md") && nb.nlink == 1 && readBack(m("memory/b.md")) == "short-lived\n",
			fmt.Sprintf("a: %v; b: %v; listing %v", look(m("memory/a.md")), nb, l)
	})
}

// --- etcd: two mounts of one namespace -----------------------------------

// etcdPair mounts A and B of a fresh namespace, writes files through A
// (fsynced) and waits until B reads each.
func etcdPair(t *testing.T, files map[string]string, extra ...string) (a, b *memfsProc) {
	t.Helper()
	a, b = twoMounts(t, sharedEtcdStore(t), sharedEnv(t), steadyFlags(extra...)...)
	for k, v := range files {
		p := filepath.Join(a.mnt, k)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeSync(p, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range files {
		waitFor(t, "B reads "+k, 10*time.Second, func() bool { return readBack(filepath.Join(b.mnt, k)) == v })
	}
	return a, b
}

// Held on the steady default: A's chmod 600, chown, and touch -d reach
// B's stat.
func TestSteadyAttackEtcdAttrs(t *testing.T) {
	a, b := etcdPair(t, map[string]string{"memory/a.md": "a note\n"})
	inA, inB := filepath.Join(a.mnt, "memory/a.md"), filepath.Join(b.mnt, "memory/a.md")
	prime(t, inB)
	sh(t, a.mnt, "chmod 600 memory/a.md && chown 1234:5678 memory/a.md")
	fsyncPath(t, inA)
	expect(t, "A's chmod 600 and chown on B", func() (bool, string) {
		n := look(inB)
		return n.mode.Perm() == 0o600 && n.uid == 1234 && n.gid == 5678, n.String()
	})
	prime(t, inB)
	sh(t, a.mnt, "touch -m -d '2001-02-03 04:05:06Z' memory/a.md")
	fsyncPath(t, inA)
	want := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	expect(t, "A's touch -d on B", func() (bool, string) { n := look(inB); return n.mtime.Equal(want), n.String() })
}

// Held on the steady default: A writes a secret into a file B has cached
// and saves it: B's stat has the size of the redacted value it reads; A's
// the size of what it wrote.
func TestSteadyAttackEtcdSecretSizes(t *testing.T) {
	a, b := etcdPair(t, map[string]string{"memory/n.md": "plain\n"})
	inA, inB := filepath.Join(a.mnt, "memory/n.md"), filepath.Join(b.mnt, "memory/n.md")
	prime(t, inA, inB)
	secret := "deploy with " + steadyToken + " then wait\n"
	if err := writeSync(inA, []byte(secret)); err != nil {
		t.Fatal(err)
	}
	prime(t, inA)
	expect(t, "B: the redacted value, at its size", func() (bool, string) {
		ok, n, got := consistent(inB)
		return ok && strings.Contains(got, "[REDACTED") && !strings.Contains(got, steadyToken), fmt.Sprintf("%v reads %q", n, got)
	})
	expect(t, "A: what it wrote, at its size", func() (bool, string) {
		ok, n, got := consistent(inA)
		return ok && got == secret, fmt.Sprintf("%v reads %q", n, got)
	})
}

// Held on the steady default: A's echo >> and truncate -s reach B's stat
// and reads.
func TestSteadyAttackEtcdSizes(t *testing.T) {
	a, b := etcdPair(t, map[string]string{"memory/a.md": "one\n"})
	inA, inB := filepath.Join(a.mnt, "memory/a.md"), filepath.Join(b.mnt, "memory/a.md")
	for _, step := range []struct{ what, cmd, want string }{
		{"A's echo >> on B", "echo two >> memory/a.md", "one\ntwo\n"},
		{"A's truncate -s 2 on B", "truncate -s 2 memory/a.md", "on"},
		{"A's rewrite of the same size on B", "printf 'ab' > memory/a.md", "ab"},
	} {
		prime(t, inB)
		sh(t, a.mnt, step.cmd)
		fsyncPath(t, inA)
		expect(t, step.what, func() (bool, string) {
			n, got := look(inB), readBack(inB)
			return n.size == int64(len(step.want)) && got == step.want, fmt.Sprintf("%v reads %q", n, got)
		})
	}
}

// Held on the steady default: A's mv, rm, mkdir, mkdir -p, rm -r and mv
// of a directory reach B: names, listings, the parent's nlink.
func TestSteadyAttackEtcdNames(t *testing.T) {
	a, b := etcdPair(t, map[string]string{"memory/a.md": "alpha\n", "memory/gone.md": "bye\n", "memory/e/x.md": "in e\n", "memory/f/y.md": "in f\n"})
	bm := func(k string) string { return filepath.Join(b.mnt, k) }
	prime(t, bm("memory/a.md"), bm("memory/b.md"), bm("memory/gone.md"), bm("memory/e/x.md"), bm("memory/sub"), bm("memory/f/y.md"), bm("memory/g/y.md"))
	before := look(bm("memory"))
	sh(t, a.mnt, "mv memory/a.md memory/b.md && rm memory/gone.md && mkdir memory/sub && mkdir -p memory/n1/n2 && printf 'deep\\n' > memory/n1/n2/z.md && "+
		"rm -r memory/e && mv memory/f memory/g")
	fsyncPath(t, filepath.Join(a.mnt, "memory"))
	expect(t, "A's changes of names on B", func() (bool, string) {
		mem, l := look(bm("memory")), listNames(bm("memory"))
		ok := gone(bm("memory/a.md")) && readBack(bm("memory/b.md")) == "alpha\n" && gone(bm("memory/gone.md")) &&
			look(bm("memory/sub")).dir && gone(bm("memory/e/x.md")) && gone(bm("memory/e")) &&
			gone(bm("memory/f/y.md")) && gone(bm("memory/f")) && readBack(bm("memory/g/y.md")) == "in f\n" &&
			readBack(bm("memory/n1/n2/z.md")) == "deep\n" &&
			slices.Equal(l, []string{"b.md", "g", "n1", "sub"}) && mem.nlink == before.nlink+1
		return ok, fmt.Sprintf("memory %v (before: nlink %d) lists %v; f/y %v; g/y %v", mem, before.nlink, l, look(bm("memory/f/y.md")), look(bm("memory/g/y.md")))
	})
}

// Held on the steady default: memfs conflicts resolve --keep mine (the
// command opens the etcd store itself, beside the mounts): both mounts
// show bob's version under the key, with its size, and the copy gone
// from stat and listing.
func TestSteadyAttackEtcdConflictsResolve(t *testing.T) {
	store := sharedEtcdStore(t)
	a, b := twoMounts(t, store, sharedEnv(t), steadyFlags()...)
	const key = "memory/plan.md"
	inA, inB := filepath.Join(a.mnt, key), filepath.Join(b.mnt, key)
	if err := writeSync(inA, []byte("base\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B reads the plan", 10*time.Second, func() bool { return readBack(inB) == "base\n" })
	if err := os.WriteFile(inB, []byte("bob's much longer plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSync(inA, []byte("alice's plan\n")); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, inB)
	var copy string
	for _, p := range []string{inA, inB} {
		waitFor(t, "the copy on "+p, 10*time.Second, func() bool {
			for _, e := range listNames(filepath.Dir(p)) {
				if strings.HasPrefix(e, "plan.conflict-") {
					copy = e
					return readBack(p) == "alice's plan\n"
				}
			}
			return false
		})
		prime(t, p, filepath.Join(filepath.Dir(p), copy))
	}
	mustRun(t, "", "conflicts", "resolve", "--store", store, "--keep", "mine", key)
	for _, p := range []string{inA, inB} {
		expect(t, p+" holds bob's plan, and no copy", func() (bool, string) {
			n, got, l := look(p), readBack(p), listNames(filepath.Dir(p))
			return n.size == 23 && got == "bob's much longer plan\n" && gone(filepath.Join(filepath.Dir(p), copy)) && !slices.Contains(l, copy),
				fmt.Sprintf("%v reads %q; listing %v", n, got, l)
		})
	}
}

// Held on the steady default. keep-both (the default), from BOTH mounts: A's version takes the name,
// B's is kept beside as a copy; each mount lists the copy and stats both
// files with their sizes.
func TestSteadyAttackEtcdKeepBothBothMounts(t *testing.T) {
	a, b := etcdPair(t, map[string]string{"memory/plan.md": "base\n"})
	inA, inB := filepath.Join(a.mnt, "memory/plan.md"), filepath.Join(b.mnt, "memory/plan.md")
	prime(t, inA, inB)
	if err := os.WriteFile(inB, []byte("bob's plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prime(t, inB)
	if err := writeSync(inA, []byte("alice's much longer plan\n")); err != nil {
		t.Fatal(err)
	}
	prime(t, inA)
	fsyncPath(t, inB)
	for _, m := range []*memfsProc{a, b} {
		dir := filepath.Join(m.mnt, "memory")
		expect(t, m.mnt+" shows alice's plan and bob's copy", func() (bool, string) {
			n, got := look(filepath.Join(dir, "plan.md")), readBack(filepath.Join(dir, "plan.md"))
			l := listNames(dir)
			var cp node
			var cgot string
			for _, e := range l {
				if strings.HasPrefix(e, "plan.conflict-") {
					cp, cgot = look(filepath.Join(dir, e)), readBack(filepath.Join(dir, e))
				}
			}
			ok := n.size == 25 && got == "alice's much longer plan\n" && cp.size == 11 && cgot == "bob's plan\n"
			return ok, fmt.Sprintf("plan.md %v reads %q; listing %v; copy %v reads %q", n, got, l, cp, cgot)
		})
	}
}

// Held on the steady default. merge and last-writer-wins, from BOTH
// mounts: each shows the outcome,
// with its size.
func TestSteadyAttackEtcdMergeAndLastWriterBothMounts(t *testing.T) {
	for _, tc := range []struct{ policy, want string }{
		{"merge", "one, alice\ntwo\nthree, and bob's longer line\n"},
		{"last-writer-wins", "one\ntwo\nthree, and bob's longer line\n"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			a, b := etcdPair(t, map[string]string{"memory/plan.md": "one\ntwo\nthree\n"}, "--on-conflict", tc.policy)
			inA, inB := filepath.Join(a.mnt, "memory/plan.md"), filepath.Join(b.mnt, "memory/plan.md")
			prime(t, inA, inB)
			if err := os.WriteFile(inB, []byte("one\ntwo\nthree, and bob's longer line\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			prime(t, inB)
			if err := writeSync(inA, []byte("one, alice\ntwo\nthree\n")); err != nil {
				t.Fatal(err)
			}
			prime(t, inA)
			fsyncPath(t, inB)
			for _, p := range []string{inA, inB} {
				expect(t, p+" shows the outcome", func() (bool, string) {
					n, got := look(p), readBack(p)
					return n.size == int64(len(tc.want)) && got == tc.want, fmt.Sprintf("%v reads %q", n, got)
				})
			}
		})
	}
}

// Held on the steady default. A metadata merge (docs/conflicts.md): B has unsaved content, A chmods
// the file 600 and saves; B's save keeps its content with the most
// restrictive mode: B's stat shows 0600, and A's shows B's content.
func TestSteadyAttackEtcdMergedMetadata(t *testing.T) {
	a, b := etcdPair(t, map[string]string{"memory/a.md": "base\n"})
	inA, inB := filepath.Join(a.mnt, "memory/a.md"), filepath.Join(b.mnt, "memory/a.md")
	prime(t, inA, inB)
	if err := os.WriteFile(inB, []byte("bob's longer content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prime(t, inB)
	if err := os.Chmod(inA, 0o600); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, inA)
	prime(t, inA)
	fsyncPath(t, inB)
	for _, p := range []string{inA, inB} {
		expect(t, p+": bob's content, mode 0600", func() (bool, string) {
			n, got := look(p), readBack(p)
			return n.mode.Perm() == 0o600 && n.size == 21 && got == "bob's longer content\n", fmt.Sprintf("%v reads %q", n, got)
		})
	}
}

// A directory's metadata merge: A chmods a directory 700 while B makes a
// file in it (B's directory unsaved): B's stat of the directory shows
// 0700, and A lists B's file.
//
// Failed on the steady default of a2b360a (B's d stayed drwxr-xr-x, 3
// runs of 3); mended: resolveConflicts tells of the merged attributes.
// It
// passes with --attr-timeout 1s --entry-timeout 1s (3 of 3). B's flush
// meets A's version of d (session/conflict.go resolveDirLocked):
// mergeDirLocked takes A's mode, since only A changed d's attributes,
// and reports no conflict (both false), so resolveDirLocked returns
// false and resolveConflicts emits nothing for d: the session's d is
// 0700, the kernel's cached d 0755 for up to an hour.
func TestSteadyAttackEtcdDirMetadataMerge(t *testing.T) {
	a, b := etcdPair(t, map[string]string{})
	// Each round a directory of its own: B's save must meet A's chmod
	// before B's watcher brings it (a race B's fsync, right after A's,
	// wins most times).
	for i := range 5 {
		d := fmt.Sprintf("memory/d%d", i)
		dA, dB := filepath.Join(a.mnt, d), filepath.Join(b.mnt, d)
		if err := os.Mkdir(dA, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeSync(filepath.Join(dA, "x.md"), []byte("x\n")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "B reads "+d+"/x.md", 10*time.Second, func() bool { return readBack(filepath.Join(dB, "x.md")) == "x\n" })
		prime(t, dA, dB, filepath.Join(dA, "x.md"), filepath.Join(dB, "x.md"))
		if err := os.WriteFile(filepath.Join(dB, "y.md"), []byte("bob's\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		prime(t, dB, filepath.Join(dB, "y.md"))
		if err := os.Chmod(dA, 0o700); err != nil {
			t.Fatal(err)
		}
		fsyncPath(t, dA)
		fsyncPath(t, dB)
		for _, dir := range []string{dA, dB} {
			if !expect(t, fmt.Sprintf("round %d: %s: mode 0700, lists x.md and y.md", i, dir), func() (bool, string) {
				n, l := look(dir), listNames(dir)
				return n.mode.Perm() == 0o700 && slices.Equal(l, []string{"x.md", "y.md"}), fmt.Sprintf("%v lists %v", n, l)
			}) {
				t.Logf("B's changes:\n%s", readBack(filepath.Join(b.mnt, ".memfs/changes")))
				return
			}
		}
	}
}

// The same directory merge with --allow-other: A makes a directory
// private (chmod 700) while B made a note in it, unsaved; B's save meets
// A's chmod and takes it, but uid 65534 still lists the directory on B
// and reads the notes in it (default_permissions checks the kernel's
// cached mode): a confidentiality bug. (B writes and closes its note
// first, as TestSteadyAttackEtcdDirMetadataMerge does.)
//
// Failed on the steady default of a2b360a, mended (3 runs of 3: uid 65534's ls of the 0700
// vault on B lists new.md and old.md; B's stat says drwxr-xr-x, A's
// drwx------); passes with --attr-timeout 1s --entry-timeout 1s (3 of
// 3). Same cause as TestSteadyAttackEtcdDirMetadataMerge.
func TestSteadyAttackEtcdDirMergeAllowOther(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root: it mounts with --allow-other and reads as uid %d", otherUID)
	}
	store, env := sharedEtcdStore(t), sharedEnv(t)
	a := startMount(t, store, sharedDir(t), env, steadyFlags("--agent", "alice", "--allow-other")...)
	b := startMount(t, store, sharedDir(t), env, steadyFlags("--agent", "bob", "--allow-other")...)
	nobody := caller{name: "uid 65534", priv: []string{fmt.Sprintf("--reuid=%d", otherUID), fmt.Sprintf("--regid=%d", otherUID), "--clear-groups"}}
	for i := range 5 { // a vault of its own each round: see TestSteadyAttackEtcdDirMetadataMerge
		v := fmt.Sprintf("memory/vault%d", i)
		vA, vB := filepath.Join(a.mnt, v), filepath.Join(b.mnt, v)
		if err := os.Mkdir(vA, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeSync(filepath.Join(vA, "old.md"), []byte("plans: okapi\n")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "B reads "+v+"/old.md", 10*time.Second, func() bool { return readBack(filepath.Join(vB, "old.md")) == "plans: okapi\n" })
		if out, err := nobody.run(t, "/", "ls", vB); err != nil {
			t.Fatalf("uid 65534 cannot list %s on B before: %v %s", v, err, out)
		}
		prime(t, vB, filepath.Join(vB, "old.md"))
		if err := os.WriteFile(filepath.Join(vB, "new.md"), []byte("more plans: okapi\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		prime(t, filepath.Join(vB, "new.md"))
		if err := os.Chmod(vA, 0o700); err != nil {
			t.Fatal(err)
		}
		fsyncPath(t, vA)
		fsyncPath(t, vB)
		if !expect(t, fmt.Sprintf("round %d: uid 65534 refused %s on B", i, v), func() (bool, string) {
			out, err := nobody.run(t, "/", "ls", vB)
			return err != nil && strings.Contains(out, "Permission denied"), fmt.Sprintf("ls as uid 65534: %v %q; %s on B: %v; on A: %v", err, out, v, look(vB), look(vA))
		}) {
			return
		}
	}
}

// Held on the steady default. Expiry on etcd: A sets a file's ttl; B,
// which has it cached, loses it too.
func TestSteadyAttackEtcdExpiry(t *testing.T) {
	a, b := etcdPair(t, map[string]string{"memory/short.md": "short-lived\n", "memory/stays.md": "stays\n"})
	inA, inB := filepath.Join(a.mnt, "memory/short.md"), filepath.Join(b.mnt, "memory/short.md")
	if err := syscall.Setxattr(inA, "user.memfs.ttl", []byte("2s"), 0); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, inA)
	prime(t, inB)
	for _, p := range []string{inA, inB} {
		expect(t, p+" expired", func() (bool, string) {
			l := listNames(filepath.Dir(p))
			return gone(p) && !slices.Contains(l, "short.md"), fmt.Sprintf("%v, listing %v", look(p), l)
		})
	}
}

// A links a file (ln a cN, a fresh name each round) and saves; B, whose
// kernel has a's attributes, must show a and cN as one node with nlink 2
// (then A removes cN, and B's a has nlink 1 again). prime's stat loop
// (a program polling a) makes it deterministic.
//
// Failed on the steady default of a2b360a, mended: a name joining or
// leaving a node tells of the others (emitLinked). Then (round 0 or 1, 6 runs of 6): B's a kept
// nlink 1 while cN has nlink 2, with the same st_ino, for good. Passes with
// --attr-timeout 1s --entry-timeout 1s (all 10 rounds, 6 runs of 6).
// B's changes feed shows why: for A's ln, B is told "write"+"content" of
// a (the record of a, now of a link group) and then "create" of c0; the
// session joins c0 to a's node at c0's create (nlink 2) and tells the
// kernel of c0 only. A stat of a between the two (the kernel refreshed
// it after a's content notification) is kept for an hour, nlink 1.
func TestSteadyAttackEtcdLinkRounds(t *testing.T) {
	a, b := etcdPair(t, map[string]string{"memory/a.md": "one\n"})
	am := func(k string) string { return filepath.Join(a.mnt, k) }
	bm := func(k string) string { return filepath.Join(b.mnt, k) }
	for i := range 10 {
		cn := fmt.Sprintf("memory/c%d.md", i)
		prime(t, bm("memory/a.md"), bm(cn))
		if err := os.Link(am("memory/a.md"), am(cn)); err != nil {
			t.Fatal(err)
		}
		fsyncPath(t, am("memory/a.md"))
		if !expect(t, fmt.Sprintf("round %d: A's ln a %s on B", i, cn), func() (bool, string) {
			na, nc := look(bm("memory/a.md")), look(bm(cn))
			return na.nlink == 2 && nc.nlink == 2 && na.ino == nc.ino, fmt.Sprintf("a: %v; c: %v", na, nc)
		}) {
			t.Logf("B's changes:\n%s", readBack(bm(".memfs/changes")))
			return
		}
		prime(t, bm("memory/a.md"), bm(cn))
		if err := os.Remove(am(cn)); err != nil {
			t.Fatal(err)
		}
		fsyncPath(t, am("memory/a.md"))
		if !expect(t, fmt.Sprintf("round %d: A's rm %s on B", i, cn), func() (bool, string) {
			na := look(bm("memory/a.md"))
			return gone(bm(cn)) && na.nlink == 1, fmt.Sprintf("a: %v; c: %v", na, look(bm(cn)))
		}) {
			return
		}
	}
}

// Held on the steady default. After A's ln a cN reached B, B appends
// through cN: B's read of a must
// give the whole file (a read cut at a's old size means the kernel holds
// a and cN as two inodes, a's attributes stale).
func TestSteadyAttackEtcdLinkThenWriteOtherName(t *testing.T) {
	a, b := etcdPair(t, map[string]string{"memory/a.md": "one\n"})
	am := func(k string) string { return filepath.Join(a.mnt, k) }
	bm := func(k string) string { return filepath.Join(b.mnt, k) }
	want := "one\n"
	for i := range 5 {
		cn := fmt.Sprintf("memory/c%d.md", i)
		prime(t, bm("memory/a.md"), bm(cn))
		if err := os.Link(am("memory/a.md"), am(cn)); err != nil {
			t.Fatal(err)
		}
		fsyncPath(t, am("memory/a.md"))
		waitFor(t, "B has "+cn+" linked", 10*time.Second, func() bool { return look(bm(cn)).nlink == uint64(i+2) })
		line := fmt.Sprintf("bob's line %d\n", i)
		f, err := os.OpenFile(bm(cn), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
		want += line
		if !expect(t, fmt.Sprintf("round %d: B reads a whole after appending through %s", i, cn), func() (bool, string) {
			na, got := look(bm("memory/a.md")), readBack(bm("memory/a.md"))
			return got == want && na.size == int64(len(want)), fmt.Sprintf("a: %v reads %q; %s: %v", na, got, cn, look(bm(cn)))
		}) {
			return
		}
		fsyncPath(t, bm(cn))
		waitFor(t, "A reads it", 10*time.Second, func() bool { return readBack(am("memory/a.md")) == want })
	}
}

// A writes a new file aN and links it (ln aN cN), and saves; B must show
// aN and cN as one node with nlink 2.
//
// Failed on the steady default of a2b360a, mended (emitLinked). Then
// (round 0 or 1, 4 runs of 4): one of the two
// names keeps nlink 1 while the other has 2, with the same st_ino, e.g.
// "a0: nlink 1 ino 5; c0: nlink 2 ino 5" (the other way round in another
// run). Passes with --attr-timeout 1s
// --entry-timeout 1s (4 of 4). B is told of a0 (create), c0 (create),
// a0 (create again), c0 (write, content): the names are created, and
// joined into one node, one after the other, and the kernel, which
// looked the first up in between, is told of the join through the other
// name only. Same cause as TestSteadyAttackEtcdLinkRounds.
func TestSteadyAttackEtcdNewLinkedPair(t *testing.T) {
	a, b := etcdPair(t, map[string]string{})
	am := func(k string) string { return filepath.Join(a.mnt, k) }
	bm := func(k string) string { return filepath.Join(b.mnt, k) }
	prime(t, bm("memory/seen.md"))
	for i := range 6 {
		an, cn := fmt.Sprintf("memory/a%d.md", i), fmt.Sprintf("memory/c%d.md", i)
		prime(t, bm(an), bm(cn))
		if err := os.WriteFile(am(an), []byte("one\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(am(an), am(cn)); err != nil {
			t.Fatal(err)
		}
		fsyncPath(t, am(an))
		if !expect(t, fmt.Sprintf("round %d: B has %s and %s linked", i, an, cn), func() (bool, string) {
			na, nc := look(bm(an)), look(bm(cn))
			return nc.nlink == 2 && na.nlink == 2 && na.ino == nc.ino && readBack(bm(an)) == "one\n", fmt.Sprintf("a: %v; c: %v", na, nc)
		}) {
			t.Logf("B's changes:\n%s", readBack(bm(".memfs/changes")))
			return
		}
	}
}

// Held on the steady default. An editor's atomic save on A (write a temp
// file, mv it over the name)
// of one name of a linked pair aN, cN: on B, cN is a node of its own with
// the new content, and aN keeps the old node, its size and nlink 1.
func TestSteadyAttackEtcdLinkedAtomicSave(t *testing.T) {
	a, b := etcdPair(t, map[string]string{})
	am := func(k string) string { return filepath.Join(a.mnt, k) }
	bm := func(k string) string { return filepath.Join(b.mnt, k) }
	for i := range 6 {
		an, cn := fmt.Sprintf("memory/a%d.md", i), fmt.Sprintf("memory/c%d.md", i)
		if err := os.WriteFile(am(an), []byte("one\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(am(an), am(cn)); err != nil {
			t.Fatal(err)
		}
		fsyncPath(t, am(an))
		waitFor(t, "B reads "+an+" and "+cn, 10*time.Second, func() bool { return readBack(bm(an)) == "one\n" && readBack(bm(cn)) == "one\n" })
		prime(t, bm(an), bm(cn))
		sh(t, a.mnt, fmt.Sprintf("printf 'their new version\\n' > memory/tmp%d && mv memory/tmp%d %s", i, i, cn))
		fsyncPath(t, am(an))
		if !expect(t, fmt.Sprintf("round %d: A's atomic save of %s on B", i, cn), func() (bool, string) {
			na, nc := look(bm(an)), look(bm(cn))
			ga, gc := readBack(bm(an)), readBack(bm(cn))
			ok := gc == "their new version\n" && nc.size == 18 && nc.nlink == 1 && ga == "one\n" && na.size == 4 && na.nlink == 1 && na.ino != nc.ino
			return ok, fmt.Sprintf("a: %v reads %q; c: %v reads %q", na, ga, nc, gc)
		}) {
			t.Logf("B's changes:\n%s", readBack(bm(".memfs/changes")))
			return
		}
	}
}

// Held on the steady default. B holds a file with two names, a and c
// (saved), and changes it
// (unsaved); A replaces a by a directory and saves. B's save meets it:
// A's directory takes the name a, B's node keeps its other name c (now
// its only one: nlink 1), and a copy of B's version is kept beside
// (session/conflict.go resolveLocked, a node of several names and their
// directory).
func TestSteadyAttackEtcdLinkedNameTakenByDirectory(t *testing.T) {
	a, b := etcdPair(t, map[string]string{"memory/a.md": "one\n"})
	am := func(k string) string { return filepath.Join(a.mnt, k) }
	bm := func(k string) string { return filepath.Join(b.mnt, k) }
	if err := os.Link(am("memory/a.md"), am("memory/c.md")); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, am("memory/a.md"))
	// (Not by nlink: TestSteadyAttackEtcdNewLinkedPair's bug can keep one
	// name's at 1.)
	waitFor(t, "B reads a and c", 10*time.Second, func() bool {
		return readBack(bm("memory/a.md")) == "one\n" && readBack(bm("memory/c.md")) == "one\n"
	})
	prime(t, bm("memory/a.md"), bm("memory/c.md"))
	if err := os.WriteFile(bm("memory/c.md"), []byte("bob's longer text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prime(t, bm("memory/c.md"), bm("memory/a.md"))
	sh(t, a.mnt, "rm memory/a.md && mkdir memory/a.md && printf 'x\\n' > memory/a.md/inside")
	fsyncPath(t, am("memory"))
	fsyncPath(t, bm("memory"))
	expect(t, "B: a a directory, c alone with B's text", func() (bool, string) {
		na, nc, l := look(bm("memory/a.md")), look(bm("memory/c.md")), listNames(bm("memory"))
		got := readBack(bm("memory/c.md"))
		return na.dir && nc.nlink == 1 && nc.size == 18 && got == "bob's longer text\n",
			fmt.Sprintf("a: %v; c: %v reads %q; listing %v", na, nc, got, l)
	})
}

// linkedWithTTL writes memory/a.md through the mount (m: a key's path),
// links memory/b.md to it, gives it a 2 s time to live, saves it, and
// primes the kernel's caches of both names.
func linkedWithTTL(t *testing.T, m func(string) string) {
	t.Helper()
	if err := os.WriteFile(m("memory/a.md"), []byte("short-lived\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(m("memory/a.md"), m("memory/b.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setxattr(m("memory/a.md"), "user.memfs.ttl", []byte("2s"), 0); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, m("memory/a.md"))
	prime(t, m("memory/a.md"), m("memory/b.md"))
}
