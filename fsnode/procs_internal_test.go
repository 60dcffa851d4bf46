package fsnode

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/await"
)

// A program that makes many requests has /proc read once per
// procCacheTTL, not once per request; a thread that is gone is never
// remembered, and an entry past its time is read again.
func TestProcCacheReadsProcOncePerTTL(t *testing.T) {
	now := time.Unix(1000, 0)
	reads := 0
	c := procCache{
		now: func() time.Time { return now },
		read: func(tid uint32) procEntry {
			reads++
			if tid == 99 {
				return procEntry{pid: 99} // gone
			}
			return procEntry{pid: 7, comm: "cp"}
		},
	}
	for range 1000 {
		if pid, comm, _ := c.process(8); pid != 7 || comm != "cp" {
			t.Fatalf("process(8) = %d %q, want 7 cp", pid, comm)
		}
	}
	if reads != 1 {
		t.Fatalf("1,000 requests of one thread read /proc %d times, want 1", reads)
	}
	now = now.Add(procCacheTTL)
	c.process(8)
	if reads != 2 {
		t.Errorf("after the TTL: %d reads, want 2 (read again)", reads)
	}
	now = now.Add(-time.Hour) // the clock stepped back: not trusted
	c.process(8)
	if reads != 3 {
		t.Errorf("after the clock stepped back: %d reads, want 3", reads)
	}
	for range 3 {
		if pid, comm, _ := c.process(99); pid != 99 || comm != "" {
			t.Errorf("process(99) = %d %q, want 99 \"\"", pid, comm)
		}
	}
	if reads != 6 {
		t.Errorf("a gone thread asked 3 times: %d reads in all, want 6 (never remembered)", reads)
	}
	for tid := range uint32(procCacheSize + 10) {
		c.process(1000 + tid)
	}
	if len(c.seen) > procCacheSize {
		t.Errorf("%d threads remembered, bound %d", len(c.seen), procCacheSize)
	}
}

// readProcess names this test's own process from one of its threads.
func TestReadProcessNamesTheProgram(t *testing.T) {
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	e := readProcess(uint32(os.Getpid()))
	if e.pid != uint32(os.Getpid()) || e.comm+"\n" != string(self) {
		t.Errorf("readProcess(self) = %+v, want pid %d comm %q", e, os.Getpid(), self)
	}
	if e := readProcess(1<<31 - 1); e.comm != "" || e.pid != 1<<31-1 {
		t.Errorf("readProcess of no thread = %+v, want the tid and no name", e)
	}
}

// processRun finds MEMFS_RUN in a process's environment as it was at exec,
// and refuses an invalid one.
func TestProcessRun(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"MEMFS_RUN=r-1", "r-1"},
		{"MEMFS_RUN=../x", ""},
		{"OTHER=1", ""},
	} {
		cmd := exec.Command("sleep", "5")
		cmd.Env = []string{"PATH=/usr/bin:/bin", tc.env}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Until the child has exec'd sleep, its environment is this
		// process's, then for a moment none (CI with GOMAXPROCS=1 read
		// it then): wait for the PATH it was given.
		environ := fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid)
		await.True(t, "the child exec'd sleep", 5*time.Second, func() bool {
			b, _ := os.ReadFile(environ)
			return strings.HasPrefix(string(b), "PATH=/usr/bin:/bin\x00")
		})
		got := processRun(uint32(cmd.Process.Pid))
		cmd.Process.Kill()
		cmd.Wait()
		if got != tc.want {
			t.Errorf("%s: processRun = %q, want %q", tc.env, got, tc.want)
		}
	}
}

// BenchmarkReadProcess is what a cache miss of procCache costs: the
// process's status, name and environment (for its MEMFS_RUN).
func BenchmarkReadProcess(b *testing.B) {
	pid := uint32(os.Getpid())
	for b.Loop() {
		readProcess(pid)
	}
}
