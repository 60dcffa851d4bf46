package dirstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
)

// TestSysListingReadsOnlyThePrefix: listing (and scanning) the records
// under a prefix reads the prefix's directory only: a symlink another
// program left under an unrelated prefix fails a listing of that prefix,
// never one of another (ListSys walked the whole records' tree, and so
// failed every listing and cost a walk of all records for one key's).
func TestSysListingReadsOnlyThePrefix(t *testing.T) {
	dir := t.TempDir()
	s, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	for _, n := range []string{"history/v/k1/001", "history/v/k1/002", "history/v/k2/001", "other/x"} {
		if err := s.SaveSys(ctx, n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, ".memfs-sys/other/link")); err != nil {
		t.Fatal(err)
	}
	l, err := s.ListSys(ctx, "history/v/k1/")
	if err != nil || len(l) != 2 {
		t.Errorf("ListSys(history/v/k1/) = %d records, %v; want 2", len(l), err)
	}
	sc, err := s.ScanSys(ctx, "history/v/k1/")
	if err != nil || len(sc) != 2 || string(sc[1].Value) != "history/v/k1/002" {
		t.Errorf("ScanSys(history/v/k1/) = %v, %v; want its 2 records", sc, err)
	}
	if _, err := s.ListSys(ctx, "other/"); !errors.Is(err, backend.ErrSymlink) {
		t.Errorf("ListSys(other/) = %v, want ErrSymlink", err)
	}
	if _, err := s.ScanSys(ctx, "oth"); !errors.Is(err, backend.ErrSymlink) {
		t.Errorf("ScanSys(oth) = %v, want ErrSymlink", err)
	}
}
