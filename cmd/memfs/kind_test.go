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
