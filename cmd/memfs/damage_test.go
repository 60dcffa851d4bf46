package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/search"
)

// TestTruncatedValueLogIsNeverAnEmptyRead: a badger store whose value log
// lost its tail must not hand out an empty (or short) value for a file
// that ls -l shows whole: the read fails, naming the damage, and the other
// values stay readable.
func TestTruncatedValueLogIsNeverAnEmptyRead(t *testing.T) {
	dir := t.TempDir()
	store := "badger:" + dir
	big := bytes.Repeat([]byte("a line of a long note that goes to the value log\n"), 5400) // 270,000 bytes
	mustRun(t, "small\n", "put", "--store", store, "memory/small.md")
	mustRun(t, string(big), "put", "--store", store, "memory/big.md")
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if len(vlogs) == 0 {
		t.Fatal("no value log")
	}
	for _, v := range vlogs {
		fi, err := os.Stat(v)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 100_000 {
			if err := os.Truncate(v, fi.Size()-200_000); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, errOut, err := run(t, "", "cat", "--store", store, "memory/big.md")
	if err == nil {
		t.Fatalf("memfs cat of a value the value log lost: exit 0 with %d bytes", len(out))
	}
	if msg := err.Error() + errOut; !strings.Contains(msg, "damaged") || !strings.Contains(msg, "memory/big.md") {
		t.Errorf("memfs cat: %q, want an error naming the key and the damage", msg)
	}
	if got := mustRun(t, "", "cat", "--store", store, "memory/small.md"); got != "small\n" {
		t.Errorf("the undamaged value: %q", got)
	}
}

// TestDamagedBadgerFilesAreNeverRepairedAway: a badger store with its
// MANIFEST missing, or random bytes in a table, fails to open with an error
// that says so, and nothing in it is deleted or rewritten (badger started a
// new database and deleted the table that held every key).
func TestDamagedBadgerFilesAreNeverRepairedAway(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"MANIFEST missing", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "MANIFEST")); err != nil {
				t.Fatal(err)
			}
		}, "MANIFEST"},
		{"random bytes in a table", func(t *testing.T, dir string) {
			ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			if len(ssts) == 0 {
				t.Fatal("no table")
			}
			b, err := os.ReadFile(ssts[0])
			if err != nil {
				t.Fatal(err)
			}
			for i := len(b) / 4; i < len(b)/2; i++ {
				b[i] ^= byte(i*7 + 1)
			}
			if err := os.WriteFile(ssts[0], b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "table is damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			store := "badger:" + dir
			src := t.TempDir()
			if err := os.MkdirAll(filepath.Join(src, "memory"), 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range 200 {
				if err := os.WriteFile(filepath.Join(src, "memory", fmt.Sprintf("n%03d.md", i)), []byte("note\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			mustRun(t, "", "import", "--store", store, src)
			// Flush the memtable into a table: badger does it at close
			// when the store is reopened a few times.
			for range 3 {
				mustRun(t, "", "ls", "--store", store)
			}
			tc.damage(t, dir)
			// Every file's name and bytes, but our lock's (the PID of
			// each opener). Badger's open sets the MANIFEST's mtime (an
			// ftruncate to its own length): bytes are what must not move.
			state := func() string {
				var b strings.Builder
				ents, err := os.ReadDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range ents {
					fi, err := e.Info()
					if err != nil {
						t.Fatal(err)
					}
					if e.Name() == "memfs.lock" || strings.HasSuffix(e.Name(), ".vlog") && fi.Size() <= 64 {
						continue // the PID of each opener; an empty value log badger rotates
					}
					data, err := os.ReadFile(filepath.Join(dir, e.Name()))
					if err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(&b, "%s %x\n", e.Name(), sha256.Sum256(data))
				}
				return b.String()
			}
			before := state()
			// In a process of its own: badger's failed open races with
			// its own table loaders (levels.go, closeAllTables), which the
			// race detector reports; that is badger's, not this test's.
			cmd := exec.Command(os.Args[0], "ls", "--store", store)
			cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1")
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("memfs ls of a damaged store: exit 0")
			}
			if msg := string(out); !strings.Contains(strings.ToLower(msg), strings.ToLower(tc.want)) {
				t.Errorf("memfs ls: %q, want it to name %q", msg, tc.want)
			}
			if after := state(); after != before {
				t.Fatalf("opening the damaged store changed it: %s", firstLineDiff(before, after))
			}
		})
	}
}

// firstLineDiff describes the first line where a and b differ.
func firstLineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  before %.300q\n  after  %.300q", i+1, x, y)
		}
	}
	return "no difference"
}

// TestDamagedEventChunkIsKeptAndReported: a damaged event-log chunk is
// never deleted by the next command (which then started a new history that
// --verify called intact): the bytes are kept, the log continues with the
// break recorded, and --verify keeps reporting it.
func TestDamagedEventChunkIsKeptAndReported(t *testing.T) {
	dir := t.TempDir()
	store := "dir:" + dir
	for i := range 3 {
		mustRun(t, "note\n", "put", "--store", store, fmt.Sprintf("memory/n%d.md", i))
	}
	chunks, _ := filepath.Glob(filepath.Join(dir, ".memfs-sys", "events", "*"))
	if len(chunks) == 0 {
		t.Fatal("no event chunk")
	}
	last := chunks[len(chunks)-1]
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Repeat([]byte{0xA5}, len(b))
	if err := os.WriteFile(last, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "after\n", "put", "--store", store, "memory/after.md")
	found := false
	filepath.Walk(filepath.Join(dir, ".memfs-sys"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if c, _ := os.ReadFile(p); bytes.Equal(c, damaged) {
				found = true
			}
		}
		return nil
	})
	if !found {
		t.Fatal("the damaged chunk's bytes are nowhere in the store any more")
	}
	for range 2 { // and again after another command
		_, errOut, err := run(t, "", "log", "--store", store, "--verify")
		if err == nil || !strings.Contains(errOut, "damage:") {
			t.Fatalf("memfs log --verify after damage: %v, %q; want a failure reporting the damage", err, errOut)
		}
		mustRun(t, "more\n", "put", "--store", store, "memory/more.md")
	}
	if out := mustRun(t, "", "log", "--store", store, "--op", "break"); !strings.Contains(out, "break") {
		t.Errorf("memfs log --op break: %q, want the recorded break", out)
	}
}

// TestDamagedSearchShardIsRebuilt: the search index is derived from the
// values; a damaged shard is rebuilt from them (with a log line), and a
// search still finds what the store holds. Nothing of the values is lost.
func TestDamagedSearchShardIsRebuilt(t *testing.T) {
	t.Parallel()
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			mustRun(t, "the quick brown fox\n", "put", "--store", store, "memory/fox.md")
			mustRun(t, "a lazy dog sleeps\n", "put", "--store", store, "memory/dog.md")
			if out := mustRun(t, "", "search", "--store", store, "fox"); !strings.Contains(out, "memory/fox.md") {
				t.Fatalf("search before the damage: %q", out)
			}
			// A search writes nothing: the index is saved by a writer.
			mustRun(t, "", "reindex", "--store", store)
			if name == "dir" {
				shards, _ := filepath.Glob(filepath.Join(store[len("dir:"):], ".memfs-sys", "search", "shard-*"))
				if len(shards) == 0 {
					t.Fatal("no search shard")
				}
				for _, s := range shards {
					b, _ := os.ReadFile(s)
					for i := len(b) / 3; i < len(b); i += 7 {
						b[i] ^= 0x5A
					}
					if err := os.WriteFile(s, b, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				// badger keeps shards inside its database: damage them
				// through the store's own system records.
				mustRun(t, "", "ls", "--store", store) // the store is closed again
				damageBadgerShards(t, store[len("badger:"):])
			}
			for _, q := range []string{"fox", "dog"} {
				out, errOut, err := run(t, "", "search", "--store", store, q)
				if err != nil || !strings.Contains(out, "memory/"+q+".md") {
					t.Fatalf("search %q after the damage: %v, %q, %q", q, err, out, errOut)
				}
			}
			if got := mustRun(t, "", "cat", "--store", store, "memory/fox.md"); got != "the quick brown fox\n" {
				t.Fatalf("the value after the damage: %q", got)
			}
		})
	}
}

// damageBadgerShards flips bytes in every search shard of the badger store
// in dir, through the store's system records.
func damageBadgerShards(t *testing.T, dir string) {
	t.Helper()
	st, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.ListSys(t.Context(), search.RecordPrefix)
	if err != nil || len(recs) == 0 {
		t.Fatalf("search shards in badger: %d, %v", len(recs), err)
	}
	for _, r := range recs {
		b, err := st.LoadSys(t.Context(), r.Key)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(b) / 3; i < len(b); i += 7 {
			b[i] ^= 0x5A
		}
		if err := st.SaveSys(t.Context(), r.Key, b); err != nil {
			t.Fatal(err)
		}
	}
}
