package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
)

// TestStoresRefuseToGuess: a store of one kind opened as the other, or a
// store path that does not exist for a command that only reads, fails with
// a clear error and changes nothing.
func TestStoresRefuseToGuess(t *testing.T) {
	dirStore := t.TempDir()
	mustRun(t, "a note\n", "put", "--store", "dir:"+dirStore, "memory/a.md")
	badgerStore := t.TempDir()
	mustRun(t, "a note\n", "put", "--store", "badger:"+badgerStore, "memory/a.md")
	notes := t.TempDir() // a plain directory of someone's files
	if err := os.WriteFile(filepath.Join(notes, "todo.txt"), []byte("buy milk\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, store, dir, want string
	}{
		{"a badger store as a dir store", "dir:" + badgerStore, badgerStore, "badger store"},
		{"a dir store as a badger store", "badger:" + dirStore, dirStore, "dir store"},
		{"a plain directory as a badger store", "badger:" + notes, notes, "not a badger store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshotTree(t, tc.dir)
			for _, args := range [][]string{
				{"ls", "--store", tc.store},
				{"put", "--store", tc.store, "memory/b.md"},
			} {
				_, _, err := run(t, "b\n", args...)
				if err == nil || !errors.Is(err, backend.ErrWrongKind) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("memfs %s --store %s: %v, want an error saying %q", args[0], tc.store, err, tc.want)
				}
			}
			if after := snapshotTree(t, tc.dir); after != before {
				t.Fatalf("a refused open changed the directory:\nbefore %s\nafter  %s", before, after)
			}
		})
	}

	missing := filepath.Join(t.TempDir(), "typo", "path")
	for _, kind := range []string{"dir", "badger"} {
		for _, cmd := range [][]string{{"ls"}, {"cat", "memory/a.md"}, {"log"}, {"search", "x"}} {
			_, _, err := run(t, "", append([]string{cmd[0], "--store", kind + ":" + missing}, cmd[1:]...)...)
			if err == nil || !strings.Contains(err.Error(), "no store at") {
				t.Errorf("memfs %s --store %s:<missing>: %v, want \"no store at\"", cmd[0], kind, err)
			}
			if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("memfs %s created the store directory", cmd[0])
			}
		}
	}
	// A plain directory is a fine dir store (memfs import, or a notes
	// directory served as it is), and becomes a marked one.
	if out := mustRun(t, "", "ls", "--store", "dir:"+notes); !strings.Contains(out, "todo.txt") {
		t.Errorf("a plain directory as a dir store: %q", out)
	}
}

// TestInvalidUTF8NamesInADirStore: names that are not UTF-8 (a git pull or
// unzip from another system) cannot be keys; they are left out and left as
// they are, reported, and never make a command or a mount fail.
func TestInvalidUTF8NamesInADirStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := "dir:" + dir
	mustRun(t, "a note\n", "put", "--store", store, "memory/a.md")
	badDir := filepath.Join(dir, "memory", "caf\xe9")
	if err := os.MkdirAll(badDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(badDir, "inside.md"), filepath.Join(dir, "memory", "r\xe9sum\xe9.md")} {
		if err := os.WriteFile(f, []byte("kept as it is\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, err := run(t, "", "ls", "--store", store)
	if err != nil || !strings.Contains(out, "memory/a.md") {
		t.Fatalf("memfs ls with invalid UTF-8 names: %v, %q, %q", err, out, errOut)
	}
	if n := strings.Count(errOut, "cannot be a key"); n != 2 {
		t.Errorf("the two invalid names were reported %d times, want 2:\n%s", n, errOut)
	}
	mustRun(t, "b\n", "put", "--store", store, "memory/b.md")
	mnt := t.TempDir()
	p := startMount(t, store, mnt, []string{"XDG_STATE_HOME=" + t.TempDir()})
	if b, err := os.ReadFile(filepath.Join(mnt, "memory", "b.md")); err != nil || string(b) != "b\n" {
		t.Errorf("through the mount: %q, %v", b, err)
	}
	if err := p.terminate(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.log)
	}
	for _, f := range []string{filepath.Join(badDir, "inside.md"), filepath.Join(dir, "memory", "r\xe9sum\xe9.md")} {
		if b, err := os.ReadFile(f); err != nil || string(b) != "kept as it is\n" {
			t.Errorf("%q after the commands: %q, %v", f, b, err)
		}
	}
}
