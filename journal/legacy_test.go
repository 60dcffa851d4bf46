package journal

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs/backend"
)

// legacyFrame frames r as memfs did before the magic.
func legacyFrame(r Record) []byte {
	payload := encode(r)
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, crcTable))
	return append(b, payload...)
}

// A journal written by an earlier memfs (no magic) is read whole and
// written again in the current framing.
func TestLegacyJournalIsReadAndRewritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	var data []byte
	for g := uint64(1); g <= 3; g++ {
		data = append(data, legacyFrame(Record{Gen: g, Entries: []backend.Entry{{Key: "k", Value: []byte("v")}}, Append: true})...)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	j, recs, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || len(j.Damaged()) != 0 {
		t.Fatalf("got %d records, %d damaged; want 3, 0", len(recs), len(j.Damaged()))
	}
	j.Close()
	b, _ := os.ReadFile(path)
	if string(b[:4]) != string(magic) {
		t.Fatalf("not rewritten in the current framing: % x", b[:4])
	}
	j, recs, err = Open(path)
	if err != nil || len(recs) != 3 {
		t.Fatalf("reopened: %d records, %v", len(recs), err)
	}
	j.Close()
}
