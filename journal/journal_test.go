package journal_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/journal"
)

func rec(gen uint64, key, value string, removed ...string) journal.Record {
	r := journal.Record{Gen: gen, Removed: removed}
	if key != "" {
		r.Entries = []backend.Entry{{Key: key, Value: []byte(value), Info: backend.Info{
			Size: int64(len(value)), Mode: 0o640, UID: 7, GID: 8, MTime: time.Unix(1700000000, 42)}}}
	}
	return r
}

func open(t *testing.T, path string) (*journal.Journal, []journal.Record) {
	t.Helper()
	j, recs, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j, recs
}

func gens(recs []journal.Record) []uint64 {
	var g []uint64
	for _, r := range recs {
		g = append(g, r.Gen)
	}
	return g
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, recs := open(t, path)
	if len(recs) != 0 {
		t.Fatalf("new journal has %d records", len(recs))
	}
	big := string(bytes.Repeat([]byte{0, 1, 2, 255}, 1<<18))
	for _, r := range []journal.Record{rec(1, "memory/a.md", "alpha"), rec(2, "", "", "old/key", "other"), rec(3, "bin", big)} {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	_, recs = open(t, path)
	if !slices.Equal(gens(recs), []uint64{1, 2, 3}) {
		t.Fatalf("records = %v", gens(recs))
	}
	e := recs[0].Entries[0]
	if e.Key != "memory/a.md" || string(e.Value) != "alpha" || e.Info.Mode != 0o640 || e.Info.UID != 7 || e.Info.GID != 8 ||
		!e.Info.MTime.Equal(time.Unix(1700000000, 42)) || e.Info.Size != 5 {
		t.Fatalf("entry = %+v", e)
	}
	if !slices.Equal(recs[1].Removed, []string{"old/key", "other"}) {
		t.Fatalf("removed = %v", recs[1].Removed)
	}
	if string(recs[2].Entries[0].Value) != big {
		t.Fatal("big value damaged")
	}
}

func TestTornTailIsCutAndAppendsContinue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, _ := open(t, path)
	j.Append(rec(1, "a", "one"))
	j.Append(rec(2, "b", "two"))
	j.Close()
	// A crash in the middle of the third append, then a flipped byte in
	// the second record's payload: the journal ends before the damage.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{200, 0, 0, 0, 1, 2, 3})
	f.Close()
	_, recs := open(t, path)
	if !slices.Equal(gens(recs), []uint64{1, 2}) {
		t.Fatalf("after a torn tail: %v", gens(recs))
	}

	path2 := filepath.Join(t.TempDir(), "j")
	j2, _ := open(t, path2)
	j2.Append(rec(1, "a", "one"))
	size := j2.Size()
	j2.Append(rec(2, "b", "two"))
	j2.Close()
	data, _ := os.ReadFile(path2)
	data[size+12] ^= 0xff
	os.WriteFile(path2, data, 0o600)
	j3, recs := open(t, path2)
	if !slices.Equal(gens(recs), []uint64{1}) {
		t.Fatalf("after a corrupt record: %v", gens(recs))
	}
	// New records follow the intact ones and are readable.
	j3.Append(rec(5, "c", "five"))
	j3.Close()
	_, recs = open(t, path2)
	if !slices.Equal(gens(recs), []uint64{1, 5}) {
		t.Fatalf("append after cut: %v", gens(recs))
	}
}

func TestTruncate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, _ := open(t, path)
	for g := uint64(1); g <= 6; g++ {
		j.Append(rec(g, "k", "v"))
	}
	if err := j.Truncate(4); err != nil {
		t.Fatal(err)
	}
	// A late record at or below the truncated generation is durable in
	// the store already: it must never come back.
	j.Append(rec(3, "k", "stale"))
	j.Append(rec(7, "k", "new"))
	j.Close()
	j, recs := open(t, path)
	if !slices.Equal(gens(recs), []uint64{5, 6, 7}) {
		t.Fatalf("after Truncate(4): %v", gens(recs))
	}
	if err := j.Truncate(10); err != nil {
		t.Fatal(err)
	}
	if j.Size() != 0 {
		t.Fatalf("size after truncating everything = %d", j.Size())
	}
	j.Close()
	j, recs = open(t, path)
	if len(recs) != 0 {
		t.Fatalf("records after truncating everything: %v", gens(recs))
	}
	// Reset starts generations over: a new session's records are kept.
	if err := j.Reset(); err != nil {
		t.Fatal(err)
	}
	j.Append(rec(1, "k", "new session"))
	j.Close()
	_, recs = open(t, path)
	if !slices.Equal(gens(recs), []uint64{1}) {
		t.Fatalf("after Reset: %v", gens(recs))
	}
}

// Extended attributes ride along; a record without any keeps the old
// layout, and one where only the second entry has attributes keeps them on
// the right entry.
func TestXAttrsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, _ := open(t, path)
	r := rec(1, "a", "alpha")
	b := rec(1, "b", "beta").Entries[0]
	b.Info.XAttrs = map[string][]byte{"user.memfs.tags": []byte("x,y"), "user.empty": nil}
	r.Entries = append(r.Entries, b)
	plain := rec(2, "c", "gamma")
	for _, r := range []journal.Record{r, plain} {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	_, recs := open(t, path)
	if len(recs) != 2 || len(recs[0].Entries) != 2 {
		t.Fatalf("records = %+v", recs)
	}
	if x := recs[0].Entries[0].Info.XAttrs; x != nil {
		t.Errorf("entry a has xattrs %q, want none", x)
	}
	x := recs[0].Entries[1].Info.XAttrs
	if len(x) != 2 || string(x["user.memfs.tags"]) != "x,y" || len(x["user.empty"]) != 0 {
		t.Errorf("entry b xattrs = %q", x)
	}
	if string(recs[1].Entries[0].Value) != "gamma" || recs[1].Entries[0].Info.XAttrs != nil {
		t.Errorf("plain record = %+v", recs[1].Entries[0])
	}
}
