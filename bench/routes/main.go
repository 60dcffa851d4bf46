// Command routes measures what routes and expiry cost a mount
// (BENCHMARKS.md, "Routes and expiry"), through real FUSE mounts of a
// memfs binary it runs as subprocesses:
//
//   - routes: a stat (a LOOKUP: timeouts 0) and a cold read of a 4 KiB
//     file through a mount of one badger store (the default route only)
//     and through one with five routes (two mem:, a read-only dir, a dir
//     and a badger store), for files of the default route and of the
//     badger route r5/. Both mounts are up at once and each op runs on
//     one, then the other (the order alternating), so that the machine's
//     bursts of load fall on both; both are mounted anew each round.
//   - expiry: a mount of 100,000 notes imported into badger, every file
//     with user.memfs.ttl or none (and, with -noloop, a binary built
//     without the expiry loop), variants alternating round by round: the
//     time until the mount answers, a rewrite right after, its CPU time
//     and memory 3 s later, and the wall and CPU time of rewriting
//     existing notes (a write renews a deadline).
//
// Run as root (FUSE mounts), from the module's root:
//
//	go build -o /tmp/memfs-bench ./cmd/memfs
//	go run ./bench/routes -memfs /tmp/memfs-bench -cpu 1 [-noloop /tmp/memfs-noloop] [-part routes|expiry]
//
// -noloop is the same source with the expiry loop switched off: in a copy
// of the tree (git archive HEAD | tar -x -C DIR), startExpiry in
// expiry.go made to return func() {} at once, then go build -o
// /tmp/memfs-noloop ./cmd/memfs in DIR.
//
// On a shared machine, -cpu pins the two mounts of the routes part to the
// same CPUs: unpinned, one mount's threads may wait behind another
// program on one CPU for a whole round while the other's run, which moved
// a round's ratio by 3x here; pinned, the rounds agree within a few %.
//
// Everything lives in a new directory under $TMPDIR, removed at the end;
// the memfs processes it starts are stopped by PID (SIGTERM, then
// SIGKILL) and their mountpoints unmounted, on a signal too.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

type options struct {
	memfs  string // the binary measured
	noLoop string // the same build without the expiry loop ("": not measured)
	base   string // an earlier build, for the expiry part ("": not measured)
	part   string // "routes", "expiry", or "" for both
	rounds int
	files  int // files of each kind (default route, routed) in the routes part
	passes int // stats of each file per mount
	keys   int // notes of the expiry part
	writes int // files rewritten per mount in the expiry part
	cpu    string
	settle time.Duration // routes part: a wait between mounting and the first op
	work   string
}

func main() {
	var o options
	flag.StringVar(&o.memfs, "memfs", "/tmp/memfs-bench", "the memfs binary")
	flag.StringVar(&o.noLoop, "noloop", "", "a memfs binary built without the expiry loop (startExpiry returning at once), for the expiry part")
	flag.StringVar(&o.base, "base", "", "an earlier memfs binary, mounted on the ttl store in the expiry part too (before/after in one run)")
	flag.StringVar(&o.part, "part", "", "routes or expiry (default: both)")
	flag.IntVar(&o.rounds, "rounds", 7, "rounds; each mounts every variant once, the order alternating")
	flag.IntVar(&o.files, "files", 1000, "4 KiB files in the default route and as many in the routed prefix")
	flag.IntVar(&o.passes, "passes", 3, "stats of every file per mount")
	flag.IntVar(&o.keys, "keys", 100_000, "notes of the expiry part")
	flag.IntVar(&o.writes, "writes", 5000, "existing files rewritten per mount in the expiry part")
	flag.DurationVar(&o.settle, "settle", 0, "routes part: wait this long after mounting before the first op (the mounts' start-up work done)")
	flag.StringVar(&o.cpu, "cpu", "", "run the routes part's mounts on these CPUs (taskset -c LIST), so that the two mounts compared share one CPU's load")
	flag.Parse()
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "routes: needs root (FUSE mounts)")
		os.Exit(1)
	}
	os.Exit(run(o))
}

func run(o options) int {
	var err error
	if o.work, err = os.MkdirTemp("", "memfs-routes-bench."); err != nil {
		fmt.Fprintln(os.Stderr, "routes:", err)
		return 1
	}
	defer func() {
		stopAll()
		if err := os.RemoveAll(o.work); err != nil {
			fmt.Fprintln(os.Stderr, "routes: removing the work directory:", err)
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		stopAll()
		_ = os.RemoveAll(o.work)
		os.Exit(130)
	}()
	fmt.Printf("memfs %s; load average at the start: %s; %s\n", o.memfs, loadavg(), time.Now().UTC().Format(time.RFC3339))
	if o.part == "" || o.part == "routes" {
		if err := benchRoutes(o); err != nil {
			fmt.Fprintln(os.Stderr, "routes: FAILED:", err)
			return 1
		}
	}
	if o.part == "" || o.part == "expiry" {
		if err := benchExpiry(o); err != nil {
			fmt.Fprintln(os.Stderr, "routes: FAILED:", err)
			return 1
		}
	}
	fmt.Printf("load average at the end: %s\n", loadavg())
	return 0
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

// median of v (v is not changed).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else if n > 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return 0
}

// span is "min–max" of v.
func span(v []float64, f string) string {
	return fmt.Sprintf(f+"–"+f, slices.Min(v), slices.Max(v))
}

// text is n bytes of words, the i-th file's.
func text(i, n int) []byte {
	words := []string{"the", "route", "memory", "note", "agent", "decision", "store", "prefix", "mount", "expires", "renew", "lookup"}
	var b strings.Builder
	for j := i; b.Len() < n; j++ {
		b.WriteString(words[(j*7+i)%len(words)])
		b.WriteByte(' ')
		if j%13 == 0 {
			b.WriteByte('\n')
		}
	}
	out := []byte(b.String()[:n-1])
	return append(out, '\n')
}
