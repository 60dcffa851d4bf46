package journal_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
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
		j.Append(rec(g, fmt.Sprint("k", g), "v"))
	}
	if err := j.Truncate(4); err != nil {
		t.Fatal(err)
	}
	// A late record at or below the truncated generation is durable in
	// the store already: it must never come back.
	j.Append(rec(3, "k3", "stale"))
	j.Append(rec(7, "k7", "new"))
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

// fileHolds reports whether the journal file's raw bytes contain s.
func fileHolds(t *testing.T, path, s string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(s))
}

func appendRec(gen uint64, key, value string) journal.Record {
	r := rec(gen, key, value)
	r.Append = true
	return r
}

// A record that determines a key wholly scrubs the earlier records of its
// value from the file: an append that turned out to be the first half of
// a secret leaves no trace once the session records the redacted whole.
func TestSupersededValuesAreScrubbed(t *testing.T) {
	const half = "token: ghp_AAAAAAAAAAAAAAAAAA"
	tests := []struct {
		name  string
		recs  []journal.Record
		gone  []string // must not be in the file
		still []string // must be in the file
		want  []uint64 // generations read back
	}{
		{"append then whole", []journal.Record{appendRec(1, "k", half), rec(2, "k", "token: [REDACTED:github-pat]\n")},
			[]string{"ghp_AAAA"}, []string{"[REDACTED:github-pat]"}, []uint64{2}},
		{"whole then whole", []journal.Record{rec(1, "k", half), rec(2, "k", "other")},
			[]string{"ghp_AAAA"}, []string{"other"}, []uint64{2}},
		{"removal", []journal.Record{appendRec(1, "k", half), rec(2, "", "", "k")},
			[]string{"ghp_AAAA"}, nil, []uint64{2}},
		{"other keys kept", []journal.Record{
			{Gen: 1, Entries: []backend.Entry{{Key: "k", Value: []byte(half)}, {Key: "j", Value: []byte("jay")}}, Removed: []string{"x"}},
			rec(2, "k", "kay")},
			[]string{"ghp_AAAA"}, []string{"jay", "kay"}, []uint64{1, 2}},
		{"appends are not whole", []journal.Record{rec(1, "k", half), appendRec(2, "k", "BBBB")},
			nil, []string{"ghp_AAAA", "BBBB"}, []uint64{1, 2}},
		{"a late older record is dropped", []journal.Record{rec(5, "k", "new"), rec(3, "k", half)},
			[]string{"ghp_AAAA"}, []string{"new"}, []uint64{5}},
		{"later generations stay", []journal.Record{appendRec(7, "k", "late-append"), rec(6, "k", "whole")},
			nil, []string{"late-append", "whole"}, []uint64{7, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j")
			j, _ := open(t, path)
			for _, r := range tt.recs {
				if err := j.Append(r); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range tt.gone {
				if fileHolds(t, path, s) {
					t.Errorf("file still holds %q", s)
				}
			}
			for _, s := range tt.still {
				if !fileHolds(t, path, s) {
					t.Errorf("file lost %q", s)
				}
			}
			j.Close()
			j, recs := open(t, path)
			if !slices.Equal(gens(recs), tt.want) {
				t.Fatalf("records read back: got %v, want %v", gens(recs), tt.want)
			}
			// New records still follow, and a truncation keeps the rest.
			if err := j.Append(rec(100, "z", "zed")); err != nil {
				t.Fatal(err)
			}
			if err := j.Truncate(1); err != nil {
				t.Fatal(err)
			}
			j.Close()
			_, recs = open(t, path)
			var want []uint64
			for _, g := range append(tt.want, 100) {
				if g > 1 {
					want = append(want, g)
				}
			}
			if !slices.Equal(gens(recs), want) {
				t.Fatalf("after Truncate(1): got %v, want %v", gens(recs), want)
			}
			for _, s := range tt.gone {
				if fileHolds(t, path, s) {
					t.Errorf("file holds %q after Truncate", s)
				}
			}
		})
	}
}

// The multi-entry record keeps what the scrub did not touch, byte for byte.
func TestScrubKeepsTheRestOfARecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, _ := open(t, path)
	r := journal.Record{Gen: 1, Entries: []backend.Entry{
		{Key: "a", Value: []byte("secret-part"), Info: backend.Info{Mode: 0o600, XAttrs: map[string][]byte{"user.a": []byte("1")}}},
		{Key: "b", Value: []byte("bee"), Info: backend.Info{Mode: 0o640, UID: 3, XAttrs: map[string][]byte{"user.b": []byte("2")}}},
	}, Removed: []string{"c"}}
	if err := j.Append(r); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(rec(2, "a", "whole")); err != nil {
		t.Fatal(err)
	}
	j.Close()
	_, recs := open(t, path)
	if len(recs) != 2 || len(recs[0].Entries) != 1 {
		t.Fatalf("got %d records, first with %d entries; want 2, 1", len(recs), len(recs[0].Entries))
	}
	b := recs[0].Entries[0]
	if b.Key != "b" || string(b.Value) != "bee" || b.Info.Mode != 0o640 || b.Info.UID != 3 || string(b.Info.XAttrs["user.b"]) != "2" {
		t.Fatalf("kept entry changed: %+v", b)
	}
	if !slices.Equal(recs[0].Removed, []string{"c"}) {
		t.Fatalf("removed: got %v, want [c]", recs[0].Removed)
	}
}

// A journal path that is a symbolic link is refused, and the file it
// points at is left exactly as it was.
func TestOpenRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	if err := os.WriteFile(outside, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "j")
	if err := os.Symlink(outside, path); err != nil {
		t.Fatal(err)
	}
	_, _, err := journal.Open(path)
	if !errors.Is(err, journal.ErrNotRegular) {
		t.Fatalf("Open of a symlink: got %v, want ErrNotRegular", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "precious" {
		t.Fatalf("the link's target changed: %q", b)
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := journal.Open(filepath.Join(dir, "d")); err == nil {
		t.Fatal("Open of a directory succeeded")
	}
}

// Damage anywhere — a flipped byte in the first record, a broken length in
// the middle, garbage between frames, a torn tail — loses only the damaged
// frame: every intact record before and after it is read, the damaged
// bytes are copied to a file beside the journal and reported, and the
// journal goes on.
func TestDamageIsMovedAsideAndTheRestKept(t *testing.T) {
	tests := []struct {
		name   string
		damage func(data []byte, offs []int64) []byte
		want   []uint64
	}{
		{"flipped byte in the first record", func(d []byte, offs []int64) []byte { d[offs[0]+20] ^= 0x5a; return d }, []uint64{2, 3, 4, 5}},
		{"flipped magic of the first record", func(d []byte, offs []int64) []byte { d[0] ^= 0xff; return d }, []uint64{2, 3, 4, 5}},
		{"broken length in the middle", func(d []byte, offs []int64) []byte { d[offs[2]+5] = 0x7f; return d }, []uint64{1, 2, 4, 5}},
		{"garbage between frames", func(d []byte, offs []int64) []byte {
			junk := bytes.Repeat([]byte("\xe5JNL garbage "), 9)
			return append(append(append([]byte{}, d[:offs[3]]...), junk...), d[offs[3]:]...)
		}, []uint64{1, 2, 3, 4, 5}},
		{"torn tail", func(d []byte, offs []int64) []byte { return d[:len(d)-3] }, []uint64{1, 2, 3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "j")
			j, _ := open(t, path)
			var offs []int64
			for g := uint64(1); g <= 5; g++ {
				offs = append(offs, j.Size())
				if err := j.Append(rec(g, fmt.Sprint("k", g), fmt.Sprint("value ", g))); err != nil {
					t.Fatal(err)
				}
			}
			j.Close()
			orig, _ := os.ReadFile(path)
			damaged := tt.damage(slices.Clone(orig), offs)
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			j, recs := open(t, path)
			if !slices.Equal(gens(recs), tt.want) {
				t.Fatalf("records read: got %v, want %v", gens(recs), tt.want)
			}
			d := j.Damaged()
			if len(d) == 0 {
				t.Fatal("damage not reported")
			}
			saved := 0
			for _, x := range d {
				if x.SavedTo == "" {
					t.Fatalf("damage at %d not saved: %v", x.Off, x.Err)
				}
				b, err := os.ReadFile(x.SavedTo)
				if err != nil || int64(len(b)) != x.Len || !bytes.Equal(b, damaged[x.Off:x.Off+x.Len]) {
					t.Fatalf("saved damage %s: %d bytes, %v; want the %d damaged bytes", x.SavedTo, len(b), err, x.Len)
				}
				saved += len(b)
			}
			if saved == 0 {
				t.Fatal("nothing saved")
			}
			if err := j.Append(rec(9, "k9", "after")); err != nil {
				t.Fatal(err)
			}
			j.Close()
			j, recs = open(t, path)
			if want := append(slices.Clone(tt.want), 9); !slices.Equal(gens(recs), want) {
				t.Fatalf("after reopening: got %v, want %v", gens(recs), want)
			}
			if len(j.Damaged()) != 0 {
				t.Fatalf("damage reported again after it was moved aside: %+v", j.Damaged())
			}
		})
	}
}

// Every field of a node's metadata survives the journal: type, special
// bits, atime, ctime, rdev and hard-link group.
func TestNodeMetadataRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, _, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	at, ct := time.Unix(1000, 5), time.Unix(2000, 7)
	want := []backend.Entry{
		{Key: "d", Info: backend.Info{Mode: fs.ModeDir | fs.ModeSetgid | fs.ModeSticky | 0o700, ATime: at, CTime: ct, MTime: time.Unix(3, 0)}},
		{Key: "l", Value: []byte("../x"), Info: backend.Info{Mode: fs.ModeSymlink | 0o777, MTime: time.Unix(4, 0), CTime: ct}},
		{Key: "c", Info: backend.Info{Mode: fs.ModeDevice | fs.ModeCharDevice | 0o620, Rdev: 0x0501, MTime: time.Unix(5, 0)}},
		{Key: "h", Value: []byte("x"), Info: backend.Info{Mode: fs.ModeSetuid | 0o755, Link: "g1", MTime: time.Unix(6, 0)}},
	}
	if err := j.Append(journal.Record{Gen: 1, Entries: want}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	j, recs, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if len(recs) != 1 || len(recs[0].Entries) != len(want) {
		t.Fatalf("records = %+v", recs)
	}
	for i, e := range recs[0].Entries {
		w := want[i]
		g := e.Info
		if g.Mode != w.Info.Mode || !g.ATime.Equal(w.Info.ATime) || !g.CTime.Equal(w.Info.CTime) || g.Rdev != w.Info.Rdev || g.Link != w.Info.Link || string(e.Value) != string(w.Value) {
			t.Errorf("%s: got %+v, want %+v", e.Key, g, w.Info)
		}
	}
}

// TestBasesRoundTrip: the base versions a record carries (a shared store's
// conflict policy) come back, records without them come back without,
// and a scrub of one entry keeps the bases of the rest.
func TestBasesRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, _ := open(t, path)
	withBases := rec(1, "memory/a.md", "alpha", "memory/gone.md")
	withBases.Entries = append(withBases.Entries, rec(1, "memory/b.md", "beta").Entries...)
	withBases.Bases = map[string]backend.Version{
		"memory/a.md":    {Size: 3, MTime: 1700000000000000042, Rev: 17},
		"memory/b.md":    {}, // created: absent
		"memory/gone.md": {Size: 1, MTime: 5, Rev: 9},
	}
	for _, r := range []journal.Record{withBases, rec(2, "memory/c.md", "gamma")} {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	j, recs := open(t, path)
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	if got := recs[0].Bases; !maps.Equal(got, withBases.Bases) {
		t.Errorf("bases = %v, want %v", got, withBases.Bases)
	}
	if recs[1].Bases != nil {
		t.Errorf("a record without bases came back with %v", recs[1].Bases)
	}
	// A whole value of memory/b.md later scrubs it from the first record.
	if err := j.Append(rec(3, "memory/b.md", "beta2")); err != nil {
		t.Fatal(err)
	}
	j.Close()
	_, recs = open(t, path)
	want := map[string]backend.Version{"memory/a.md": withBases.Bases["memory/a.md"], "memory/gone.md": withBases.Bases["memory/gone.md"]}
	if got := recs[0].Bases; !maps.Equal(got, want) {
		t.Errorf("after a scrub, bases = %v, want %v", got, want)
	}
}

// TestDroppedKeys: a record that drops a key scrubs the earlier records of
// its value, changes nothing of it, and comes back with the key listed.
func TestDroppedKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, _ := open(t, path)
	moved := rec(2, "memory/a.conflict-me.md", "ours")
	moved.Dropped = []string{"memory/a.md"}
	for _, r := range []journal.Record{rec(1, "memory/a.md", "ours"), moved} {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	// A late record of the dropped key, older than the drop, is ignored.
	if err := j.Append(rec(1, "memory/a.md", "late")); err != nil {
		t.Fatal(err)
	}
	j.Close()
	_, recs := open(t, path)
	var keys []string
	for _, r := range recs {
		for _, e := range r.Entries {
			keys = append(keys, e.Key)
		}
	}
	if !slices.Equal(keys, []string{"memory/a.conflict-me.md"}) {
		t.Errorf("entries after the drop: %v, want only the conflict copy", keys)
	}
	if n := len(recs); n == 0 || !slices.Equal(recs[n-1].Dropped, []string{"memory/a.md"}) {
		t.Errorf("records %+v; want the last to drop memory/a.md", recs)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(b, []byte("ours")) != 1 {
		t.Errorf("the journal holds the dropped value still: %q", b)
	}
}

// TestRenamedFiles: a rename's record names each moved file's old key,
// and still does after a later record scrubs the moved value.
func TestRenamedFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, _ := open(t, path)
	moved := rec(1, "memory/d2/a.md", "a")
	moved.Removed = []string{"memory/d1/a.md"}
	moved.Renamed = map[string]string{"memory/d2/a.md": "memory/d1/a.md"}
	for _, r := range []journal.Record{moved, rec(2, "memory/d2/a.md", "later")} {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	_, recs := open(t, path)
	if len(recs) != 2 || !maps.Equal(recs[0].Renamed, moved.Renamed) {
		t.Fatalf("records %+v; want the first to name the rename %v", recs, moved.Renamed)
	}
}
