package tree_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/tree"
)

// ExportEntries writes a directory, a file and a symlink as the nodes
// they are, and NodeInfo reads back the mode, the times and the user.*
// attribute it wrote; the tally counts each kind.
func TestExportEntriesNodeInfo(t *testing.T) {
	dst := t.TempDir()
	mtime := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	values := map[string][]byte{"d/f": []byte("hello"), "d/l": []byte("f")}
	entries := []backend.Entry{
		{Key: "d", Info: backend.Info{Mode: fs.ModeDir | 0o750, MTime: mtime}},
		{Key: "d/f", Info: backend.Info{Mode: 0o640, MTime: mtime, XAttrs: map[string][]byte{"user.note": []byte("x")}}},
		{Key: "d/l", Info: backend.Info{Mode: fs.ModeSymlink | 0o777, MTime: mtime}},
	}
	var report bytes.Buffer
	tally := tree.NewTally(&report)
	load := func(key string) ([]byte, error) { return values[key], nil }
	if err := tree.ExportEntries(t.Context(), dst, entries, load, tally, tree.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tally.Err("export"); err != nil {
		if strings.Contains(report.String(), "may not support user attributes") {
			t.Skipf("%s keeps no user.* attributes: %s", dst, report.String())
		}
		t.Fatalf("%v: %s", err, report.String())
	}
	if got, want := tally.Summary(), "1 file, 1 directory, 1 symlink"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	for _, e := range entries {
		info, _, err := tree.NodeInfo(filepath.Join(dst, e.Key))
		if err != nil {
			t.Fatal(err)
		}
		if e.Info.Mode.Type() != fs.ModeSymlink && info.Mode != e.Info.Mode {
			t.Errorf("%s: mode %v, want %v", e.Key, info.Mode, e.Info.Mode)
		}
		if !info.MTime.Equal(e.Info.MTime) {
			t.Errorf("%s: mtime %v, want %v", e.Key, info.MTime, e.Info.MTime)
		}
		if got := string(info.XAttrs["user.note"]); got != string(e.Info.XAttrs["user.note"]) {
			t.Errorf("%s: user.note = %q, want %q", e.Key, got, e.Info.XAttrs["user.note"])
		}
	}
	if v, err := os.ReadFile(filepath.Join(dst, "d/f")); err != nil || string(v) != "hello" {
		t.Errorf("d/f = %q, %v; want hello", v, err)
	}
	if v, err := os.Readlink(filepath.Join(dst, "d/l")); err != nil || v != "f" {
		t.Errorf("d/l -> %q, %v; want f", v, err)
	}
}

// TestTallyNamesOperations: a failure is told as what was done ("mkdir"),
// not as the *at system call an os.Root made ("mkdirat").
func TestTallyNamesOperations(t *testing.T) {
	var report strings.Builder
	tally := tree.NewTally(&report)
	tally.Fail("export: %s: %v", "memory", &fs.PathError{Op: "mkdirat", Path: "memory", Err: syscall.EEXIST})
	tally.Note("import: %s: %v; skipped", "a", fmt.Errorf("read: %w", &fs.PathError{Op: "openat", Path: "a", Err: syscall.EACCES}))
	got := report.String()
	if strings.Contains(got, "mkdirat") || strings.Contains(got, "openat") || !strings.Contains(got, "mkdir memory: file exists") || !strings.Contains(got, "open a: permission denied") {
		t.Errorf("tally reported %q; want the operations named as users know them", got)
	}
}

// A symlink that another program put where the export makes a file, or
// on its way (a directory's name), is never written through: the file
// is refused and the link's target keeps its value. (The export made
// the file through os.Root, which follows a link that stays inside
// the target.)
func TestExportWritesThroughNoSymlink(t *testing.T) {
	dst := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(dst, "other"), 0o755))
	must(os.WriteFile(filepath.Join(dst, "other", "x"), []byte("keep"), 0o644))
	must(os.Symlink("other", filepath.Join(dst, "d")))
	entries := []backend.Entry{{Key: "d/x", Info: backend.Info{Mode: 0o644, MTime: time.Now()}}}
	var report bytes.Buffer
	tally := tree.NewTally(&report)
	load := func(string) ([]byte, error) { return []byte("exported"), nil }
	if err := tree.ExportEntries(t.Context(), dst, entries, load, tally, tree.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if tally.Err("export") == nil {
		t.Errorf("the export of d/x through the symlink d succeeded: %s", report.String())
	}
	if v, err := os.ReadFile(filepath.Join(dst, "other", "x")); err != nil || string(v) != "keep" {
		t.Errorf("the link's target holds %q (%v), want keep", v, err)
	}
}

// A setuid, setgid or sticky bit is exported as the bit it is (the mode
// is set through a descriptor of the node, in the kernel's bits).
func TestExportSpecialBits(t *testing.T) {
	dst := t.TempDir()
	mode := fs.FileMode(0o750) | fs.ModeSetgid | fs.ModeSticky
	entries := []backend.Entry{{Key: "f", Info: backend.Info{Mode: mode, MTime: time.Now()}}}
	var report bytes.Buffer
	tally := tree.NewTally(&report)
	load := func(string) ([]byte, error) { return []byte("x"), nil }
	if err := tree.ExportEntries(t.Context(), dst, entries, load, tally, tree.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tally.Err("export"); err != nil {
		t.Fatalf("%v: %s", err, report.String())
	}
	fi, err := os.Lstat(filepath.Join(dst, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != mode {
		t.Errorf("f: %v, want %v", fi.Mode(), mode)
	}
}

// SetXAttrsAt never sets an attribute through a symlink on the way to
// the name, though the link stays inside the root.
func TestSetXAttrsAtFollowsNoSymlink(t *testing.T) {
	dst := t.TempDir()
	if err := os.Mkdir(filepath.Join(dst, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dst, "d", "f")
	if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d", filepath.Join(dst, "l")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	err = tree.SetXAttrsAt(root, "l/f", map[string][]byte{"user.x": []byte("y")})
	if n, _ := syscall.Getxattr(target, "user.x", make([]byte, 8)); n > 0 {
		t.Errorf("d/f got the attribute through the link l (SetXAttrsAt: %v)", err)
	}
}
