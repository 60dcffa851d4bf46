package fsck_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/fsck"
)

type sysErrStore interface {
	errorstore.Store
	backend.SysStore
}

// movable is the faulty store with the dir store's MoveAside.
type movable struct {
	sysErrStore
	d *dirstore.Store
}

func (m movable) MoveAside(ctx context.Context, key string) (string, error) {
	return m.d.MoveAside(ctx, key)
}

// TestUnreadableDirFileMovedAside: a dir store's file the disk cannot
// read is one finding; Check alone changes nothing; Repair renames the
// file, bytes and all, under .memfs-damaged/ and says where.
func TestUnreadableDirFileMovedAside(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"memory/ok.md": "fine\n", "memory/bad.md": "on a bad sector\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inner, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	st := errorstore.Wrap(inner, func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpLoad && slices.Contains(keys, "memory/bad.md") {
			return &fs.PathError{Op: "load", Path: "memory/bad.md", Err: syscall.EIO}
		}
		return nil
	}).(sysErrStore)
	ctx := context.Background()
	r, err := fsck.Check(ctx, st, fsck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Damaged() != 1 || r.Findings[0].Key != "memory/bad.md" || r.Findings[0].Kind != fsck.KindValue {
		t.Fatalf("Check: %+v, want memory/bad.md alone", r.Findings)
	}
	if _, err := os.Stat(filepath.Join(dir, "memory/bad.md")); err != nil {
		t.Fatalf("Check without Repair moved the file: %v", err)
	}
	// errorstore has only the wrapped store's declared capabilities:
	// move through the dir store itself, as the command would.
	r, err = fsck.Check(ctx, movable{st, inner}, fsck.Options{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	f := r.Findings[0]
	if f.Err != nil || !strings.HasPrefix(f.Aside, filepath.Join(dir, ".memfs-damaged")) {
		t.Fatalf("Repair: %+v, want the file moved under .memfs-damaged", f)
	}
	if b, err := os.ReadFile(f.Aside); err != nil || string(b) != "on a bad sector\n" {
		t.Errorf("the file moved aside: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "memory/bad.md")); !os.IsNotExist(err) {
		t.Errorf("the damaged key is still in place: %v", err)
	}
	if r.Damaged() != 0 {
		t.Errorf("after Repair: %d damaged, want 0", r.Damaged())
	}
}

// TestRepairLeavesAKeyThatReadsNow: a key found damaged that reads by the
// time Repair would move it (another writer replaced it meanwhile) is
// left in place, and the finding says why; only a key still damaged
// moves (Repair once moved whatever Check had found).
func TestRepairLeavesAKeyThatReadsNow(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory/bad.md"), []byte("rewritten since\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inner, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	loads := 0 // the check's loads of bad.md fail: its batch's, and its own
	st := errorstore.Wrap(inner, func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpLoad && slices.Contains(keys, "memory/bad.md") && loads < 2 {
			loads++
			return &fs.PathError{Op: "load", Path: "memory/bad.md", Err: syscall.EIO}
		}
		return nil
	}).(sysErrStore)
	r, err := fsck.Check(context.Background(), movable{st, inner}, fsck.Options{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 || !errors.Is(r.Findings[0].Err, fsck.ErrReadsNow) || r.Findings[0].Aside != "" {
		t.Fatalf("Repair: %+v, want memory/bad.md left in place with ErrReadsNow", r.Findings)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "memory/bad.md")); err != nil || string(b) != "rewritten since\n" {
		t.Errorf("memory/bad.md after Repair: %q, %v", b, err)
	}
}

// TestRun prints what Check finds and the verdict: an error naming the
// damage and the repair on a damaged store, a line saying none is left
// on a sound one.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	for name, v := range map[string]string{"ok.md": "fine\n", "bad.md": "on a bad sector\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inner, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	var bad atomic.Bool
	st := errorstore.Wrap(inner, func(op errorstore.Op, keys []string) error {
		if bad.Load() && op == errorstore.OpLoad && slices.Contains(keys, "bad.md") {
			return &fs.PathError{Op: "load", Path: "bad.md", Err: syscall.EIO}
		}
		return nil
	}).(sysErrStore)

	var w strings.Builder
	if err := fsck.Run(t.Context(), st, &w, "dir:s", fsck.Options{}); err != nil || !strings.HasPrefix(w.String(), "dir:s: no damage left (2 values read") {
		t.Errorf("Run of a sound store: %v, said %q; want no error and a line saying no damage is left", err, w.String())
	}
	bad.Store(true)
	w.Reset()
	err = fsck.Run(t.Context(), st, &w, "dir:s", fsck.Options{})
	if want := "fsck: dir:s: 1 damaged (2 values read) (memfs fsck --repair moves damaged records aside; nothing is deleted)"; err == nil || err.Error() != want {
		t.Errorf("Run of a damaged store: %v, want %q", err, want)
	}
	if !strings.HasPrefix(w.String(), "damaged value bad.md: ") || strings.Contains(w.String(), "no damage") {
		t.Errorf("Run of a damaged store said %q; want the finding alone", w.String())
	}
}
