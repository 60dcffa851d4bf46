package memfs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/session"
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
	if _, err := f.CreateSnapshot(ctx, "plain", "test/1"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ which, want string }{
		{"", "plain run1/step1"}, {"run1/", "run1/step1"}, {"run1/latest", "run1/step1"}, {"run2/", ""},
	} {
		ss, err := f.ListSnapshots(ctx, tt.which)
		var got []string
		for _, s := range ss {
			got = append(got, s.Name)
		}
		if err != nil || strings.Join(got, " ") != tt.want {
			t.Errorf("ListSnapshots(%q) = %v, %v; want %s", tt.which, got, err, tt.want)
		}
	}
	if ss, err := f.ListSnapshots(ctx, "run2/latest"); !errors.Is(err, fs.ErrNotExist) || ss != nil {
		t.Errorf("ListSnapshots(run2/latest) = %v, %v; want fs.ErrNotExist", ss, err)
	}
	if err := f.RemoveSnapshot(ctx, "plain"); err != nil {
		t.Fatal(err)
	}
	if err := f.RemoveSnapshot(ctx, "run1/step1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.NamespaceAt(ctx, "run1/step1"); err == nil {
		t.Fatal("a removed snapshot resolves")
	}
}

// A revert gives the file back the version's owner (when the caller may
// chown: root) and its user.memfs.* attributes, besides its bytes and
// mode: the one before the last of an existing file, and the last before
// the delete of a deleted one.
func TestRevertRestoresOwnerAndAttributes(t *testing.T) {
	root := os.Geteuid() == 0
	if !root {
		t.Log("not root: the owner is not checked (only root may chown)")
	}
	ctx := t.Context()
	f, err := memfs.Open(ctx, memstore.New(), histOpts(filepath.Join(t.TempDir(), "journal")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(ctx)
	c := f.Session()
	const key = "memory/alice.md"
	write := func(v string, mode fs.FileMode, uid uint32, xattrs map[string]string) {
		t.Helper()
		if err := c.Set(key, []byte(v)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.SetAttr(ctx, key, session.Attr{Mode: &mode, UID: &uid, GID: &uid}); err != nil {
			t.Fatal(err)
		}
		for name, val := range xattrs {
			if err := c.XAttrs().Set(ctx, key, name, []byte(val), 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	write("alice's\n", 0o600, 1234, map[string]string{meta.Tags: "t1"})
	write("root's\n", 0o644, 0, map[string]string{meta.Tags: "t2", meta.Importance: "0.5"})
	check := func(when string) {
		t.Helper()
		e, ok := c.Entry(key)
		if !ok || string(e.Value) != "alice's\n" || e.Info.Mode.Perm() != 0o600 || root && (e.Info.UID != 1234 || e.Info.GID != 1234) {
			t.Fatalf("%s: %q mode %v owner %d:%d (ok %v); want alice's 0600 file back, owned by 1234:1234",
				when, e.Value, e.Info.Mode, e.Info.UID, e.Info.GID, ok)
		}
		if got := string(e.Info.XAttrs[meta.Tags]); got != "t1" {
			t.Errorf("%s: tags %q, want t1", when, got)
		}
		if got, ok := e.Info.XAttrs[meta.Importance]; ok {
			t.Errorf("%s: importance %q, which the version lacks", when, got)
		}
	}
	if _, err := f.Revert(ctx, key, ""); err != nil {
		t.Fatal(err)
	}
	check("reverted")
	if err := c.Delete(key); err != nil {
		t.Fatal(err)
	}
	if err := f.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Revert(ctx, key, ""); err != nil {
		t.Fatal(err)
	}
	check("reverted after its delete")
}

// A restore writes a file whose only change since the snapshot is an
// attribute: its user.memfs.* attributes come back.
func TestRestoreAttributesOnly(t *testing.T) {
	ctx := t.Context()
	f, err := memfs.Open(ctx, memstore.New(), histOpts(filepath.Join(t.TempDir(), "journal")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(ctx)
	c := f.Session()
	const key = "memory/t.md"
	tag := func(v string) {
		t.Helper()
		if err := c.XAttrs().Set(ctx, key, meta.Tags, []byte(v), 0); err != nil {
			t.Fatal(err)
		}
		if err := f.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Set(key, []byte("same bytes\n")); err != nil {
		t.Fatal(err)
	}
	tag("t1")
	if _, err := f.CreateSnapshot(ctx, "s1", "test"); err != nil {
		t.Fatal(err)
	}
	tag("t2")
	wrote, err := f.Restore(ctx, "s1", "")
	if err != nil || strings.Join(wrote, " ") != key {
		t.Fatalf("restore wrote %v, %v; want %s", wrote, err, key)
	}
	if e, _ := c.Entry(key); string(e.Info.XAttrs[meta.Tags]) != "t1" {
		t.Errorf("after restore: tags %q, want t1", e.Info.XAttrs[meta.Tags])
	}
}
