package dirstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
)

// TestSaveSysBatchSyncsOncePerFile: a batch of system records costs one
// fsync per record and one per directory it touched, where a SaveSys
// each cost two per record (history's records: 40,000 fsyncs for a flush
// of 10,000 notes); every record is in place, whole, after the call, and
// no temp file is left.
func TestSaveSysBatchSyncsOncePerFile(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	const n = 100
	recs := map[string][]byte{}
	for i := range n {
		recs[fmt.Sprintf("history/o/%02d/%03d", i%2, i)] = []byte(strings.Repeat("x", i))
	}
	if err := s.SaveSysBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	before := fsyncs.Load()
	for name := range recs {
		recs[name] = append(recs[name], 'y')
	}
	if err := s.SaveSysBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	// 100 files, their 2 directories.
	if got := fsyncs.Load() - before; got > n+2 {
		t.Errorf("a batch of %d records in 2 directories took %d fsyncs, want at most %d", n, got, n+2)
	}
	for name, want := range recs {
		b, err := s.LoadSys(ctx, name)
		if err != nil || string(b) != string(want) {
			t.Errorf("LoadSys(%s) = %q, %v; want %q", name, b, err, want)
		}
	}
	for _, d := range []string{"00", "01"} {
		ents, err := os.ReadDir(filepath.Join(dir, sysDir, "history/o", d))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("temp file %s left behind", e.Name())
			}
		}
	}
}

// TestSaveSysBatchRefusesSymlinks: a batch never writes through a link
// another program put in a record's directory or at its name, and
// checks every name before it writes anything.
func TestSaveSysBatchRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	if err := s.SaveSys(ctx, "a/x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	target := t.TempDir()
	if err := os.Symlink(target, filepath.Join(dir, sysDir, "l")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(target, "f"), filepath.Join(dir, sysDir, "a", "y")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"l/r", "a/y"} {
		err := s.SaveSysBatch(ctx, map[string][]byte{"a/ok": []byte("1"), name: []byte("2")})
		if err == nil || !strings.Contains(err.Error(), backend.ErrSymlink.Error()) {
			t.Errorf("SaveSysBatch with %s = %v, want ErrSymlink", name, err)
		}
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("the link's target holds %v", ents)
	}
	if _, err := s.LoadSys(ctx, "a/ok"); err == nil {
		t.Errorf("a/ok was written by a batch that failed its check")
	}
}
