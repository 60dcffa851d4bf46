package memfs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
)

// A conflict over a 255-byte name (multi-byte UTF-8) on a directory
// store: the copy's name is shortened, Conflicts still lists it as a copy
// of the long name, and resolving it keeps theirs and removes the copy.
func TestConflictOfALongNameListedAndResolved(t *testing.T) {
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("日", 84) + ".md" // 255 bytes
	if err := os.WriteFile(filepath.Join(dir, name), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := memfs.Open(context.Background(), st, memfs.Options{JournalPath: filepath.Join(t.TempDir(), "journal")})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	if err := f.Session().Set(name, []byte("ours\n")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte("theirs!\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfs, err := f.Conflicts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfs) != 1 || cfs[0].Key != name || cfs[0].CopyHolds != "theirs" {
		t.Fatalf("conflicts: %+v; want %s's copy holding theirs", cfs, name)
	}
	if v, ok := f.Session().Get(cfs[0].Copy); !ok || string(v) != "theirs!\n" {
		t.Fatalf("the copy %s holds %q, %v; want theirs", cfs[0].Copy, v, ok)
	}
	if _, err := f.ResolveConflict(context.Background(), name, memfs.KeepTheirs); err != nil {
		t.Fatal(err)
	}
	if v, ok := f.Session().Get(name); !ok || string(v) != "theirs!\n" {
		t.Errorf("after keeping theirs, %s = %q, %v", name, v, ok)
	}
	if _, ok := f.Session().Get(cfs[0].Copy); ok {
		t.Errorf("the copy %s is still there after the resolution", cfs[0].Copy)
	}
}
