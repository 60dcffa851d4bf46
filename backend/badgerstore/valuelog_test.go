package badgerstore

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
)

// damagedStore saves small values (kept in the LSM tree) and three large
// ones (in the value log, one transaction each) into a store in a new
// directory, closes it, and returns the directory, the path of the value
// log that holds the large values (the newest), its bytes, and the large
// values by key.
func damagedStore(t *testing.T) (dir, vlog string, data []byte, big map[string][]byte) {
	t.Helper()
	dir = t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"memory/a.md", "memory/b.md"} {
		if err := s.Save(t.Context(), entry(k, []byte("small "+k+"\n"))); err != nil {
			t.Fatal(err)
		}
	}
	big = map[string][]byte{}
	for i, k := range []string{"memory/big1.md", "memory/big2.md", "memory/big3.md"} {
		big[k] = randomBytes(100<<10, uint64(100+i))
		if err := s.Save(t.Context(), entry(k, big[k])); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	vlog = newestVlogPath(t, dir)
	data, err = os.ReadFile(vlog)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range big {
		if !bytes.Contains(data, v) {
			t.Fatalf("the newest value log %s does not hold %s", vlog, k)
		}
	}
	return dir, vlog, data, big
}

func newestVlogPath(t *testing.T, dir string) string {
	t.Helper()
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if len(vlogs) == 0 {
		t.Fatal("no value log")
	}
	return vlogs[len(vlogs)-1] // fixed-width numbers
}

// flipIn flips every 7th byte of the middle third of value where it lies
// in data, in place.
func flipIn(t *testing.T, data, value []byte) {
	t.Helper()
	at := bytes.Index(data, value)
	if at < 0 {
		t.Fatal("value not in the file")
	}
	for i := at + len(value)/3; i < at+2*len(value)/3; i += 7 {
		data[i] ^= 0x5A
	}
}

// TestFlippedValueBytesAreDamage: bytes flipped in the value log, its
// length kept, made a read hand out wrong bytes with no error (badger's
// value checksums were not checked). The read fails with
// backend.ErrCorrupt, naming the key, and every other value reads.
func TestFlippedValueBytesAreDamage(t *testing.T) {
	dir, vlog, data, big := damagedStore(t)
	flipIn(t, data, big["memory/big2.md"])
	if err := os.WriteFile(vlog, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// Read-only: a writable open keeps the damage aside (below).
	s := openT(t, dir, Options{ReadOnly: true})
	_, err := s.Load(t.Context(), "memory/big2.md")
	if !errors.Is(err, backend.ErrCorrupt) || !strings.Contains(err.Error(), "memory/big2.md") {
		t.Fatalf("Load of a value with flipped bytes: %v, want an error naming the key and wrapping backend.ErrCorrupt", err)
	}
	for _, k := range []string{"memory/a.md", "memory/b.md", "memory/big1.md", "memory/big3.md"} {
		es, err := s.Load(t.Context(), k)
		if err != nil {
			t.Fatalf("Load(%s), an undamaged value: %v", k, err)
		}
		if want, ok := big[k]; ok && !bytes.Equal(es[0].Value, want) {
			t.Errorf("Load(%s): %d bytes, not the saved ones", k, len(es[0].Value))
		}
	}
}

// TestWritableOpenKeepsDamagedValueLog: badger's writable open cut the
// newest value log at its first damaged entry (and every intact value
// after it with it). The damaged file is copied, byte for byte, under
// damaged/ in the store, a log line says where, the file itself is left
// as it is (badger appends to a new one), and every undamaged value still
// reads, after the open and after the next one.
func TestWritableOpenKeepsDamagedValueLog(t *testing.T) {
	for _, tc := range []struct {
		name    string
		damage  func(t *testing.T, data []byte, big map[string][]byte) []byte
		damaged string // the one key whose value is lost
	}{
		{"truncated", func(t *testing.T, data []byte, big map[string][]byte) []byte {
			return data[:bytes.Index(data, big["memory/big3.md"])+5000]
		}, "memory/big3.md"},
		{"flipped", func(t *testing.T, data []byte, big map[string][]byte) []byte {
			flipIn(t, data, big["memory/big2.md"])
			return data
		}, "memory/big2.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, vlog, data, big := damagedStore(t)
			damaged := tc.damage(t, data, big)
			if err := os.WriteFile(vlog, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			var logBuf bytes.Buffer
			s, err := Open(dir, Options{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
			if err != nil {
				t.Fatal(err)
			}
			kept, _ := filepath.Glob(filepath.Join(dir, DamagedDir, "*", filepath.Base(vlog)))
			if len(kept) != 1 {
				t.Fatalf("copies of the damaged value log under %s: %v, want 1\nlog: %s", DamagedDir, kept, logBuf.String())
			}
			if got, err := os.ReadFile(kept[0]); err != nil || !bytes.Equal(got, damaged) {
				t.Fatalf("the copy %s: %d bytes (%v), want the %d damaged bytes as they were", kept[0], len(got), err, len(damaged))
			}
			if !strings.Contains(logBuf.String(), kept[0]) {
				t.Errorf("log: %q, want a line naming %s", logBuf.String(), kept[0])
			}
			check := func(s *Store) {
				t.Helper()
				for _, k := range []string{"memory/a.md", "memory/b.md", "memory/big1.md", "memory/big2.md", "memory/big3.md"} {
					es, err := s.Load(t.Context(), k)
					if k == tc.damaged {
						if !errors.Is(err, backend.ErrCorrupt) {
							t.Errorf("Load(%s), the damaged value: %v, want backend.ErrCorrupt", k, err)
						}
						continue
					}
					if err != nil {
						t.Errorf("Load(%s), an undamaged value: %v", k, err)
					} else if want, ok := big[k]; ok && !bytes.Equal(es[0].Value, want) {
						t.Errorf("Load(%s): %d bytes, not the saved ones", k, len(es[0].Value))
					}
				}
			}
			check(s)
			if err := s.Save(t.Context(), entry("memory/after.md", randomBytes(100<<10, 7))); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(vlog); err != nil || !bytes.Equal(got, damaged) {
				t.Errorf("the damaged value log in the store: %d bytes (%v), want it left as it was (%d bytes)", len(got), err, len(damaged))
			}
			logBuf.Reset()
			s = openT(t, dir, Options{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
			check(s)
			if _, err := s.Load(t.Context(), "memory/after.md"); err != nil {
				t.Errorf("a value saved after the damage: %v", err)
			}
			again, _ := filepath.Glob(filepath.Join(dir, DamagedDir, "*", "*"))
			if len(again) != 1 || again[0] != kept[0] {
				t.Errorf("after a clean reopen, %s holds %v, want only %s", DamagedDir, again, kept[0])
			}
		})
	}
}

// TestCrashedStoreKeepsDamagedMemtableLog: a crash (kill -9 of the
// holder) leaves memtable logs whose tail badger cuts, zeros only: nothing
// is kept aside for that. A memtable log with flipped bytes loses every
// entry after them when badger replays it: the log as it was is copied
// under damaged/ first, and a line names the copy.
func TestCrashedStoreKeepsDamagedMemtableLog(t *testing.T) {
	for _, flip := range []bool{false, true} {
		t.Run(map[bool]string{false: "crash", true: "flipped"}[flip], func(t *testing.T) {
			dir := t.TempDir()
			const n = 750
			cmd, _ := hold(t, dir, holdMemTableEnv+"="+strconv.Itoa(4<<20), holdFillEnv+"="+strconv.Itoa(n))
			cmd.Process.Kill()
			cmd.Wait()
			mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
			if len(mems) == 0 {
				t.Fatal("the killed holder left no memtable log: the test proves nothing")
			}
			mem := mems[len(mems)-1]
			data, err := os.ReadFile(mem)
			if err != nil {
				t.Fatal(err)
			}
			if flip {
				for i := 1 << 20; i < 1<<20+100; i++ {
					data[i] ^= 0x5A
				}
				if err := os.WriteFile(mem, data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var logBuf bytes.Buffer
			s := openT(t, dir, Options{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
			kept, _ := filepath.Glob(filepath.Join(dir, DamagedDir, "*", "*"))
			if !flip {
				if len(kept) != 0 {
					t.Fatalf("after a crash with no damage, %s holds %v, want nothing", DamagedDir, kept)
				}
				es, err := s.Load(t.Context(), "fill/00000", fmt.Sprintf("fill/%05d", n-1))
				if err != nil || len(es) != 2 {
					t.Fatalf("Load after a crash: %v", err)
				}
				return
			}
			if len(kept) != 1 || filepath.Base(kept[0]) != filepath.Base(mem) {
				t.Fatalf("%s holds %v, want a copy of %s\nlog: %s", DamagedDir, kept, mem, logBuf.String())
			}
			if got, err := os.ReadFile(kept[0]); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("the copy %s: %d bytes (%v), want the %d damaged bytes as they were", kept[0], len(got), err, len(data))
			}
			if !strings.Contains(logBuf.String(), kept[0]) {
				t.Errorf("log: %q, want a line naming %s", logBuf.String(), kept[0])
			}
			if _, err := s.Load(t.Context(), "fill/00000"); err != nil {
				t.Errorf("Load of a key before the damage: %v", err)
			}
		})
	}
}

// TestReadOnlyCrashedStoreWithDamagedValueLog: a read-only open of a store
// left unclosed reads it through a scratch view that badger repairs
// (scratch.go), which cut the view's newest value log at its damage, and
// with it every intact value after it. The view keeps it whole as a
// writable open does: only the damaged value fails.
func TestReadOnlyCrashedStoreWithDamagedValueLog(t *testing.T) {
	live := t.TempDir()
	s := openT(t, live, Options{})
	if err := s.Save(t.Context(), entry("memory/a.md", []byte("small\n"))); err != nil {
		t.Fatal(err)
	}
	big := map[string][]byte{}
	for i, k := range []string{"memory/big1.md", "memory/big2.md", "memory/big3.md"} {
		big[k] = randomBytes(100<<10, uint64(200+i))
		if err := s.Save(t.Context(), entry(k, big[k])); err != nil {
			t.Fatal(err)
		}
	}
	// The directory as a kill -9 leaves it: copied while badger has it
	// open, its memtable log unfinished.
	crashed := t.TempDir()
	ents, err := os.ReadDir(live)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if err := copySparse(filepath.Join(crashed, e.Name()), filepath.Join(live, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if mems, _ := filepath.Glob(filepath.Join(crashed, "*.mem")); len(mems) == 0 {
		t.Fatal("no memtable log: the copy is not of an unclosed store")
	}
	f, err := os.OpenFile(newestVlogPath(t, crashed), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 1<<20)
	n, _ := f.ReadAt(head, 0)
	head = head[:n]
	at := bytes.Index(head, big["memory/big2.md"])
	if at < 0 {
		t.Fatal("the newest value log does not hold memory/big2.md")
	}
	flipIn(t, head, big["memory/big2.md"])
	if _, err := f.WriteAt(head[at:at+len(big["memory/big2.md"])], int64(at)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := openT(t, crashed, Options{ReadOnly: true})
	if _, err := r.Load(t.Context(), "memory/big2.md"); !errors.Is(err, backend.ErrCorrupt) {
		t.Errorf("Load of the damaged value: %v, want backend.ErrCorrupt", err)
	}
	for _, k := range []string{"memory/a.md", "memory/big1.md", "memory/big3.md"} {
		es, err := r.Load(t.Context(), k)
		if err != nil {
			t.Errorf("Load(%s), an undamaged value: %v", k, err)
		} else if want, ok := big[k]; ok && !bytes.Equal(es[0].Value, want) {
			t.Errorf("Load(%s): not the saved bytes", k)
		}
	}
	if _, err := os.Stat(filepath.Join(crashed, DamagedDir)); err == nil {
		t.Error("a read-only open made a damaged/ directory in the store")
	}
}

// TestWritableOpenRefusesWhenDamageCannotBeKept: when the copy cannot be
// made (here damaged/ is a file), a writable Open fails, saying why, and
// badger never gets to cut the damaged value log.
func TestWritableOpenRefusesWhenDamageCannotBeKept(t *testing.T) {
	dir, vlog, data, big := damagedStore(t)
	damaged := data[:bytes.Index(data, big["memory/big3.md"])+5000]
	if err := os.WriteFile(vlog, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, DamagedDir), []byte("in the way\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(dir, Options{}); err == nil {
		s.Close()
		t.Fatal("Open with nowhere to keep the damage: nil error")
	} else if !strings.Contains(err.Error(), "cannot keep aside") {
		t.Errorf("Open: %v, want it to say that the damage could not be kept aside", err)
	}
	if got, err := os.ReadFile(vlog); err != nil || !bytes.Equal(got, damaged) {
		t.Fatalf("the damaged value log: %d bytes (%v), want it as it was (%d bytes)", len(got), err, len(damaged))
	}
}

// TestWritableOpenKeepsWhatTheManifestLoses: a MANIFEST cut short in its
// last change is cut there by badger's open, which then deletes every
// table the MANIFEST no longer names, with the keys only they held. The
// MANIFEST as it was and those tables are kept under damaged/ first, each
// named by a log line.
func TestWritableOpenKeepsWhatTheManifestLoses(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	es := make([]backend.Entry, 200)
	for i := range es {
		es[i] = entry(fmt.Sprintf("memory/n%03d.md", i), []byte("note\n"))
	}
	if err := s.Save(t.Context(), es...); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil { // flushes the memtable into a table
		t.Fatal(err)
	}
	ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no table: the test proves nothing")
	}
	tables := map[string][]byte{}
	for _, p := range ssts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tables[filepath.Base(p)] = b
	}
	manifest := filepath.Join(dir, "MANIFEST")
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	data = data[:len(data)-3]
	if err := os.WriteFile(manifest, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	r, err := Open(dir, Options{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	if err == nil {
		r.Close()
	}
	kept, _ := filepath.Glob(filepath.Join(dir, DamagedDir, "*", "MANIFEST"))
	if len(kept) != 1 {
		t.Fatalf("copies of the cut MANIFEST: %v, want 1 (Open: %v)\nlog: %s", kept, err, logBuf.String())
	}
	if got, _ := os.ReadFile(kept[0]); !bytes.Equal(got, data) {
		t.Errorf("the copy of the MANIFEST: %d bytes, want the %d it had", len(got), len(data))
	}
	gone := 0
	for name, want := range tables {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			continue // still named, still in the store
		}
		gone++
		copies, _ := filepath.Glob(filepath.Join(dir, DamagedDir, "*", name))
		if len(copies) != 1 {
			t.Errorf("table %s left the store and is not under %s", name, DamagedDir)
			continue
		}
		if got, _ := os.ReadFile(copies[0]); !bytes.Equal(got, want) {
			t.Errorf("the copy of %s differs", name)
		}
		if !strings.Contains(logBuf.String(), copies[0]) {
			t.Errorf("log: %q, want a line naming %s", logBuf.String(), copies[0])
		}
	}
	if !strings.Contains(logBuf.String(), kept[0]) {
		t.Errorf("log: %q, want a line naming %s", logBuf.String(), kept[0])
	}
	if gone == 0 {
		t.Error("badger's open deleted no table: the test proves less than it says")
	}
}
