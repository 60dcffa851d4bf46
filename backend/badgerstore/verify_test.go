package badgerstore

import (
	"bufio"
	"os"
	"path/filepath"
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
	dir := t.TempDir()
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
	var tables int64
	ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
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
