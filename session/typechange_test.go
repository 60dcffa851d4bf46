package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/session"
)

// TestDirStoreDirectoryKeepsTheNameOverAnotherProgramsFile: the session
// made a directory (unflushed) where another program then put a file or
// a symlink. The flush keeps both (the keep-beside rule for a change of
// type: the directory keeps the name, the other program's node is kept
// beside under its conflict key): nothing is lost, and the flush is not
// refused (it was, at every flush: "a file holds the directory's name").
func TestDirStoreDirectoryKeepsTheNameOverAnotherProgramsFile(t *testing.T) {
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := session.NewContext(st, session.Options{})
	if err := c.Bootstrap(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"d", "l"} {
		if err := c.Mkdir(k, 0o750, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Set("d/in.md", []byte("ours\n")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d"), []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatalf("flush: %v", err)
	}
	for _, k := range []string{"d", "l"} {
		if fi, err := os.Lstat(filepath.Join(dir, k)); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 {
			t.Errorf("%s in the store: %v, %v; want the session's directory, 0750", k, fi, err)
		}
	}
	if got, err := os.ReadFile(filepath.Join(dir, "d", "in.md")); err != nil || string(got) != "ours\n" {
		t.Errorf("d/in.md in the store: %q, %v; want ours", got, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var file, link int
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), "d.conflict-"):
			if got, err := os.ReadFile(p); err == nil && string(got) == "theirs\n" {
				file++
			}
		case strings.HasPrefix(e.Name(), "l.conflict-"):
			if target, err := os.Readlink(p); err == nil && target == "target" {
				link++
			}
		}
	}
	if file != 1 || link != 1 {
		t.Errorf("conflict copies in the store: %d of their file, %d of their symlink; want 1 each (%v)", file, link, ents)
	}
}

// TestDirStoreFileYieldsToAnotherProgramsDirectory: the session wrote a
// file (unflushed) where another program then made a directory with a
// file in it. The directory keeps the name (the keep-beside rule for a
// change of type); the session's file moves to a conflict copy, saved by
// the same flush, and the session shows their directory (the flush was
// refused at every try: the directory is not empty).
func TestDirStoreFileYieldsToAnotherProgramsDirectory(t *testing.T) {
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := session.NewContext(st, session.Options{})
	if err := c.Bootstrap(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("f", []byte("ours\n")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "f"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f", "x.md"), []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "f", "x.md")); err != nil || string(got) != "theirs\n" {
		t.Errorf("f/x.md in the store: %q, %v; want theirs", got, err)
	}
	if s, err := c.Stat("f"); err != nil || !s.IsDir {
		t.Errorf("f in the session: %+v, %v; want their directory", s, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	copies := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "f.conflict-") {
			if got, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && string(got) == "ours\n" {
				copies++
			}
		}
	}
	if copies != 1 {
		t.Errorf("%d conflict copies holding ours in the store, want 1 (%v)", copies, ents)
	}
}
