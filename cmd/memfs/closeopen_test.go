package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCloseToOpenShared: on a shared store with the default 30 s flush
// interval, a file written on mount A and closed (no fsync) is readable on
// mount B within a second, as NFS's close-to-open consistency promises
// (issue 30, finding 6). The bound is the promise itself, so it is timed:
// the test measures the latency of 50 closes, prints p50 and p99 (the
// numbers of BENCHMARKS.md), and fails when p99 reaches 1 s. Before the
// close flush, B saw the file at A's next periodic flush, up to 30 s on.
// The baseline of the same run is a write A fsyncs before the close: the
// store has it when close returns, so what remains is B's side.
func TestCloseToOpenShared(t *testing.T) {
	const n, promise = 50, time.Second
	a, b := twoMounts(t, sharedEtcdStore(t), sharedEnv(t), "--flush-interval", "30s")
	visible := func(kind string, write func(path string, data []byte) error) (p50, p99 time.Duration) {
		lat := make([]time.Duration, 0, n)
		for i := range n {
			name := fmt.Sprintf("%s%02d.md", kind, i)
			want := fmt.Sprintf("written on A, %s, round %d\n", kind, i)
			if err := write(filepath.Join(a.mnt, "memory", name), []byte(want)); err != nil {
				t.Fatal(err)
			}
			closed := time.Now()
			// Twice the promise: a late file still counts into p99,
			// and a mount that waits for its periodic flush fails in
			// seconds.
			waitFor(t, "B reads "+name, 2*promise, func() bool {
				got, err := os.ReadFile(filepath.Join(b.mnt, "memory", name))
				return err == nil && string(got) == want
			})
			lat = append(lat, time.Since(closed))
		}
		slices.Sort(lat)
		p50, p99 = lat[n/2], lat[n*99/100]
		t.Logf("%s on A to read on B, %d files: p50 %v, p99 %v", kind, n, p50.Round(time.Millisecond), p99.Round(time.Millisecond))
		return p50, p99
	}
	_, p99 := visible("close", func(path string, data []byte) error { return os.WriteFile(path, data, 0o644) })
	visible("fsync", writeSync)
	if p99 >= promise {
		t.Errorf("p99 %v: a closed file is not visible on the other mount within %v\nA:\n%s\nB:\n%s", p99, promise, a.log, b.log)
	}
}

// TestNamespaceChangesVisibleShared: mkdir, rename and unlink on one
// mount of a shared store reach the other soon (the close flush), not at
// the periodic flush 30 s later.
func TestNamespaceChangesVisibleShared(t *testing.T) {
	const promise = 2 * time.Second // a second's promise, with room for a loaded machine
	a, b := twoMounts(t, sharedEtcdStore(t), sharedEnv(t), "--flush-interval", "30s")
	onB := func(rel string) bool { _, err := os.Lstat(filepath.Join(b.mnt, rel)); return err == nil }
	if err := os.WriteFile(filepath.Join(a.mnt, "memory", "x.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B sees memory/x.md (a closed file)", promise, func() bool { return onB("memory/x.md") })
	if err := os.Mkdir(filepath.Join(a.mnt, "memory", "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B sees the directory A made", promise, func() bool { return onB("memory/d") })
	if err := os.Rename(filepath.Join(a.mnt, "memory", "x.md"), filepath.Join(a.mnt, "memory", "y.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B sees the rename A made", promise, func() bool { return onB("memory/y.md") && !onB("memory/x.md") })
	if err := os.Remove(filepath.Join(a.mnt, "memory", "y.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B sees the unlink A made", promise, func() bool { return !onB("memory/y.md") })
}

// TestAttrChangesVisibleShared: chmod, chown and a tag set on one mount
// of a shared store, with no fsync, reach the other soon (the close
// flush), not at the periodic flush 30 s later: a note made private on A
// must not stay readable through B (issue 26).
func TestAttrChangesVisibleShared(t *testing.T) {
	const promise = 2 * time.Second // a second's promise, with room for a loaded machine
	a, b := twoMounts(t, sharedEtcdStore(t), sharedEnv(t), "--flush-interval", "30s")
	onA := filepath.Join(a.mnt, "memory", "p.md")
	onB := filepath.Join(b.mnt, "memory", "p.md")
	if err := writeSync(onA, []byte("private soon\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B sees memory/p.md", promise, func() bool { _, err := os.Lstat(onB); return err == nil })
	if err := os.Chmod(onA, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B sees the chmod 600 A made", promise, func() bool {
		fi, err := os.Lstat(onB)
		return err == nil && fi.Mode().Perm() == 0o600
	})
	if err := os.Chown(onA, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B sees the chown A made", promise, func() bool {
		fi, err := os.Lstat(onB)
		st, ok := fi.Sys().(*syscall.Stat_t)
		return err == nil && ok && st.Uid == 65534 && st.Gid == 65534
	})
	if err := unix.Setxattr(onA, "user.memfs.tags", []byte("secret"), 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B sees the tags A set", promise, func() bool {
		buf := make([]byte, 64)
		n, err := unix.Getxattr(onB, "user.memfs.tags", buf)
		return err == nil && string(buf[:n]) == "secret"
	})
}
