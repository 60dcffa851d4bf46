package journal_test

import (
	"bytes"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/journal"
)

// TestAppendRecordsALargeValueWithoutCopying: recording a large value
// writes it from where it is; the journal allocates a small part of its
// size (it copied it twice, into the payload and into the frame: a 1 GiB
// file closed through a mount cost 2 GiB more), and the record reads back
// whole.
func TestAppendRecordsALargeValueWithoutCopying(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, _, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("large value, recorded in place\n"), (8<<20)/31)
	small := []byte("small\n")
	r := journal.Record{Gen: 1, Entries: []backend.Entry{
		{Key: "big", Value: value, Info: backend.Info{Mode: 0o644, MTime: time.Unix(1, 0), XAttrs: map[string][]byte{"user.a": []byte("b")}}},
		{Key: "small", Value: small, Info: backend.Info{Mode: 0o600, MTime: time.Unix(2, 0)}},
	}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := j.Append(r); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(len(value))/8 {
		t.Errorf("Append of a %d-byte value allocated %d bytes, want at most an eighth of it", len(value), got)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j, recs, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if len(recs) != 1 || len(recs[0].Entries) != 2 {
		t.Fatalf("read back %d records (%+v), want the one written with its two entries", len(recs), recs)
	}
	got := recs[0].Entries
	if !bytes.Equal(got[0].Value, value) || !bytes.Equal(got[1].Value, small) || string(got[0].Info.XAttrs["user.a"]) != "b" {
		t.Errorf("read back %s (%d bytes) and %s (%q); want the values written", got[0].Key, len(got[0].Value), got[1].Key, got[1].Value)
	}
}
