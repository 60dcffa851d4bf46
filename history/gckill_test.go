package history_test

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/history"
)

// openLocal opens the local store of kind at dir.
func openLocal(tb testing.TB, kind, dir string) backend.SysStore {
	tb.Helper()
	var s backend.SysStore
	var err error
	if kind == "badger" {
		s, err = badgerstore.Open(dir, badgerstore.Options{})
	} else {
		s, err = dirstore.Open(dir)
	}
	if err != nil {
		tb.Fatalf("open %s store %s: %v", kind, dir, err)
	}
	return s
}

// TestCollectKilledHelper is the process TestCollectKill9 kills: it
// collects the store in a loop, each collection two hours after the last
// (so each sweeps), until killed.
func TestCollectKilledHelper(t *testing.T) {
	kind, dir := os.Getenv("MEMFS_GC_KIND"), os.Getenv("MEMFS_GC_DIR")
	if dir == "" {
		t.Skip("run by TestCollectKill9")
	}
	s := openLocal(t, kind, dir)
	h := history.New(s)
	at, _ := strconv.ParseInt(os.Getenv("MEMFS_GC_NOW"), 10, 64)
	now := time.Unix(0, at)
	os.Stdout.WriteString("collecting\n")
	for i := 0; ; i++ {
		o := history.CollectOptions{Retention: history.RetentionOptions{Default: history.Retention{All: time.Hour, Last: 2}},
			Now: func() time.Time { return now.Add(time.Duration(i) * 2 * time.Hour) }}
		if _, err := h.Collect(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("collected\n")
	}
}

// A collection killed (kill -9) at random points never removes what a
// version or a snapshot references: after each kill every version record
// left reads back byte for byte, and the versions snapshots pin are there.
func TestCollectKill9(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("MEMFS_GC_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (MEMFS_GC_SEED=%d to repeat)", seed, seed)
	r := rand.New(rand.NewPCG(seed, seed))
	for _, kind := range []string{"dir", "badger"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			now := time.Now()
			vals := map[history.Addr][]byte{}
			last := map[string][]byte{} // key -> its last chunked value
			var seq uint64
			pinned := map[string]uint64{} // snapshot name -> seq
			for round := range 4 {
				s := openLocal(t, kind, dir)
				h := history.New(s)
				seq = writeRound(t, h, r, seq, now.Add(-time.Duration(40-round)*24*time.Hour), vals, last)
				name := fmt.Sprintf("round%d", round)
				if err := h.Snapshot(t.Context(), name, seq-uint64(r.IntN(20)), "test/1"); err != nil {
					t.Fatal(err)
				}
				pinned[name] = seq
				before := snapshotsAt(t, h, vals)
				s.Close()
				killCollector(t, kind, dir, now, r.IntN(3), time.Duration(r.IntN(200))*time.Millisecond)
				s = openLocal(t, kind, dir)
				h = history.New(s)
				checkEveryVersion(t, h, vals)
				if after := snapshotsAt(t, h, vals); after != before {
					t.Errorf("round %d: the snapshots' namespaces changed by a killed collection:\nbefore %s\nafter  %s", round, before, after)
				}
				s.Close()
			}
		})
	}
}

// writeRound writes 200 versions of 20 keys, dated from t0 a minute
// apart, some chunked, some repeating an earlier value, some appending
// to the key's last chunked value (sharing all its chunks but the last,
// so that a thinned version and a kept one share chunks).
func writeRound(t *testing.T, h *history.Store, r *rand.Rand, seq uint64, t0 time.Time, vals map[history.Addr][]byte, last map[string][]byte) uint64 {
	t.Helper()
	for i := range 200 {
		key := fmt.Sprintf("memory/k%02d.md", r.IntN(20))
		v := fmt.Appendf(nil, "value %d of %s\n", r.IntN(300), key)
		switch n := r.IntN(8); {
		case n == 0:
			v = bytes.Repeat(v, 3000) // chunked
			last[key] = v
		case n < 3 && last[key] != nil:
			v = fmt.Appendf(bytes.Clone(last[key]), "appended %d\n", r.IntN(1000))
			last[key] = v
		}
		a, _, err := h.Put(t.Context(), v)
		if err != nil {
			t.Fatal(err)
		}
		vals[a] = v
		seq++
		at := t0.Add(time.Duration(i) * time.Minute)
		recs, err := h.PlanVersions([]history.Version{history.NewVersion(seq, history.OpWrite, &backend.Entry{Key: key, Value: v, Info: backend.Info{Mode: 0o644, CTime: at}}, a)})
		if err == nil {
			err = h.Write(t.Context(), recs)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return seq
}

// killCollector runs TestCollectKilledHelper on the store and kills it
// after it finished n collections and d more.
func killCollector(t *testing.T, kind, dir string, now time.Time, n int, d time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCollectKilledHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MEMFS_GC_KIND="+kind, "MEMFS_GC_DIR="+dir, fmt.Sprintf("MEMFS_GC_NOW=%d", now.UnixNano()))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for i := 0; i <= n; i++ {
		if !lines.Scan() {
			t.Fatalf("helper ended: %v", lines.Err())
		}
	}
	time.Sleep(d) // places the kill; nothing waits on it
	cmd.Process.Kill()
	cmd.Wait()
}

// checkEveryVersion reads back every version of every key written.
func checkEveryVersion(t *testing.T, h *history.Store, vals map[history.Addr][]byte) {
	t.Helper()
	n := 0
	for k := range 20 {
		key := fmt.Sprintf("memory/k%02d.md", k)
		vs, err := h.Versions(t.Context(), key)
		if err != nil {
			t.Fatalf("Versions %s: %v", key, err)
		}
		for _, v := range vs {
			got, err := h.Get(t.Context(), v.Addr)
			if err != nil || !bytes.Equal(got, vals[v.Addr]) {
				t.Errorf("version %d of %s: %d bytes, %v", v.Seq, key, len(got), err)
			}
			n++
		}
	}
	if n == 0 {
		t.Error("no version left")
	}
}

// snapshotsAt describes the namespace at every snapshot, reading every
// value.
func snapshotsAt(t *testing.T, h *history.Store, vals map[history.Addr][]byte) string {
	t.Helper()
	snaps, err := h.Snapshots(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, sn := range snaps {
		vs, err := h.At(t.Context(), sn.Seq)
		if err != nil {
			t.Fatalf("At(%d) of snapshot %s: %v", sn.Seq, sn.Name, err)
		}
		for _, v := range vs {
			got, err := h.Get(t.Context(), v.Addr)
			if err != nil || !bytes.Equal(got, vals[v.Addr]) {
				t.Errorf("snapshot %s: %s at %d: %v", sn.Name, v.Key, v.Seq, err)
			}
			fmt.Fprintf(&b, "%s:%s@%d ", sn.Name, v.Key, v.Seq)
		}
	}
	return b.String()
}
