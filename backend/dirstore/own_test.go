package dirstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/internal/lockfile"
)

// A store made by the layout before has its lock at the root. Open locks
// it too, without writing into it, so that a memfs from before, which
// knows only that file, is refused while we hold the store, and we are
// refused while it does; a store that never had it does not get it.
func TestOldLockFileLockedToo(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	must(t, s.Close())
	if _, err := os.Lstat(filepath.Join(dir, ".memfs.lock")); err == nil {
		t.Fatal("Open made the old layout's lock file")
	}

	old := filepath.Join(dir, ".memfs.lock")
	must(t, os.WriteFile(old, []byte("1\n"), 0o644))
	s = openT(t, dir)
	_, err := lockfile.Lock(old, dir) // a memfs from before
	if !errors.Is(err, backend.ErrStoreInUse) || !strings.Contains(err.Error(), "process 1") {
		t.Errorf("an older memfs's lock while we hold the store: %v, want ErrStoreInUse", err)
	}
	if b, _ := os.ReadFile(old); string(b) != "1\n" {
		t.Errorf("the old lock file holds %q: Open wrote into it", b)
	}
	must(t, s.Close())

	held, err := lockfile.Lock(old, dir)
	must(t, err)
	defer held.Close()
	if s, err := dirstore.Open(dir); !errors.Is(err, backend.ErrStoreInUse) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		if err == nil {
			s.Close()
		}
		t.Errorf("Open while an older memfs holds the store: %v, want ErrStoreInUse naming it", err)
	}
	if s, err := dirstore.OpenReadOnly(dir); !errors.Is(err, backend.ErrStoreInUse) {
		if err == nil {
			s.Close()
		}
		t.Errorf("OpenReadOnly while an older memfs holds the store: %v, want ErrStoreInUse", err)
	}
}

// The records' directory tells git to ignore it whole, and memfs writes
// no .gitignore at the root (a key).
func TestOwnFilesIgnoredByGit(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	must(t, s.Close())
	b, err := os.ReadFile(filepath.Join(dir, ".memfs-sys/.gitignore"))
	if err != nil || !strings.Contains(string(b), "\n*\n") {
		t.Errorf(".memfs-sys/.gitignore: %q, %v; want *", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".gitignore")); err == nil {
		t.Error("Open wrote the root's .gitignore, a key")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Open moves the older layout's journal into place only when that loses
// nothing: an empty one is removed when the store has its own journal
// already, and when both hold records Open refuses, naming both, and
// leaves them as they are.
func TestOldJournalNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	must(t, s.Close())
	cur, old := filepath.Join(dir, dirstore.JournalName), filepath.Join(dir, ".memfs-journal")
	must(t, os.WriteFile(cur, []byte("new records"), 0o600))
	must(t, os.WriteFile(old, []byte("old records"), 0o600))
	if s, err := dirstore.Open(dir); err == nil || !strings.Contains(err.Error(), cur) || !strings.Contains(err.Error(), old) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("Open with records in both journals: %v, want a refusal naming both", err)
	}
	for p, want := range map[string]string{cur: "new records", old: "old records"} {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s after the refusal: %q, %v", p, b, err)
		}
	}

	must(t, os.WriteFile(old, nil, 0o600))
	s = openT(t, dir)
	must(t, s.Close())
	if _, err := os.Lstat(old); err == nil {
		t.Error("an empty old journal stayed at the root")
	}
	if b, _ := os.ReadFile(cur); string(b) != "new records" {
		t.Errorf("the journal holds %q after the empty old one went", b)
	}
}
