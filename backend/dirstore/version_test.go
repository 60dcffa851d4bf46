package dirstore_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
)

// The version a conditional save or delete expects covers the whole node:
// another program's chmod, chown or setxattr leaves the size and mtime as
// they were, and must still make the save a conflict (their version kept
// beside, never reverted) and the delete a no-op (issue 26).

// savedVersion saves e as a session's flush does and returns the version
// the session then expects: the one of the entry it saved (the store
// writes what it cannot keep, the change time, back into it).
func savedVersion(t *testing.T, s *dirstore.Store, e backend.Entry) backend.Version {
	t.Helper()
	e.Info.Size = int64(len(e.Value)) // as a session gives it
	es := []backend.Entry{e}
	if _, err := s.SaveIf(t.Context(), es, []backend.Version{{}}); err != nil {
		t.Fatalf("SaveIf: %v", err)
	}
	return backend.VersionOf(es[0].Info)
}

func TestSaveIfNeverRevertsAnotherProgramsMetadata(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(p string) error
		check  func(t *testing.T, p string)
	}{
		{"chmod", func(p string) error { return os.Chmod(p, 0o600) }, func(t *testing.T, p string) {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("their copy: %v %v, want mode 0600", fi.Mode(), err)
			}
		}},
		{"setxattr", func(p string) error { return unix.Setxattr(p, "user.memfs.tags", []byte("theirs"), 0) }, func(t *testing.T, p string) {
			buf := make([]byte, 64)
			if n, err := unix.Getxattr(p, "user.memfs.tags", buf); err != nil || string(buf[:n]) != "theirs" {
				t.Errorf("their copy's tags: %q %v, want %q", buf[:max(n, 0)], err, "theirs")
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openT(t, dir)
			v := savedVersion(t, s, entry("a.md", "one\n"))
			if err := tt.change(filepath.Join(dir, "a.md")); err != nil {
				t.Fatal(err)
			}
			// No change by memfs since it saved: the same version.
			again := []backend.Entry{entry("a.md", "two\n")}
			again[0].Info.Size = 4
			conflicts, err := s.SaveIf(t.Context(), again, []backend.Version{v})
			if err != nil {
				t.Fatalf("SaveIf: %v", err)
			}
			copyKey, ok := conflicts["a.md"]
			if !ok {
				t.Fatalf("SaveIf over another program's %s: conflicts %v, want a.md kept beside (it was reverted)", tt.name, conflicts)
			}
			tt.check(t, filepath.Join(dir, copyKey))
			if got := readFile(t, filepath.Join(dir, "a.md")); got != "two\n" {
				t.Errorf("a.md = %q, want memfs's %q", got, "two\n")
			}
		})
	}
}

// The version written back by a save is the stored one: a session that
// saves again, with nothing changed by anyone else, meets no conflict.
func TestSaveIfAfterOwnSaveIsNoConflict(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	v := savedVersion(t, s, entry("a.md", "one\n"))
	if v.CTime == 0 {
		t.Fatal("SaveIf wrote no change time back into the entry")
	}
	// Saved by Save too (the flush's other door).
	link := []backend.Entry{node("l", 0o777|os.ModeSymlink, "a.md")}
	save(t, s, link...)
	if got := lctime(t, filepath.Join(dir, "l")); !got.Equal(link[0].Info.CTime) {
		t.Errorf("Save wrote back ctime %v, the store holds %v", link[0].Info.CTime, got)
	}
	for i := range 3 {
		es := []backend.Entry{entry("a.md", strings.Repeat("x", i))}
		es[0].Info.Size = int64(i)
		conflicts, err := s.SaveIf(t.Context(), es, []backend.Version{v})
		if err != nil || len(conflicts) != 0 {
			t.Fatalf("save %d over memfs's own version: conflicts %v, err %v", i, conflicts, err)
		}
		v = backend.VersionOf(es[0].Info)
	}
	// A Load (a symlink's puts its atime back, which moves the ctime)
	// reports the version the store holds after it.
	loaded := loadOne(t, s, "l")
	if now := lctime(t, filepath.Join(dir, "l")); !now.Equal(loaded.Info.CTime) {
		t.Errorf("Load reported ctime %v, the store holds %v after it", loaded.Info.CTime, now)
	}
}

func TestDeleteIfKeepsAnotherProgramsChange(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(p string) error
	}{
		{"rewrite", func(p string) error { return os.WriteFile(p, []byte("theirs\n"), 0o644) }},
		{"chmod", func(p string) error { return os.Chmod(p, 0o600) }},
		{"setxattr", func(p string) error { return unix.Setxattr(p, "user.x", []byte("1"), 0) }},
		{"replace", func(p string) error {
			tmp := p + ".new"
			if err := os.WriteFile(tmp, []byte("one\n"), 0o644); err != nil {
				return err
			}
			return os.Rename(tmp, p)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openT(t, dir)
			v := savedVersion(t, s, entry("a.md", "one\n"))
			vb := savedVersion(t, s, entry("b.md", "one\n"))
			if err := tt.change(filepath.Join(dir, "a.md")); err != nil {
				t.Fatal(err)
			}
			kept, err := s.DeleteIf(t.Context(), []string{"a.md", "b.md"}, []backend.Version{v, vb})
			if err != nil {
				t.Fatalf("DeleteIf: %v", err)
			}
			if !slices.Equal(kept, []string{"a.md"}) {
				t.Errorf("kept %v, want [a.md]", kept)
			}
			if got := listKeys(t, s); !slices.Equal(got, []string{"a.md"}) {
				t.Errorf("keys %v, want [a.md]: theirs stays, b.md (unchanged) goes", got)
			}
		})
	}
}

// A zero version expects the key absent: what another program made there
// stays; a directory goes as Delete removes it (when empty).
func TestDeleteIfExpectingAbsent(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	save(t, s, node("d", os.ModeDir|0o755, ""), entry("a.md", "theirs\n"))
	kept, err := s.DeleteIf(t.Context(), []string{"d", "a.md", "gone"}, make([]backend.Version, 3))
	if err != nil || !slices.Equal(kept, []string{"a.md"}) {
		t.Fatalf("DeleteIf: kept %v, err %v; want [a.md]", kept, err)
	}
	if got := listKeys(t, s); !slices.Equal(got, []string{"a.md"}) {
		t.Errorf("keys %v, want [a.md]", got)
	}
}

func loadOne(t *testing.T, s *dirstore.Store, key string) backend.Entry {
	t.Helper()
	es, err := s.Load(t.Context(), key)
	if err != nil {
		t.Fatalf("Load(%s): %v", key, err)
	}
	return es[0]
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func lctime(t *testing.T, p string) time.Time {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
}

// A delete DeleteIf refuses changes nothing, so the kernel reports
// nothing: the store's feed does, so that a reader that took the key for
// gone brings the other writer's version back in.
func TestDeleteIfReportsWhatItKeeps(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	save(t, s, entry("a.md", "theirs\n"))
	feed, err := s.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	kept, err := s.DeleteIf(t.Context(), []string{"a.md"}, []backend.Version{{}})
	if err != nil || len(kept) != 1 {
		t.Fatalf("DeleteIf: kept %v, err %v", kept, err)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ch := <-feed:
			if ch.Key == "a.md" {
				return
			}
		case <-timeout:
			t.Fatal("no change reported for a.md, which DeleteIf kept")
		}
	}
}

// A symlink a session saves where it found nothing never replaces a file
// another program put there meanwhile: their file is kept beside, as for
// a regular file (issue 26; the two-writer model's dir rounds lost the
// other program's write under a symlink the session made).
func TestSaveIfSymlinkKeepsAnotherProgramsFile(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "n1.md"), []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := backend.Entry{Key: "n1.md", Value: []byte("n2.md"), Info: backend.Info{Mode: os.ModeSymlink | 0o777, MTime: time.Unix(1800000000, 0)}}
	kept, err := s.SaveIf(t.Context(), []backend.Entry{link}, []backend.Version{{}})
	if err != nil {
		t.Fatalf("SaveIf: %v", err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "n1.md")); err != nil || target != "n2.md" {
		t.Errorf("n1.md: %q %v, want the symlink to n2.md", target, err)
	}
	ck, ok := kept["n1.md"]
	if !ok {
		t.Fatalf("kept = %v: their file is not kept beside", kept)
	}
	if got, err := os.ReadFile(filepath.Join(dir, ck)); err != nil || string(got) != "theirs\n" {
		t.Errorf("their copy %s: %q %v, want %q", ck, got, err, "theirs\n")
	}
}

// A file saved where the caller expects nothing (a zero version) and
// another program has made an empty directory: the directory is theirs,
// and keeps the name, as one that holds entries does (the save fails with
// EEXIST: a session then moves its file beside it); it is never removed
// (an empty directory's mode, owner and attributes are data too). Only a
// caller that expects a stored version there (its own directory, which it
// removed) has the displaced directory removed.
func TestSaveIfKeepsAnotherProgramsEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	e := entry("d", "ours\n")
	e.Info.Size = 5
	_, err := s.SaveIf(t.Context(), []backend.Entry{e}, []backend.Version{{}})
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("SaveIf over another program's empty directory: %v, want EEXIST", err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "d")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("d: %v %v, want their directory, 0700 (removed)", fi, err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".memfs-tmp") {
			t.Errorf("a temp file left: %s", e.Name())
		}
	}

	// Our own directory, removed and its name reused: replaced.
	if err := os.Remove(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(dir, "d"), &st); err != nil {
		t.Fatal(err)
	}
	own := backend.Version{Size: st.Size, MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano()}
	kept, err := s.SaveIf(t.Context(), []backend.Entry{e}, []backend.Version{own})
	if err != nil || len(kept) != 0 {
		t.Fatalf("SaveIf over its own directory: kept %v, %v; want it replaced", kept, err)
	}
}
