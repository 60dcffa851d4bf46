package main

// A benchmark tool run as a test (only the CLI and its tests may pick a
// backend): it builds a badger store for the history benchmarks
// (BENCHMARKS.md, "History: snapshot create and mount at 100,000 keys"):
// MEMFS_HISTBENCH_KEYS notes of ~200 bytes under notes/ (not memory/:
// packhist archives the pack sources at each close, 100,000 of them for
// minutes), each written MEMFS_HISTBENCH_VERSIONS times (a flush after
// each round over all keys, 10,000 keys a flush), so that the store holds
// the same final namespace with a history of 1 or more versions per key:
//
//	MEMFS_HISTBENCH_DIR=/tmp/s5 MEMFS_HISTBENCH_VERSIONS=5 go test -run TestBuildHistoryBenchStore -timeout 1h ./cmd/memfs/
//
// With MEMFS_HISTBENCH_SNAPSHOTS=N it builds nothing: it opens the store
// and times N snapshots taken through the engine (memfs.FS.CreateSnapshot,
// nothing pending), with a CPU profile to MEMFS_HISTBENCH_CPUPROFILE.

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/session"
)

func TestBuildHistoryBenchStore(t *testing.T) {
	dir := os.Getenv("MEMFS_HISTBENCH_DIR")
	if dir == "" {
		t.Skip("a benchmark tool, not a test: MEMFS_HISTBENCH_DIR=DIR builds (or times) a store (scripts/bench-history.sh)")
	}
	env := func(name string, def int) *int {
		n, err := strconv.Atoi(cmp.Or(os.Getenv(name), strconv.Itoa(def)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return &n
	}
	keys, versions, snapshots := env("MEMFS_HISTBENCH_KEYS", 100_000), env("MEMFS_HISTBENCH_VERSIONS", 1), env("MEMFS_HISTBENCH_SNAPSHOTS", 0)
	cpuprofile := os.Getenv("MEMFS_HISTBENCH_CPUPROFILE")
	ctx := context.Background()
	st, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := memfs.Open(ctx, st, memfs.Options{JournalPath: filepath.Join(dir, badgerstore.JournalName),
		Session: session.Options{DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())}})
	if err != nil {
		t.Fatal(err)
	}
	if *snapshots > 0 {
		timeSnapshots(t, ctx, f, *snapshots, cpuprofile)
		return
	}
	start := time.Now()
	for v := *versions - 1; v >= 0; v-- {
		for i := range *keys {
			text := fmt.Sprintf("note %d, version %d from the end: some words a note holds about a project, "+
				"a decision, a convention, a name; enough of them to make the note about two hundred bytes long.\n", i, v)
			if err := f.Session().Set(fmt.Sprintf("notes/d%03d/n%06d.md", i%1000, i), []byte(text)); err != nil {
				t.Fatal(err)
			}
			if (i+1)%10_000 == 0 {
				if err := f.Flush(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := f.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(os.Stderr, "round %d done, %s\n", *versions-v, time.Since(start).Round(time.Second))
	}
	if err := f.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// timeSnapshots takes n snapshots and prints the time of each.
func timeSnapshots(t *testing.T, ctx context.Context, f *memfs.FS, n int, profile string) {
	if profile != "" {
		out, err := os.Create(profile)
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	base := time.Now().UnixNano()
	for i := range n {
		t0 := time.Now()
		if _, err := f.CreateSnapshot(ctx, fmt.Sprintf("bench-%d-%d", base, i), "histstore/1"); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("snapshot %d: %.1f ms\n", i, float64(time.Since(t0).Microseconds())/1000)
	}
	for i := range n {
		if err := f.RemoveSnapshot(ctx, fmt.Sprintf("bench-%d-%d", base, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
