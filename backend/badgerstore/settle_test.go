package badgerstore

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/memfs/memfs/backend"
)

func TestCompactionDue(t *testing.T) {
	level := func(n, tables int, size, target int64, score float64) badger.LevelInfo {
		return badger.LevelInfo{Level: n, NumTables: tables, Size: size, TargetSize: target, Score: score}
	}
	for _, tt := range []struct {
		name   string
		levels []badger.LevelInfo
		want   bool
	}{
		{"empty", []badger.LevelInfo{level(0, 0, 0, 0, 0), level(1, 0, 0, 10, 0), level(2, 0, 0, 10, 0)}, false},
		{"level 0 under its count with the memtables", []badger.LevelInfo{level(0, 2, 20, 0, 0.4), level(1, 0, 0, 10, 0), level(2, 5, 50, 50, 0)}, false},
		{"level 0 at its count once the memtables are flushed", []badger.LevelInfo{level(0, 3, 30, 0, 0.6), level(1, 0, 0, 10, 0), level(2, 5, 50, 50, 0)}, true},
		{"a middle level over its target", []badger.LevelInfo{level(0, 0, 0, 0, 0), level(1, 9, 47, 10, 4.7), level(2, 5, 50, 50, 0)}, true},
		{"the last level has no target to exceed", []badger.LevelInfo{level(0, 0, 0, 0, 0), level(1, 0, 0, 10, 0), level(2, 9, 90, 50, 1.8)}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := compactionDue(tt.levels, 5, numMemtables); got != tt.want {
				t.Errorf("compactionDue = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCloseSettlesAfterABulkWrite: a session that adds more than
// settleAfter bytes to the tables (an import) and leaves a compaction due
// compacts at its Close, so that the next Open compacts nothing: right
// after `memfs import` of 100,000 keys, badger's compaction at the first
// mount took 580-940 MiB of VmRSS (BENCHMARKS.md).
func TestCloseSettlesAfterABulkWrite(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const batch = 400 // 4 KiB values: 1.6 MiB, one transaction
	n := 0
	key := func(i int) string { return fmt.Sprintf("bulk/%06d", i) }
	for {
		// As after an import: compactions have moved tables out of
		// level 0 (Flatten compacts nothing in a tree that is all level
		// 0), and one is due.
		levels := s.db.Levels()
		below := false
		for _, l := range levels[1:] {
			below = below || l.NumTables > 0
		}
		if below && tableBytes(levels)-s.tablesAtOpen > settleAfter && compactionDue(levels, s.db.Opts().NumLevelZeroTables, numMemtables) {
			break
		}
		if n > 200<<20>>12 {
			t.Fatalf("after %d MiB written, no compaction is due: the test proves nothing", n>>8)
		}
		es := make([]backend.Entry, batch)
		for i := range es {
			es[i] = entry(key(n+i), randomBytes(4<<10, uint64(n+i)))
		}
		if err := s.Save(t.Context(), es...); err != nil {
			t.Fatal(err)
		}
		n += batch
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := openT(t, dir, Options{ReadOnly: true}) // read-only: badger compacts nothing
	levels := r.db.Levels()
	if compactionDue(levels, r.db.Opts().NumLevelZeroTables, 0) {
		t.Errorf("after Close, a compaction is due at the next open: %+v", levels)
	}
	// Flattened: level 0 holds only what Close flushed from memory, and
	// one level holds the rest.
	holding := 0
	for _, l := range levels[1:] {
		if l.NumTables > 0 {
			holding++
		}
	}
	if levels[0].NumTables > numMemtables || holding != 1 {
		t.Errorf("after Close, level 0 holds %d tables and %d levels below it hold some, want at most %d and 1: %+v", levels[0].NumTables, holding, numMemtables, levels)
	}
	for _, i := range []int{0, n / 2, n - 1} {
		es, err := r.Load(t.Context(), key(i))
		if err != nil || !bytes.Equal(es[0].Value, randomBytes(4<<10, uint64(i))) {
			t.Errorf("Load(%s) after the compaction at close: %v", key(i), err)
		}
	}
}

// TestOpenReadsNoFullValueLog: badger's writable open reads the newest
// value log through, by a mapping that keeps what it read resident (36 MiB
// at the first mount after an import; the value log of a session that
// wrote a 256 MiB file would be 256). Close starts an empty value log
// after a newest one of more than rotateAfter bytes, so the next open
// reads nothing of it, and its values read as before.
func TestOpenReadsNoFullValueLog(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	big := map[string][]byte{}
	for i := range 4 {
		k := fmt.Sprintf("memory/big%d.md", i)
		big[k] = randomBytes(1<<20, uint64(i))
		if err := s.Save(t.Context(), entry(k, big[k])); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var full int64
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	for _, v := range vlogs {
		if fi, err := os.Stat(v); err == nil {
			full = max(full, fi.Size())
		}
	}
	if full < 4<<20 {
		t.Fatalf("no value log holds the 4 MiB saved (largest %d bytes): the test proves nothing", full)
	}
	if fi, err := os.Stat(newestVlogPath(t, dir)); err != nil || fi.Size() != vlogHeaderSize {
		t.Fatalf("the newest value log after Close: %v, %v; want an empty one (%d bytes)", fi, err, vlogHeaderSize)
	}
	s = openT(t, dir, Options{})
	if got := mappedResident(t, dir, ".vlog"); got > 1<<20 {
		t.Errorf("after Open, %d KiB of the value logs are resident in the process's mappings; want at most 1 MiB", got>>10)
	}
	for k, want := range big {
		es, err := s.Load(t.Context(), k)
		if err != nil || !bytes.Equal(es[0].Value, want) {
			t.Errorf("Load(%s) after the value log was rotated: %v", k, err)
		}
	}
}

// TestCloseKeepsASmallValueLogNewest: a newest value log of rotateAfter
// bytes or less stays the newest (the next open reads it, a small read),
// and Close makes no file.
func TestCloseKeepsASmallValueLogNewest(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	if err := s.Save(t.Context(), entry("memory/big.md", randomBytes(100<<10, 1))); err != nil {
		t.Fatal(err)
	}
	newest := newestVlogPath(t, dir)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := newestVlogPath(t, dir); got != newest {
		t.Errorf("the newest value log after Close: %s, want %s still", got, newest)
	}
}
