package fsnode_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/session"
)

// BenchmarkHistoryView: ls -l (a listing and a stat of each entry) of
// .memfs/history/KEY/ for a key with 1,000 versions, and a cat of one,
// cold (a fresh mount: the kernel has nothing cached) and warm, over a
// dir store. Issue 29's targets: cold at most 50 ms, warm no request.
// (BENCHMARKS.md, "History: the view".)
func BenchmarkHistoryView(b *testing.B) {
	for _, kind := range []string{"dir", "badger"} {
		b.Run(kind, func(b *testing.B) {
			var st backend.SysStore
			var err error
			if kind == "dir" {
				st, err = dirstore.Open(b.TempDir())
			} else {
				st, err = badgerstore.Open(b.TempDir(), badgerstore.Options{})
			}
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			benchHistoryView(b, st)
		})
	}
}

func benchHistoryView(b *testing.B, st backend.SysStore) {
	h := newTestHistory(b, st)
	line := strings.Repeat("a line of a note, as agents write them\n", 25) // ~1 KiB
	var last uint64
	for i := range 1000 {
		last = h.record(history.OpWrite, file("memory/big.md", fmt.Sprintf("%d %s", i, line), 0o644, uint32(os.Getuid()), i))
	}
	if err := st.Save(b.Context(), file("memory/big.md", "now\n", 0o644, uint32(os.Getuid()), 1001)); err != nil {
		b.Fatal(err)
	}
	remount := func() string {
		dir := b.TempDir()
		c := session.NewContext(st, session.Options{DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())})
		if err := c.Bootstrap(b.Context(), "memory/"); err != nil {
			b.Fatal(err)
		}
		root := fsnode.NewRoot(c, fsnode.Options{History: h})
		srv, err := fsnode.Mount(dir, root, fsnode.MountOptions{})
		if err != nil {
			b.Fatalf("mount: %v", err)
		}
		b.Cleanup(func() {
			if err := srv.Unmount(); err != nil {
				b.Errorf("unmount %s: %v", dir, err)
			}
			srv.Wait()
			root.Close()
		})
		h.c = c
		return filepath.Join(dir, ".memfs/history/memory/big.md")
	}
	lsl := func(dir string) {
		ents, err := os.ReadDir(dir)
		if err != nil || len(ents) != 1001 {
			b.Fatalf("ls %s: %d entries, %v", dir, len(ents), err)
		}
		for _, e := range ents {
			if _, err := os.Lstat(filepath.Join(dir, e.Name())); err != nil {
				b.Fatal(err)
			}
		}
	}
	cat := func(dir string) {
		if _, err := os.ReadFile(filepath.Join(dir, ver(last))); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		cold bool
		fn   func(string)
	}{{"ls-cold", true, lsl}, {"ls-warm", false, lsl}, {"cat-cold", true, cat}, {"cat-warm", false, cat}} {
		b.Run(c.name, func(b *testing.B) {
			dir := remount()
			c.fn(dir)
			for b.Loop() {
				if c.cold {
					b.StopTimer()
					dir = remount()
					b.StartTimer()
				}
				c.fn(dir)
			}
		})
	}
}
