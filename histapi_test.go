package memfs_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/memstore"
)

// The history API: versions read back, revert and restore write new
// versions (the old ones stay), a snapshot names a flush's head, diff
// shows the change.
func TestHistoryAPI(t *testing.T) {
	ctx := t.Context()
	f, err := memfs.Open(ctx, memstore.New(), histOpts(filepath.Join(t.TempDir(), "journal")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(ctx)
	c := f.Session()
	set := func(k, v string) {
		t.Helper()
		if err := c.Set(k, []byte(v)); err != nil {
			t.Fatal(err)
		}
		if err := f.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	set("memory/a.md", "one\ntwo\n")
	if _, err := f.CreateSnapshot(ctx, "run1/step1", "test/1"); err != nil {
		t.Fatal(err)
	}
	set("memory/a.md", "one\nTWO\n")
	set("memory/b.md", "bee\n")
	vs, err := f.Versions(ctx, "memory/a.md")
	if err != nil || len(vs) != 2 {
		t.Fatalf("versions %v, err %v; want 2", vs, err)
	}
	if _, data, err := f.ReadVersion(ctx, "memory/a.md", vs[0].Seq); err != nil || string(data) != "one\ntwo\n" {
		t.Fatalf("version %d: %q, %v", vs[0].Seq, data, err)
	}
	if _, _, err := f.ReadVersion(ctx, "memory/a.md", 999); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("version 999: %v, want not exist", err)
	}
	d, err := f.Diff(ctx, "memory/a.md", "", "")
	if want := "--- memory/a.md@" + strconv.FormatUint(vs[0].Seq, 10) + "\n+++ memory/a.md\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"; err != nil || d != want {
		t.Fatalf("diff: %q, %v; want %q", d, err, want)
	}
	// Revert with no target: the version before the last.
	if v, err := f.Revert(ctx, "memory/a.md", ""); err != nil || v.Seq != vs[0].Seq {
		t.Fatalf("revert: %v, %v", v, err)
	}
	if got, _ := c.Get("memory/a.md"); string(got) != "one\ntwo\n" {
		t.Fatalf("after revert: %q", got)
	}
	after, err := f.Versions(ctx, "memory/a.md")
	if err != nil || len(after) != 3 || after[2].Addr != vs[0].Addr {
		t.Fatalf("after revert, versions %v, err %v: want the old two and a new one with the first's bytes", after, err)
	}
	checkRestore(t, f, set)
}

// checkRestore: a deleted key comes back from a checkpoint (RUN/latest);
// then the snapshot is listed, resolved and removed.
func checkRestore(t *testing.T, f *memfs.FS, set func(k, v string)) {
	ctx := t.Context()
	c := f.Session()
	set("memory/a.md", "three\n")
	if err := c.Delete("memory/a.md"); err != nil {
		t.Fatal(err)
	}
	if err := f.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	wrote, err := f.Restore(ctx, "run1/latest", "memory/")
	if err != nil || strings.Join(wrote, " ") != "memory/a.md" {
		t.Fatalf("restore wrote %v, err %v; want memory/a.md", wrote, err)
	}
	if got, _ := c.Get("memory/a.md"); string(got) != "one\ntwo\n" {
		t.Fatalf("after restore: %q", got)
	}
	if got, _ := c.Get("memory/b.md"); string(got) != "bee\n" {
		t.Fatalf("restore touched memory/b.md, which the snapshot lacks: %q", got)
	}
	ns, err := f.NamespaceAt(ctx, "run1/step1")
	if err != nil || len(ns) != 1 || ns[0].Key != "memory/a.md" {
		t.Fatalf("namespace at run1/step1: %v, %v", ns, err)
	}
	snaps, err := f.Snapshots(ctx)
	if err != nil || len(snaps) != 1 || snaps[0].Name != "run1/step1" {
		t.Fatalf("snapshots %v, %v", snaps, err)
	}
	if err := f.RemoveSnapshot(ctx, "run1/step1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.NamespaceAt(ctx, "run1/step1"); err == nil {
		t.Fatal("a removed snapshot resolves")
	}
}
