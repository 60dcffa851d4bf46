package memfs_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/session"
)

// Files written through a mount past the memory budget all read back
// right: after their fsync (the clean values dropped under the budget
// load again) and after a remount; the session's values stay within the
// budget once flushed, plus the one value a reader holds open.
func TestMemoryBudgetThroughTheMount(t *testing.T) {
	needFUSE(t)
	const budget, size, n = 1 << 20, 256 << 10, 24 // 6 MiB through a 1 MiB budget
	store, mnt := t.TempDir(), t.TempDir()
	open := func() *memfs.FS {
		t.Helper()
		st, err := badgerstore.Open(store, badgerstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := memfs.Open(context.Background(), st, memfs.Options{
			JournalPath: filepath.Join(store, badgerstore.JournalName),
			Bootstrap:   []string{""}, // everything: more than the budget
			Session: session.Options{MaxMemory: budget, MaxFileSize: 1 << 20,
				DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())},
			RecoveryDir: filepath.Join(t.TempDir(), "recovery"),
		})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	value := func(i int) []byte {
		line := fmt.Sprintf("file %02d, line of text\n", i)
		return bytes.Repeat([]byte(line), size/len(line)+1)[:size]
	}
	name := func(i int) string { return filepath.Join(mnt, fmt.Sprintf("d%d/f%02d.txt", i%3, i)) }
	readBack := func(f *memfs.FS, when string) {
		t.Helper()
		for i := range n {
			b, err := os.ReadFile(name(i))
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if !bytes.Equal(b, value(i)) {
				t.Fatalf("%s: %s holds %d bytes that are not what was written", when, name(i), len(b))
			}
			if m := f.Session().Stats().Memory(); m.Held > budget+size {
				t.Fatalf("%s, after reading %s: %d bytes held, want at most the budget %d plus one value", when, name(i), m.Held, budget)
			}
		}
	}

	f := open()
	s := serve(t, f, mnt, memfs.MountOptions{})
	for d := range 3 {
		if err := os.Mkdir(filepath.Join(mnt, fmt.Sprintf("d%d", d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if err := os.WriteFile(name(i), value(i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	last, err := os.OpenFile(name(n-1), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := last.Sync(); err != nil { // flushes the session: every file
		t.Fatal(err)
	}
	last.Close()
	if m := f.Session().Stats().Memory(); m.Held > budget || m.Dirty != 0 {
		t.Errorf("after the fsync: %d bytes held (%d unflushed), want at most the budget %d", m.Held, m.Dirty, budget)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, ".memfs/status")); err != nil || !bytes.Contains(b, []byte("budget 1 MiB")) {
		t.Errorf(".memfs/status = %q, %v; want the memory budget in it", b, err)
	}
	readBack(f, "after the fsync")
	if m := f.Session().Stats().Memory(); m.Dropped == 0 {
		t.Errorf("%d bytes read through a budget of %d and no value dropped", n*size, budget)
	}
	s.stop(t)
	if err := f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	f = open()
	if m := f.Session().Stats().Memory(); m.Held > budget {
		t.Errorf("after a bootstrap that loads everything: %d bytes held, over the budget of %d", m.Held, budget)
	}
	s = serve(t, f, mnt, memfs.MountOptions{})
	readBack(f, "after a remount")
	s.stop(t)
	if err := f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestParseMaxMemory(t *testing.T) {
	for v, want := range map[string]int64{"16MiB": 16 << 20, "2GiB": 2 << 30, "536870912": 512 << 20} {
		if got, err := memfs.ParseMaxMemory(v); err != nil || got != want {
			t.Errorf("ParseMaxMemory(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
	if got, err := memfs.ParseMaxMemory("auto"); err != nil || got < 256<<20 {
		t.Errorf("ParseMaxMemory(auto) = %d, %v; want at least 256 MiB", got, err)
	}
	for _, v := range []string{"0", "1MiB", "16777215", "lots", "-1GiB"} {
		if _, err := memfs.ParseMaxMemory(v); err == nil || !strings.Contains(err.Error(), "want auto or a size") {
			t.Errorf("ParseMaxMemory(%q): %v, want a refusal", v, err)
		}
	}
}
