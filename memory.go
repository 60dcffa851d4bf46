package memfs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/memfs/memfs/status"
)

// MinMaxMemory is the smallest default memory budget (DefaultMaxMemory):
// four values of the mount's default --max-file-size.
const MinMaxMemory = 256 << 20

// DefaultMaxMemory is the memory budget of a session's values when none is
// given (session.Options.MaxMemory): a sixteenth of the memory the process
// may use — the machine's (MemTotal), or its cgroup's limit when lower —
// and at least MinMaxMemory. The values are a cache of the store, which
// the kernel's page cache holds too: a small share is enough.
func DefaultMaxMemory() int64 {
	total := memTotal()
	if lim := cgroupLimit(); lim > 0 && (total == 0 || lim < total) {
		total = lim
	}
	return max(total/16, MinMaxMemory)
}

// memTotal is MemTotal of /proc/meminfo in bytes; 0 when unknown.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// cgroupLimit is the memory limit of the process's cgroup (v2 memory.max,
// or v1 memory.limit_in_bytes) in bytes; 0 when there is none or it is
// unknown.
func cgroupLimit() int64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		// v2: "0::/path"; v1: "N:memory:/path" (or "N:...,memory,...:/path").
		parts := strings.SplitN(strings.TrimSpace(string(line)), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			file = filepath.Join("/sys/fs/cgroup", parts[2], "memory.max")
		case strings.Contains(","+parts[1]+",", ",memory,"):
			file = filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes")
		default:
			continue
		}
		v, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 { // "max", or v1's "no limit"
			continue
		}
		return n
	}
	return 0
}

// handBackAt is how many bytes of values let go make it worth a
// collection that hands them back to the system at once: a 1 GiB file
// written through the mount grows by copies (64, 128, 256, 512 MiB), and
// the Go collector, which waits for the heap to double, otherwise keeps
// every old copy until the last one is made.
const handBackAt = 32 << 20

// handBack is the session's Options.Released: once handBackAt bytes of
// values are garbage, one collection at a time, in the background,
// returns them to the system.
func (f *FS) handBack(n int64) {
	if f.freed.Add(n) < handBackAt || !f.freeing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			f.freed.Store(0)
			debug.FreeOSMemory()
			f.freeing.Store(false)
			// What was let go meanwhile (the collection takes a while on a
			// large heap) is not left for a next call that may never come.
			if f.freed.Load() < handBackAt || !f.freeing.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// memoryStatus is the part of .memfs/status about the session's values
// and their budget.
func (f *FS) memoryStatus() *status.Memory {
	m := f.c.Stats().Memory()
	return &status.Memory{Held: m.Held, Dirty: m.Dirty, Budget: m.Budget, Dropped: int64(m.Dropped)}
}

// MinMemoryBudget is the smallest budget ParseMaxMemory takes: a budget
// under a few files of notes would reload them at every open.
const MinMemoryBudget = 16 << 20

// ParseMaxMemory reads a memory budget: "auto" (DefaultMaxMemory), or a
// size of at least MinMemoryBudget ("512MiB", "2GiB", or bytes).
func ParseMaxMemory(v string) (int64, error) {
	if v == "auto" {
		return DefaultMaxMemory(), nil
	}
	n, err := humanize.ParseBytes(v)
	if err != nil || n < MinMemoryBudget || n > 1<<62 {
		return 0, fmt.Errorf("%q: want auto or a size of at least 16MiB (512MiB, 2GiB, or bytes)", v)
	}
	return int64(n), nil
}
