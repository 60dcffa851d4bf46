package storetest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
)

// ReadOnlyOpener opens the store kept in dir, for reading only when
// readOnly (dirstore.OpenReadOnly, badgerstore.Options.ReadOnly).
type ReadOnlyOpener func(t *testing.T, dir string, readOnly bool) (backend.SysStore, error)

// RunReadOnly checks a store's read-only open, for the stores that have
// one: it reads what a writer saved; every write (Save, Delete, SaveSys,
// DeleteSys, and Apply, SaveIf and SwapSys where the store has them)
// fails with an error wrapping backend.ErrReadOnly; readers share the
// store, a writer and a reader exclude each other (backend.ErrStoreInUse);
// and nothing in the directory changes, byte for byte.
func RunReadOnly(t *testing.T, open ReadOnlyOpener) {
	ctx := t.Context()
	dir := t.TempDir()
	w, err := open(t, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	e := backend.Entry{Key: "memory/a.md", Value: []byte("kept\n"), Info: backend.Info{Size: 5, Mode: 0o644, MTime: time.Now()}}
	if err := w.Save(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := w.SaveSys(ctx, "rec", []byte("record")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	before := dirState(t, dir)

	r, err := open(t, dir, true)
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	r2, err := open(t, dir, true)
	if err != nil {
		t.Fatalf("a second read-only open: %v, want readers to share the store", err)
	}
	if got, err := r.Load(ctx, e.Key); err != nil || len(got) != 1 || string(got[0].Value) != "kept\n" {
		t.Errorf("read-only Load: %v, %v", got, err)
	}
	if got, err := r.LoadSys(ctx, "rec"); err != nil || string(got) != "record" {
		t.Errorf("read-only LoadSys: %q, %v", got, err)
	}
	if es, err := r.List(ctx); err != nil || len(es) == 0 {
		t.Errorf("read-only List: %v, %v", es, err)
	}
	writes := map[string]error{
		"Save":      r.Save(ctx, backend.Entry{Key: "memory/b.md", Value: []byte("x"), Info: backend.Info{Size: 1, Mode: 0o644, MTime: time.Now()}}),
		"Delete":    r.Delete(ctx, e.Key),
		"SaveSys":   r.SaveSys(ctx, "rec", []byte("changed")),
		"DeleteSys": r.DeleteSys(ctx, "rec"),
	}
	if b, ok := r.(backend.Batcher); ok {
		_, writes["Apply"] = b.Apply(ctx, backend.Batch{Deletes: []string{e.Key}})
	}
	if v, ok := r.(backend.Versioned); ok {
		_, writes["SaveIf"] = v.SaveIf(ctx, []backend.Entry{e}, []backend.Version{{}})
	}
	if sw, ok := r.(backend.SysSwapper); ok {
		_, writes["SwapSys"] = sw.SwapSys(ctx, "rec", []byte("record"), map[string][]byte{"rec": []byte("swapped")}, nil)
	}
	for op, err := range writes {
		if !errors.Is(err, backend.ErrReadOnly) {
			t.Errorf("read-only %s: %v, want backend.ErrReadOnly", op, err)
		}
	}
	if w, err := open(t, dir, false); !errors.Is(err, backend.ErrStoreInUse) {
		if err == nil {
			w.Close()
		}
		t.Errorf("a writable open beside readers: %v, want backend.ErrStoreInUse", err)
	}
	r.Close()
	r2.Close()
	if after := dirState(t, dir); after != before {
		t.Fatalf("the read-only opens changed the directory:\nbefore %s\nafter  %s", before, after)
	}
	w, err = open(t, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if r, err := open(t, dir, true); !errors.Is(err, backend.ErrStoreInUse) {
		if err == nil {
			r.Close()
		}
		t.Errorf("a read-only open beside a writer: %v, want backend.ErrStoreInUse", err)
	}
}

// dirState describes every node under dir: path, mode, size and, for a
// file, the hash of its bytes.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d", p, fi.Mode(), fi.Size())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(data))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
