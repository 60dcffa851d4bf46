package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/journal"
)

// storeSnapshot describes every node under dir, dir included: its path,
// type and permission bits, size, and the SHA-256 of a file's bytes (of
// its data regions at their offsets: holes read as zeros; see forData) or
// a symlink's target. Times are left out: badger's read-only open reads
// its files, and reading may set an atime.
func storeSnapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		line := fmt.Sprintf("%s %v %d", rel, fi.Mode(), fi.Size())
		switch {
		case fi.Mode().IsRegular():
			h := sha256.New()
			err := forData(p, func(off int64, b []byte) error {
				fmt.Fprintf(h, "%d:", off)
				h.Write(b)
				return nil
			})
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", h.Sum(nil))
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += " -> " + target
		case fi.IsDir():
			ents, err := os.ReadDir(p)
			if err != nil {
				return err
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			line += " [" + strings.Join(names, " ") + "]"
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// readCommands are every command that only reads a store, as
// (name, arguments before --store's value is added) pairs; export writes
// outside the store only.
func readCommands(t *testing.T) [][]string {
	out := t.TempDir()
	return [][]string{
		{"ls"},
		{"ls", "-l"},
		{"ls", "-l", "memory/"},
		{"cat", "memory/a.md"},
		{"cat", "memory/big.md"},
		{"cat", "memory/pending.md"},
		{"log"},
		{"log", "--json"},
		{"log", "--verify"},
		{"search", "fox"},
		{"search", "--json", "lazy dog"},
		{"context"},
		{"context", "--manifest"},
		{"context", "--query", "fox"},
		{"context", "--at", "1"},
		{"export", filepath.Join(out, "export")},
		{"export", "--prefix", "memory/", filepath.Join(out, "export-memory")},
		{"fsck"},
		{"history", "memory/a.md"},
		{"diff", "memory/a.md"},
		{"runs"},
	}
}

// TestReadCommandsNeverWrite runs every command that only reads on a
// store of each kind, healthy and damaged, and checks that the store's
// directory is byte for byte what it was: the same names, modes, sizes and
// contents (a read once truncated a damaged badger value log to 20 bytes,
// and wrote its lock's PID, the journal, the search index). A read may
// fail on the damage; it may not repair it.
func TestReadCommandsNeverWrite(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"badger", "dir"} {
		// The four notes are put once per kind, into a seed store that
		// each state's store starts as a copy of (the puts were a fifth of
		// this test's time).
		seed := t.TempDir()
		seedStore := kind + ":" + seed
		mustRun(t, "the quick brown fox\n", "put", "--store", seedStore, "memory/a.md")
		mustRun(t, "a lazy dog sleeps\n", "put", "--store", seedStore, "memory/b.md")
		mustRun(t, "how to fox a dog\n", "put", "--store", seedStore, "skills/fox/SKILL.md")
		// Larger than badger's value threshold: it goes to the value log.
		big := bytes.Repeat([]byte("a line of a long note that goes to the value log\n"), 5400)
		mustRun(t, string(big), "put", "--store", seedStore, "memory/big.md")
		for _, state := range []string{"healthy", "unflushed journal", "damaged", "flipped"} {
			if state == "flipped" && kind != "badger" {
				continue // a dir store's values are plain files: "damaged" cuts one
			}
			t.Run(kind+"/"+state, func(t *testing.T) {
				dir := t.TempDir()
				if out, err := exec.Command("cp", "-a", seed+"/.", dir).CombinedOutput(); err != nil {
					t.Fatalf("copy the seed store: %v: %s", err, out)
				}
				store := kind + ":" + dir
				spec, err := parseStore(store)
				if err != nil {
					t.Fatal(err)
				}
				jpath := spec.JournalPath(memfs.DefaultStateDir(), "")
				switch state {
				case "unflushed journal":
					// What a memfs killed before its flush leaves.
					appendJournal(t, jpath, "memory/pending.md", "written before the crash\n")
				case "flipped":
					// Bytes of the value log flipped in place, its length kept.
					mustRun(t, "", "reindex", "--store", store)
					damageStore(t, kind, dir, true)
				case "damaged":
					// The search index saved, so that its damage is read.
					mustRun(t, "", "reindex", "--store", store)
					appendJournal(t, jpath, "memory/pending.md", "written before the crash\n")
					f, err := os.OpenFile(jpath, os.O_WRONLY|os.O_APPEND, 0)
					if err != nil {
						t.Fatal(err)
					}
					f.Write(bytes.Repeat([]byte{0xA5}, 100))
					f.Close()
					damageStore(t, kind, dir, false)
				}
				before := storeSnapshot(t, dir)
				for _, args := range readCommands(t) {
					full := append([]string{args[0], "--store", store}, args[1:]...)
					_, errOut, err := run(t, "", full...)
					missing := (state == "healthy" || state == "flipped") && slices.Contains(args, "memory/pending.md")
					if (state == "healthy" || state == "unflushed journal") && !missing && err != nil {
						t.Errorf("memfs %s: %v\n%s", strings.Join(full, " "), err, errOut)
					}
					if after := storeSnapshot(t, dir); after != before {
						t.Fatalf("memfs %s changed the store: %s\nstderr: %s", strings.Join(full, " "), firstLineDiff(before, after), errOut)
					}
				}
				if state == "unflushed journal" {
					if got := mustRun(t, "", "cat", "--store", store, "memory/pending.md"); got != "written before the crash\n" {
						t.Errorf("a read of what the journal holds: %q", got)
					}
				}
			})
		}
	}
}

// appendJournal appends to the journal at path a record that writes value
// to key, as a memfs killed before its flush leaves it.
func appendJournal(t *testing.T, path, key, value string) {
	t.Helper()
	j, _, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	err = j.Append(journal.Record{Gen: 1, Entries: []backend.Entry{{Key: key, Value: []byte(value),
		Info: backend.Info{Size: int64(len(value)), Mode: 0o644, MTime: time.Now()}}}})
	if err != nil {
		t.Fatal(err)
	}
}

// damageStore damages the store of kind at dir where a read finds it: for
// badger, the value log that holds memory/big.md loses its tail, or with
// flip has bytes flipped in place; for a dir store, the newest event chunk
// and the search index's shards get flipped bytes, and a value file is cut
// short.
func damageStore(t *testing.T, kind, dir string, flipped bool) {
	t.Helper()
	flip := func(p string) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(b) / 3; i < len(b); i += 7 {
			b[i] ^= 0x5A
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if kind == "badger" {
		vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
		var newest string
		var size int64
		for _, v := range vlogs {
			fi, err := os.Stat(v)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() > size {
				newest, size = v, fi.Size()
			}
		}
		if size < 200_000 {
			t.Fatalf("no value log holds memory/big.md: %v", vlogs)
		}
		if flipped {
			flip(newest)
			return
		}
		if err := os.Truncate(newest, 100_000); err != nil {
			t.Fatal(err)
		}
		return
	}
	chunks, _ := filepath.Glob(filepath.Join(dir, ".memfs-sys", "events", "*"))
	if len(chunks) == 0 {
		t.Fatal("no event chunk")
	}
	flip(chunks[len(chunks)-1])
	shards, _ := filepath.Glob(filepath.Join(dir, ".memfs-sys", "search", "shard-*"))
	if len(shards) == 0 {
		t.Fatal("no search shard")
	}
	for _, s := range shards {
		flip(s)
	}
	if err := os.Truncate(filepath.Join(dir, "memory", "big.md"), 1000); err != nil {
		t.Fatal(err)
	}
}

// TestReadCommandsCreateNothingInAPlainDirectory: a read command on a
// directory memfs never used (dir:PATH of a user's notes) leaves it as it
// was: no journal, no marker, no lock, no system records.
func TestReadCommandsCreateNothingInAPlainDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, data := range map[string]string{"notes.md": "the quick brown fox\n", "memory/a.md": "a lazy dog\n", "sub/deep/c.txt": "c\n"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := storeSnapshot(t, dir)
	store := "dir:" + dir
	if out := mustRun(t, "", "ls", "--store", store); !strings.Contains(out, "notes.md") {
		t.Errorf("memfs ls of a plain directory: %q, want its files", out)
	}
	if after := storeSnapshot(t, dir); after != before {
		t.Fatalf("memfs ls changed the directory: %s", firstLineDiff(before, after))
	}
	for _, args := range readCommands(t) {
		full := append([]string{args[0], "--store", store}, args[1:]...)
		_, errOut, _ := run(t, "", full...)
		if after := storeSnapshot(t, dir); after != before {
			t.Fatalf("memfs %s changed the directory: %s\nstderr: %s", strings.Join(full, " "), firstLineDiff(before, after), errOut)
		}
	}
}

// TestReadCommandsOnACrashedBadgerStore: a badger store left by a
// process that did not close it has a memtable log with an unfinished
// tail, which only a writable open cuts, and read-only badger refuses to
// open. A command that only reads shows what it holds all the same, and
// changes nothing in it (it reads through a scratch view, which it
// removes).
func TestReadCommandsOnACrashedBadgerStore(t *testing.T) {
	t.Parallel()
	live := t.TempDir()
	st, err := badgerstore.Open(live, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Save(t.Context(), backend.Entry{Key: "memory/a.md", Value: []byte("kept\n"),
		Info: backend.Info{Size: 5, Mode: 0o644, MTime: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	// The directory as a kill -9 leaves it: copied while badger has it
	// open, its memtable log unfinished.
	crashed := t.TempDir()
	ents, err := os.ReadDir(live)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		copySparseFile(t, filepath.Join(crashed, e.Name()), filepath.Join(live, e.Name()))
	}
	st.Close()
	if mems, _ := filepath.Glob(filepath.Join(crashed, "*.mem")); len(mems) == 0 {
		t.Fatal("the copy has no memtable log")
	}
	before := storeSnapshot(t, crashed)
	store := "badger:" + crashed
	tmp := t.TempDir()
	for _, args := range [][]string{{"ls"}, {"cat", "memory/a.md"}, {"search", "kept"}, {"log", "--verify"}} {
		full := append([]string{args[0], "--store", store}, args[1:]...)
		// In a process of its own, with a TMPDIR of its own: the
		// scratch view must be gone after it.
		cmd := exec.Command(os.Args[0], full...)
		cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1", "TMPDIR="+tmp)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("memfs %s on a crashed store: %v\n%s", strings.Join(full, " "), err, stderr.String())
		}
		if args[0] != "log" && !strings.Contains(stdout.String(), "kept") && !strings.Contains(stdout.String(), "memory/a.md") {
			t.Errorf("memfs %s: %q, want what the store holds", strings.Join(full, " "), stdout.String())
		}
		if after := storeSnapshot(t, crashed); after != before {
			t.Fatalf("memfs %s changed the store: %s", strings.Join(full, " "), firstLineDiff(before, after))
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Fatalf("memfs %s left %d scratch files in TMPDIR (%s, ...)", strings.Join(full, " "), len(left), left[0].Name())
		}
	}
	mustRun(t, "more\n", "put", "--store", store, "memory/b.md")
	if got := mustRun(t, "", "cat", "--store", store, "memory/a.md"); got != "kept\n" {
		t.Errorf("after a writable open: %q", got)
	}
}

// TestReadCommandsMakeNoBadgerStore: a read command given an empty
// directory as a badger store fails, saying there is no store, and makes
// none there.
func TestReadCommandsMakeNoBadgerStore(t *testing.T) {
	dir := t.TempDir()
	_, errOut, err := run(t, "", "ls", "--store", "badger:"+dir)
	if err == nil || !strings.Contains(err.Error()+errOut, "no store") {
		t.Errorf("memfs ls of an empty directory as a badger store: %v, %s; want an error saying there is no store", err, errOut)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("memfs ls made %d files in the empty directory (%s, ...)", len(ents), ents[0].Name())
	}
}

// TestEveryCommandIsClassified: each command either reads a store (and is
// in readCommands, so TestReadCommandsNeverWrite runs it), writes one, or
// uses none. A new command must be put in one of the lists, so that a
// new read command is checked for writing nothing.
func TestEveryCommandIsClassified(t *testing.T) {
	read := map[string]bool{}
	for _, args := range readCommands(t) {
		read[args[0]] = true
	}
	writes := map[string]bool{"mount": true, "put": true, "rm": true, "import": true, "reindex": true, "summary": true, "gc": true,
		"__apply": true, "mount-helper": true, "snapshot": true, "checkpoint": true, "revert": true, "restore": true, "mcp": true, "conflicts": true}
	noStore := map[string]bool{"unmount": true, "repo": true, "umount-helper": true, "redact": true, "install": true, "completion": true,
		"man": true, "hint": true, "models": true, "help": true}
	for _, cmd := range newApp(io.Discard, io.Discard).Commands {
		n := 0
		for _, m := range []map[string]bool{read, writes, noStore} {
			if m[cmd.Name] {
				n++
			}
		}
		if n != 1 {
			t.Errorf("command %q is in %d of the lists (read, write, no store), want 1", cmd.Name, n)
		}
	}
}
