// Command histstore builds a badger store for the history benchmarks
// (BENCHMARKS.md, "History: snapshot create and mount at 100,000 keys"):
// -keys notes of ~200 bytes under notes/ (not memory/: packhist archives the pack sources at each close, 100,000 of them for minutes), each written -versions
// times (a flush after each round over all keys, 10,000 keys a flush), so
// that the store holds the same final namespace with a history of 1 or
// more versions per key.
//
//	go run ./bench/histstore -dir /tmp/s5 -keys 100000 -versions 5
//
// With -snapshots N it builds nothing: it opens the store and times N
// snapshots taken through the engine (memfs.FS.CreateSnapshot, nothing
// pending), with a CPU profile to -cpuprofile.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/session"
)

func main() {
	dir := flag.String("dir", "", "the store's directory (made)")
	keys := flag.Int("keys", 100_000, "keys")
	versions := flag.Int("versions", 1, "versions per key; the last is the same whatever the count")
	snapshots := flag.Int("snapshots", 0, "time this many snapshots of the store instead of building it")
	cpuprofile := flag.String("cpuprofile", "", "with -snapshots: write a CPU profile here")
	flag.Parse()
	if *dir == "" {
		log.Fatal("histstore: -dir is required")
	}
	ctx := context.Background()
	st, err := badgerstore.Open(*dir, badgerstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	f, err := memfs.Open(ctx, st, memfs.Options{JournalPath: filepath.Join(*dir, badgerstore.JournalName),
		Session: session.Options{DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())}})
	if err != nil {
		log.Fatal(err)
	}
	if *snapshots > 0 {
		timeSnapshots(ctx, f, *snapshots, *cpuprofile)
		return
	}
	start := time.Now()
	for v := *versions - 1; v >= 0; v-- {
		for i := range *keys {
			text := fmt.Sprintf("note %d, version %d from the end: some words a note holds about a project, "+
				"a decision, a convention, a name; enough of them to make the note about two hundred bytes long.\n", i, v)
			if err := f.Session().Set(fmt.Sprintf("notes/d%03d/n%06d.md", i%1000, i), []byte(text)); err != nil {
				log.Fatal(err)
			}
			if (i+1)%10_000 == 0 {
				if err := f.Flush(ctx); err != nil {
					log.Fatal(err)
				}
			}
		}
		if err := f.Flush(ctx); err != nil {
			log.Fatal(err)
		}
		fmt.Fprintf(os.Stderr, "round %d done, %s\n", *versions-v, time.Since(start).Round(time.Second))
	}
	if err := f.Close(ctx); err != nil {
		log.Fatal(err)
	}
}

// timeSnapshots takes n snapshots and prints the time of each.
func timeSnapshots(ctx context.Context, f *memfs.FS, n int, profile string) {
	if profile != "" {
		out, err := os.Create(profile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	base := time.Now().UnixNano()
	for i := range n {
		t0 := time.Now()
		if _, err := f.CreateSnapshot(ctx, fmt.Sprintf("bench-%d-%d", base, i), "histstore/1"); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("snapshot %d: %.1f ms\n", i, float64(time.Since(t0).Microseconds())/1000)
	}
	for i := range n {
		if err := f.RemoveSnapshot(ctx, fmt.Sprintf("bench-%d-%d", base, i)); err != nil {
			log.Fatal(err)
		}
	}
	if err := f.Close(ctx); err != nil {
		log.Fatal(err)
	}
}
