package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestARefusedKeyBlocksNothing: a directory made in the mount whose place
// in a dir store another program takes with a symlink (a git pull, say)
// is refused, and so is every key under it: memfs never writes through a
// link. One such key must not keep any other file from the store, fail
// another file's fsync, or wedge later commands and mounts; it is
// reported with its cause and kept (in memory, the journal, then a
// recovery directory), and the journal's replay keeps both the
// directory and the other program's symlink (under a conflict name).
func TestARefusedKeyBlocksNothing(t *testing.T) {
	dir := t.TempDir()
	store := "dir:" + dir
	outside := t.TempDir()
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
	if err := os.Symlink(outside, filepath.Join(dir, "memory", "linked")); err != nil {
		t.Fatal(err)
	}
	if err := syncFile(ok); err != nil {
		t.Errorf("fsync of a file the store takes: %v, want success", err)
	}
	if err := syncFile(bad); !errors.Is(err, syscall.EIO) {
		t.Errorf("fsync of the refused file: %v, want EIO", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "memory", "ok.md")); err != nil || string(b) != "value of ok.md\n" {
		t.Errorf("memory/ok.md in the store: %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("memfs wrote through the symlink: %v", ents)
	}
	err := p.terminate(t)
	if err == nil || !strings.Contains(p.log.String(), "recovery") {
		t.Fatalf("unmount with a refused entry: %v; want a failure naming the recovery directory\n%s", err, p.log)
	}
	recovered, _ := filepath.Glob(filepath.Join(state, "memfs", "recovery", "*", "memory", "linked", "x.md"))
	if len(recovered) == 0 {
		t.Fatalf("the refused value is in no recovery directory under %s", state)
	}

	// Commands work. The journal's replay (at the first command that
	// writes) keeps the other program's symlink beside the directory.
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
	kept, _ := filepath.Glob(filepath.Join(dir, "memory", "linked.conflict-*"))
	if len(kept) != 1 {
		t.Fatalf("the other program's symlink: kept as %v, want one conflict copy", kept)
	}
	if target, err := os.Readlink(kept[0]); err != nil || target != outside {
		t.Fatalf("the conflict copy: %q, %v; want the symlink to %s", target, err, outside)
	}
	p2 := startMount(t, store, mnt, env)
	if b, err := os.ReadFile(ok); err != nil || string(b) != "value of ok.md\n" {
		t.Fatalf("after a remount: %q, %v", b, err)
	}
	if err := p2.terminate(t); err != nil {
		t.Fatalf("a clean mount and unmount after the refused entries: %v\n%s", err, p2.log)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("memfs wrote through the symlink: %v", ents)
	}
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
