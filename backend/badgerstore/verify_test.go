package badgerstore

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
)

// TestOpenLeavesTablesUnmapped: the check of every table at Open reads the
// tables through mappings of its own, which it unmaps: the pages of
// badger's own mappings of the tables stay out of the process's resident
// memory until a read needs them. Checked through badger's mappings, 100
// MiB of a 100,000-key store's tables stayed resident after every mount
// (VmRSS's RssFile, BENCHMARKS.md).
func TestOpenLeavesTablesUnmapped(t *testing.T) {
	dir, ssts := tablesStore(t)
	var tables int64
	for _, p := range ssts {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		tables += fi.Size()
	}
	if tables < 8<<20 {
		t.Fatalf("the tables hold %d bytes, want at least 8 MiB: the test proves nothing", tables)
	}
	openT(t, dir, Options{})
	if got := mappedResident(t, dir, ".sst"); got > tables/8 {
		t.Errorf("after Open, %d KiB of the tables' %d KiB are resident in the process's mappings; want at most an eighth (the indexes)", got>>10, tables>>10)
	}
}

// tablesStore writes a store of 16 MiB of values (4,000 of 4 KiB, random:
// tables of about that size) in a new directory, closes it, and returns the
// directory and its tables.
func tablesStore(t *testing.T) (dir string, ssts []string) {
	t.Helper()
	dir = t.TempDir()
	s := openT(t, dir, Options{})
	for start := 0; start < 4000; start += 500 {
		var batch []backend.Entry
		for i := start; i < start+500; i++ {
			batch = append(batch, entry("k/"+strconv.Itoa(i), randomBytes(4<<10, uint64(i))))
		}
		if err := s.Save(t.Context(), batch...); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil { // the memtable goes to a table
		t.Fatal(err)
	}
	ssts, _ = filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no table: the test proves nothing")
	}
	return dir, ssts
}

// TestOpenChecksTablesInLittleMemory: the check of the tables at Open
// decompresses each block into a buffer it reuses. Badger's
// Table.VerifyChecksum allocated every block anew, and held a table's
// blocks until the table was done: 650 MB allocated at each mount of a
// 100,000-key store, a fifth of the mount's CPU (BENCHMARKS.md).
func TestOpenChecksTablesInLittleMemory(t *testing.T) {
	dir, ssts := tablesStore(t)
	var tables int64
	for _, p := range ssts {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		tables += fi.Size()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := verifyTables(dir, false); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(tables)/8 {
		t.Errorf("checking %d KiB of tables allocated %d KiB, want at most an eighth of them", tables>>10, got>>10)
	}
}

// TestDamagedTableFailsOpen: a table damaged anywhere (a data block, the
// index, the footer, cut short, emptied) fails the check at Open, which
// reports it as damage (backend.ErrCorrupt) and changes nothing.
func TestDamagedTableFailsOpen(t *testing.T) {
	flip := func(from, to func(n int) int) func([]byte) []byte {
		return func(b []byte) []byte {
			for i := from(len(b)); i < to(len(b)); i++ {
				b[i] ^= byte(i*7 + 1)
			}
			return b
		}
	}
	for _, tt := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"a data block", flip(func(n int) int { return n / 3 }, func(n int) int { return n/3 + 64 })},
		{"the start", flip(func(int) int { return 0 }, func(int) int { return 16 })},
		{"the index", flip(func(n int) int { return n - 2000 }, func(n int) int { return n - 1900 })},
		{"the footer", flip(func(n int) int { return n - 4 }, func(n int) int { return n })},
		{"cut short", func(b []byte) []byte { return b[:len(b)-100] }},
		{"cut to a block", func(b []byte) []byte { return b[:len(b)/2] }},
		{"emptied", func([]byte) []byte { return nil }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, ssts := tablesStore(t)
			b, err := os.ReadFile(ssts[0])
			if err != nil {
				t.Fatal(err)
			}
			damaged := tt.damage(b)
			if err := os.WriteFile(ssts[0], damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := Open(dir, Options{})
			if err == nil {
				s.Close()
				t.Fatal("Open of a store with a damaged table: nil error")
			}
			if !errors.Is(err, backend.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(ssts[0])) {
				t.Errorf("Open: %v, want an error naming %s and wrapping backend.ErrCorrupt", err, filepath.Base(ssts[0]))
			}
			if got, _ := os.ReadFile(ssts[0]); string(got) != string(damaged) {
				t.Error("Open changed the damaged table")
			}
		})
	}
}

// mappedResident sums the Rss of this process's mappings of the files in
// dir whose names end in suffix.
func mappedResident(t *testing.T, dir, suffix string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	var sum int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if strings.Contains(fields[0], "-") && len(fields) >= 5 {
			p := fields[len(fields)-1]
			in = len(fields) >= 6 && filepath.Dir(p) == dir && strings.HasSuffix(p, suffix)
			continue
		}
		if in && fields[0] == "Rss:" {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			sum += kb << 10
		}
	}
	return sum
}

// TestEmptyMemtableLogAfterCrash: badger creates a memtable log, then
// sizes it; a kill -9 between the two leaves an empty *.mem, which
// badger's next open refused ("while opening fid: 1 err: Create a new
// file"), every open after it too: TestRepeatedCrashesKeepTheMemtableSize
// failed so about once in eight runs. An empty log holds nothing; Open
// removes it and opens the store.
func TestEmptyMemtableLogAfterCrash(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	want := entry("k", []byte("v"))
	if err := s.Save(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "00007.mem"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir, Options{})
	got, err := s.Load(t.Context(), "k")
	if err != nil || len(got) != 1 || string(got[0].Value) != "v" {
		t.Fatalf("Load after an empty memtable log: %v, %v", got, err)
	}
}

// TestEmptyMemtableLogReadOnly: a read-only open of such a store reads it
// (through the scratch view) and leaves the empty log where it is.
func TestEmptyMemtableLogReadOnly(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	if err := s.Save(t.Context(), entry("k", []byte("v"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "00007.mem")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir, Options{ReadOnly: true})
	got, err := s.Load(t.Context(), "k")
	if err != nil || len(got) != 1 || string(got[0].Value) != "v" {
		t.Fatalf("read-only Load after an empty memtable log: %v, %v", got, err)
	}
	if _, err := os.Stat(empty); err != nil {
		t.Errorf("the read-only open changed the store: %v", err)
	}
}
