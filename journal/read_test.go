package journal_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/journal"
)

// TestRead: Read returns the intact records around damage, reports the
// damage, and changes nothing: a missing journal stays missing, a damaged
// one keeps its bytes and gets nothing beside it.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "journal")
	if recs, damaged, err := journal.Read(path); err != nil || len(recs) != 0 || len(damaged) != 0 {
		t.Fatalf("Read of a missing journal: %v, %v, %v", recs, damaged, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("Read created the journal: %v", err)
	}
	j, _, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []string{"a", "b"} {
		err := j.Append(journal.Record{Gen: uint64(i + 1), Entries: []backend.Entry{{Key: k, Value: []byte(k),
			Info: backend.Info{Size: 1, Mode: 0o644, MTime: time.Now()}}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, bytes.Repeat([]byte{0xA5}, 64)...)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	recs, damaged, err := journal.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Errorf("Read: %d records, want 2", len(recs))
	}
	if len(damaged) != 1 || damaged[0].Len != 64 || damaged[0].SavedTo != "" {
		t.Errorf("Read's damage: %+v, want 64 bytes left in place", damaged)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
		t.Error("Read changed the journal")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("Read left %d files beside the journal", len(ents)-1)
	}
}
