package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
)

func record(gen uint64, key, value string) Record {
	return Record{Gen: gen, Entries: []backend.Entry{{Key: key, Value: []byte(value), Info: backend.Info{Mode: 0o644}}}}
}

// Truncate copies the kept records and syncs the copy without the lock
// Append needs: an Append (a close(2) through the mount) made meanwhile
// neither waits for it nor is lost.
func TestAppendDuringTruncate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for g := uint64(1); g <= 4; g++ {
		if err := j.Append(record(g, "k"+string(rune('0'+g)), "v")); err != nil {
			t.Fatal(err)
		}
	}
	appended := make(chan error, 1)
	j.copied = func() {
		go func() { appended <- j.Append(record(5, "k5", "during")) }()
		select {
		case err := <-appended:
			appended <- err
		case <-time.After(5 * time.Second):
			t.Error("Append waited for Truncate's copy")
		}
	}
	if err := j.Truncate(2); err != nil {
		t.Fatal(err)
	}
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	j.Close()
	_, recs, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var gens []uint64
	for _, r := range recs {
		gens = append(gens, r.Gen)
	}
	if len(gens) != 3 || gens[0] != 3 || gens[1] != 4 || gens[2] != 5 {
		t.Fatalf("after Truncate(2) with an Append during it the journal holds generations %v, want [3 4 5]", gens)
	}
}

// A record scrubbed while Truncate copied it (a later whole record of its
// key) must not come back from the copy: the copy is made again.
func TestScrubDuringTruncate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.Append(record(1, "old", "x")); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(Record{Gen: 2, Append: true, Entries: []backend.Entry{{Key: "k", Value: []byte("half of a SECRET-PIECE")}}}); err != nil {
		t.Fatal(err)
	}
	j.copied = func() {
		// The whole value of k: the append record above is scrubbed.
		if err := j.Append(record(3, "k", "whole, [REDACTED]")); err != nil {
			t.Error(err)
		}
	}
	if err := j.Truncate(1); err != nil {
		t.Fatal(err)
	}
	j.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("SECRET-PIECE")) {
		t.Fatal("a scrubbed record came back through Truncate's copy")
	}
	_, recs, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Gen != 3 {
		t.Fatalf("after the scrub and the Truncate the journal holds %+v, want only generation 3", recs)
	}
}
