package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestARefusedKeyBlocksNothing: a directory made in the mount whose
// place in a dir store another program takes and makes immutable (chattr
// +i) refuses every key under it. One such key must not keep any other
// file from the store, fail another file's fsync, or wedge later commands
// and mounts; it is reported with its cause and kept (in memory, the
// journal, then a recovery directory), and the journal's replay saves it
// once the store takes it again. (A symlink or a file put in the
// directory's place is no longer refused: it is kept beside, see
// TestAnotherProgramsSymlinkOverOurDirectoryIsKeptBeside.)
func TestARefusedKeyBlocksNothing(t *testing.T) {
	dir := t.TempDir()
	store := "dir:" + dir
	if err := os.MkdirAll(filepath.Join(dir, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state}
	t.Setenv("XDG_STATE_HOME", state) // for the in-process commands
	mnt := t.TempDir()
	p := startMount(t, store, mnt, env)
	if err := os.MkdirAll(filepath.Join(mnt, "memory", "linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(mnt, "memory", "linked", "x.md")
	ok := filepath.Join(mnt, "memory", "ok.md")
	for _, f := range []string{bad, ok} {
		if err := os.WriteFile(f, []byte("value of "+filepath.Base(f)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Behind memfs's back, before anything was flushed.
	locked := filepath.Join(dir, "memory", "linked")
	if err := os.Mkdir(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	release := immutable(t, locked)
	if err := syncFile(ok); err != nil {
		t.Errorf("fsync of a file the store takes: %v, want success", err)
	}
	if err := syncFile(bad); !errors.Is(err, syscall.EIO) {
		t.Errorf("fsync of the refused file: %v, want EIO", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "memory", "ok.md")); err != nil || string(b) != "value of ok.md\n" {
		t.Errorf("memory/ok.md in the store: %q, %v", b, err)
	}
	err := p.terminate(t)
	if err == nil || !strings.Contains(p.log.String(), "recovery") {
		t.Fatalf("unmount with a refused entry: %v; want a failure naming the recovery directory\n%s", err, p.log)
	}
	recovered, _ := filepath.Glob(filepath.Join(state, "memfs", "recovery", "*", "memory", "linked", "x.md"))
	if len(recovered) == 0 {
		t.Fatalf("the refused value is in no recovery directory under %s", state)
	}

	// The other program lets go. Commands work, and the journal's replay
	// (at the first command that writes) saves the value.
	release()
	out, errOut, err := run(t, "", "ls", "--store", store)
	if err != nil || !strings.Contains(out, "memory/ok.md") {
		t.Fatalf("memfs ls after the refused entry: %v, %q, %q", err, out, errOut)
	}
	if _, _, err := run(t, "new\n", "put", "--store", store, "memory/new.md"); err != nil {
		t.Fatalf("memfs put of another key: %v; a refused entry blocked it", err)
	}
	if got := mustRun(t, "", "cat", "--store", store, "memory/linked/x.md"); got != "value of x.md\n" {
		t.Fatalf("memfs cat of the replayed file: %q", got)
	}
	p2 := startMount(t, store, mnt, env)
	if b, err := os.ReadFile(ok); err != nil || string(b) != "value of ok.md\n" {
		t.Fatalf("after a remount: %q, %v", b, err)
	}
	if b, err := os.ReadFile(bad); err != nil || string(b) != "value of x.md\n" {
		t.Fatalf("the refused file after a remount: %q, %v", b, err)
	}
	if err := p2.terminate(t); err != nil {
		t.Fatalf("a clean mount and unmount after the refused entries: %v\n%s", err, p2.log)
	}
	if b, err := os.ReadFile(filepath.Join(locked, "x.md")); err != nil || string(b) != "value of x.md\n" {
		t.Fatalf("memory/linked/x.md in the store after the replay: %q, %v", b, err)
	}
}

// TestAnotherProgramsSymlinkOverOurDirectoryIsKeptBeside: a directory
// made in the mount whose place in a dir store another program takes with
// a symlink (a git pull, say) keeps its name at the flush; the symlink is
// kept beside it under a conflict name, and nothing is written through it.
func TestAnotherProgramsSymlinkOverOurDirectoryIsKeptBeside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := "dir:" + dir
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	mnt := t.TempDir()
	p := startMount(t, store, mnt, []string{"XDG_STATE_HOME=" + t.TempDir()})
	if err := os.MkdirAll(filepath.Join(mnt, "memory", "linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	x := filepath.Join(mnt, "memory", "linked", "x.md")
	if err := os.WriteFile(x, []byte("value of x.md\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "memory", "linked")); err != nil {
		t.Fatal(err)
	}
	if err := syncFile(x); err != nil {
		t.Errorf("fsync: %v, want success (the directory keeps its name)", err)
	}
	if err := p.terminate(t); err != nil {
		t.Fatalf("unmount: %v\n%s", err, p.log)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("memfs wrote through the symlink: %v", ents)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "memory", "linked", "x.md")); err != nil || string(b) != "value of x.md\n" {
		t.Fatalf("memory/linked/x.md in the store: %q, %v", b, err)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "memory", "linked.conflict-*"))
	if len(kept) != 1 {
		t.Fatalf("the other program's symlink: kept as %v, want one conflict copy", kept)
	}
	if target, err := os.Readlink(kept[0]); err != nil || target != outside {
		t.Fatalf("the conflict copy: %q, %v; want the symlink to %s", target, err, outside)
	}
}

// fsImmutableFL is FS_IMMUTABLE_FL of linux/fs.h (x/sys/unix lacks it).
const fsImmutableFL = 0x10

// immutable makes the directory at p immutable, as chattr +i does, and
// returns the function that lets go of it (also run at cleanup). Root may
// write nothing in it: the store refuses the keys under it.
func immutable(t *testing.T, p string) func() {
	t.Helper()
	set := func(on bool) error {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
		if err != nil {
			return err
		}
		if on {
			flags |= fsImmutableFL
		} else {
			flags &^= fsImmutableFL
		}
		return unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags))
	}
	if err := set(true); err != nil {
		t.Fatalf("chattr +i %s (the test needs root and a filesystem with the immutable flag, as ext4): %v", p, err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			if err := set(false); err != nil {
				t.Errorf("chattr -i %s: %v", p, err)
			}
		}
	}
	t.Cleanup(release)
	return release
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
