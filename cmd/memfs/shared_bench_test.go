package main

import (
	"fmt"
	"github.com/memfs/memfs/internal/await"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// TestSharedVisibilityLatency measures how long a write on one mount of an
// etcd store takes to show on another mount of the same namespace, on one
// machine: from the start of a write + fsync on A (memory/lat/fI.md, 10
// keys, each rewritten; the first 10 writes create them) until
// os.ReadFile on B returns the new content, polling every 2 ms. It
// reports p50, p99 and max over 100 writes, and the write + fsync alone
// (BENCHMARKS.md, "Shared memory on etcd"). Opt-in: a measurement, not a
// check; run it with
//
//	MEMFS_BENCH_LATENCY=1 go test -run TestSharedVisibilityLatency -v ./cmd/memfs
func TestSharedVisibilityLatency(t *testing.T) {
	if os.Getenv("MEMFS_BENCH_LATENCY") != "1" {
		t.Skip("a measurement: set MEMFS_BENCH_LATENCY=1 to run it")
	}
	const writes, keys, every = 100, 10, 2 * time.Millisecond
	a, b := twoMounts(t, sharedEtcdStore(t), sharedEnv(t))
	for _, m := range []string{a.mnt, b.mnt} {
		if err := os.MkdirAll(filepath.Join(m, "memory", "lat"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var lat, wr []time.Duration
	for i := range writes {
		key := filepath.Join("memory", "lat", fmt.Sprintf("f%d.md", i%keys))
		want := fmt.Sprintf("version %d, written on A\n", i)
		start := time.Now()
		if err := writeSync(filepath.Join(a.mnt, key), []byte(want)); err != nil {
			t.Fatalf("write %d on A: %v\nA:\n%s", i, err, a.log)
		}
		wr = append(wr, time.Since(start))
		visible := await.Cond(time.Until(start.Add(10*time.Second)), every, func() bool {
			got, err := os.ReadFile(filepath.Join(b.mnt, key))
			return err == nil && string(got) == want
		})
		if !visible {
			t.Fatalf("write %d (%s) not visible on B after 10 s\nA:\n%s\nB:\n%s", i, key, a.log, b.log)
		}
		lat = append(lat, time.Since(start))
	}
	pct := func(d []time.Duration) (p50, p99, max time.Duration) {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2], d[len(d)*99/100], d[len(d)-1]
	}
	p50, p99, max := pct(lat)
	w50, w99, wmax := pct(wr)
	t.Logf("write + fsync on A until B reads it: p50 %v, p99 %v, max %v (%d writes, %d keys, polling every %v)", p50, p99, max, writes, keys, every)
	t.Logf("write + fsync on A alone: p50 %v, p99 %v, max %v", w50, w99, wmax)
	if p99 > 300*time.Millisecond {
		t.Errorf("p99 %v: over the 300 ms target", p99)
	}
}
