package memfs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/session"
)

// countingBadger is a badger store that counts the calls that write (each
// one synced write: badger commits with SyncWrites) and those that read,
// by method. Embedding keeps every capability of the store.
type countingBadger struct {
	*badgerstore.Store
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingBadger) count(m string) {
	c.mu.Lock()
	c.calls[m]++
	c.mu.Unlock()
}

// snapshot returns the counts so far.
func (c *countingBadger) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		out[k] = v
	}
	return out
}

func (c *countingBadger) Apply(ctx context.Context, b backend.Batch) (map[string]string, error) {
	c.count("Apply")
	return c.Store.Apply(ctx, b)
}

func (c *countingBadger) Save(ctx context.Context, es ...backend.Entry) error {
	c.count("Save")
	return c.Store.Save(ctx, es...)
}

func (c *countingBadger) SaveIf(ctx context.Context, es []backend.Entry, expect []backend.Version) (map[string]string, error) {
	c.count("SaveIf")
	return c.Store.SaveIf(ctx, es, expect)
}

func (c *countingBadger) Delete(ctx context.Context, keys ...string) error {
	c.count("Delete")
	return c.Store.Delete(ctx, keys...)
}

func (c *countingBadger) SaveSys(ctx context.Context, name string, data []byte) error {
	c.count("SaveSys")
	return c.Store.SaveSys(ctx, name, data)
}

func (c *countingBadger) DeleteSys(ctx context.Context, names ...string) error {
	c.count("DeleteSys")
	return c.Store.DeleteSys(ctx, names...)
}

func (c *countingBadger) SwapSys(ctx context.Context, guard string, old []byte, puts map[string][]byte, dels []string) (bool, error) {
	c.count("SwapSys")
	return c.Store.SwapSys(ctx, guard, old, puts, dels)
}

func (c *countingBadger) LoadSys(ctx context.Context, name string) ([]byte, error) {
	c.count("LoadSys")
	return c.Store.LoadSys(ctx, name)
}

func (c *countingBadger) ListSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	c.count("ListSys")
	return c.Store.ListSys(ctx, prefix)
}

func (c *countingBadger) ScanSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	c.count("ScanSys")
	return c.Store.ScanSys(ctx, prefix)
}

var writeCalls = []string{"Apply", "Save", "SaveIf", "Delete", "SaveSys", "DeleteSys", "SwapSys"}

func sub(after, before map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func writes(c map[string]int) int {
	n := 0
	for _, m := range writeCalls {
		n += c[m]
	}
	return n
}

// A snapshot taken through the mount (mkdir .memfs/snapshots/NAME) with
// nothing pending costs the store one write, the snapshot's record
// (SwapSys: one synced badger commit), and a few reads; never a flush's
// writes nor a wait for background work. With a file pending, the flush's
// writes come first. A count stands for the time (BENCHMARKS.md, "History:
// where a snapshot mkdir waits").
func TestMountSnapshotStoreCalls(t *testing.T) {
	needFUSE(t)
	store, mnt := t.TempDir(), t.TempDir()
	st, err := badgerstore.Open(store, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := &countingBadger{Store: st, calls: map[string]int{}}
	f, err := memfs.Open(context.Background(), cs, memfs.Options{
		JournalPath: filepath.Join(store, badgerstore.JournalName),
		Namespace:   true,
		Session:     session.Options{DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())},
		RecoveryDir: filepath.Join(t.TempDir(), "recovery"),
	})
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, f, mnt, memfs.MountOptions{})
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	// notes/, not memory/: packhist archives the pack sources (memory/)
	// after a flush, on its own goroutine, and its writes would be
	// counted with the mkdir's.
	if err := os.Mkdir(p("notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := os.WriteFile(p(fmt.Sprintf("notes/n%d.md", i)), []byte("a note\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p(".memfs/snapshots/warm"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Nothing pending: one write, and reads that do not grow with the
	// snapshots there are (the kernel's lookup of the new name before
	// the mkdir read every snapshot's record).
	mkdir := func(name string) map[string]int {
		before := cs.snapshot()
		if err := os.Mkdir(p(".memfs/snapshots/"+name), 0o755); err != nil {
			t.Fatal(err)
		}
		return sub(cs.snapshot(), before)
	}
	few := mkdir("s1")
	for i := range 50 {
		if _, err := f.CreateSnapshot(t.Context(), fmt.Sprintf("run/%d", i), "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.CreateSnapshot(t.Context(), fmt.Sprintf("plain%d", i), "test"); err != nil {
			t.Fatal(err)
		}
	}
	many := mkdir("s101")
	reads := func(c map[string]int) int { return c["LoadSys"] + c["ListSys"] + c["ScanSys"] }
	for _, got := range []map[string]int{few, many} {
		if w := writes(got); w != 1 || got["SwapSys"] != 1 {
			t.Errorf("mkdir of a snapshot with nothing pending: %d store writes %v, want 1 (the snapshot record's SwapSys)", w, got)
		}
	}
	if reads(many) != reads(few) || reads(many) > 6 {
		t.Errorf("mkdir of a snapshot with nothing pending: store reads %v beside 2 snapshots, %v beside 102: want the same few (at most 6)", few, many)
	}
	t.Logf("nothing pending: %v beside 2 snapshots, %v beside 102", few, many)
	// One file pending: the flush (one Apply of the entry), its event and
	// version records, then the snapshot's record.
	if err := os.WriteFile(p("notes/n0.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := mkdir("s2")
	if got["Apply"] != 1 || got["SwapSys"] < 1 {
		t.Errorf("mkdir of a snapshot with a file pending: %v, want its flush's Apply and the record's SwapSys", got)
	}
	t.Logf("one file pending: %v", got)
	s.stop(t)
	if err := f.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}
