// Command bench is memfs's whole-filesystem benchmark: the same workloads
// on a native directory (the baseline) and on memfs mounts, targets
// interleaved round by round, reported as a markdown table of medians with
// min–max and the ratio to native. scripts/bench.sh builds and runs it.
//
// memfs always runs as a subprocess (memfs mount, in its own process
// group); this program only acts as a client of the mount. It needs root
// to drop the kernel caches.
//
// Adding a target (a peer FUSE filesystem): a constructor returning a
// *fuseTarget (see targets.go) and a case in makeTargets.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func syscallSync() { syscall.Sync() }

type options struct {
	rounds    int
	files     int
	dirs      int
	quick     bool
	out       string
	memfs     string
	work      string
	keep      bool
	targets   string
	mountArgs string
	loopback  string
	rev       string
	workDir   string // resolved work directory
}

func main() {
	var o options
	flag.IntVar(&o.rounds, "rounds", 5, "rounds; each runs every target once, in rotated order")
	flag.IntVar(&o.files, "files", 10000, "files in the tree (and files created)")
	flag.IntVar(&o.dirs, "dirs", 100, "directories the files are spread over")
	flag.BoolVar(&o.quick, "quick", false, "2 rounds of 2,000 files (unless -rounds/-files say otherwise)")
	flag.StringVar(&o.out, "o", "", "also write the markdown report to this file")
	flag.StringVar(&o.memfs, "memfs", "memfs", "the memfs binary")
	flag.StringVar(&o.work, "work", "", "work directory, new or empty (default: a new one under /var/tmp); removed at the end")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (stores, logs)")
	flag.StringVar(&o.targets, "targets", "native,dir,badger", "comma-separated targets: native, dir (memfs dir store), badger (memfs badger store)")
	flag.StringVar(&o.mountArgs, "memfs-args", "", "extra arguments for memfs mount (e.g. --debug)")
	flag.StringVar(&o.loopback, "loopback", "loopback", "the go-fuse loopback example binary (target loopback)")
	flag.StringVar(&o.rev, "rev", "", "memfs revision, shown in the report")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bench: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if o.quick {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["rounds"] {
			o.rounds = 2
		}
		if !set["files"] {
			o.files = 2000
		}
	}
	if o.rounds < 1 || o.files < o.dirs || o.dirs < 1 {
		fmt.Fprintln(os.Stderr, "bench: want -rounds >= 1 and -files >= -dirs >= 1")
		os.Exit(2)
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "bench: needs root (to drop the kernel caches for the cold read)")
		os.Exit(1)
	}
	code := run(o)
	os.Exit(code)
}

func run(o options) (code int) {
	start := time.Now()
	work := o.work
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("/var/tmp", "memfs-bench."); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
	} else if ents, err := os.ReadDir(work); err == nil && len(ents) > 0 {
		// it is removed at the end: never take a directory with things in it
		fmt.Fprintf(os.Stderr, "bench: -work %s is not empty\n", work)
		return 1
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	work, _ = filepath.Abs(work)
	o.workDir = work
	reg.pidFile = filepath.Join(work, "pids")

	// On a signal: stop the memfs processes and detach the mounts at once
	// (that also unblocks a client call stuck on a mount), then let the
	// runner notice and return; clean up here only if it does not.
	var finishOnce sync.Once
	finish := func() { finishOnce.Do(func() { finishWork(o, work) }) }
	mainDone := make(chan struct{})
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sigs
		interrupted.Store(true)
		fmt.Fprintf(os.Stderr, "\nbench: %v: stopping memfs processes, unmounting, cleaning up\n", s)
		cleanup()
		select {
		case <-mainDone:
		case <-time.After(30 * time.Second):
			finish()
			os.Exit(130)
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintln(os.Stderr, "bench: panic:", r)
			code = 1
		}
		finish()
		if interrupted.Load() {
			code = 130
		}
		close(mainDone)
	}()

	if err := bench(o, work, start); err != nil {
		if interrupted.Load() {
			return 130
		}
		fmt.Fprintln(os.Stderr, "bench: FAILED:", err)
		return 1
	}
	return 0
}

var interrupted atomic.Bool

// finishWork stops what the benchmark started and removes the work
// directory (unless -keep, or something is still mounted under it).
func finishWork(o options, work string) {
	cleanup()
	if o.keep {
		fmt.Fprintf(os.Stderr, "bench: kept %s\n", work)
		return
	}
	if left := mountsUnder(work); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "bench: mounts left under %s, not removing it: %v\n", work, left)
		return
	}
	if err := os.RemoveAll(work); err != nil {
		fmt.Fprintln(os.Stderr, "bench: remove work dir:", err)
	}
}

// The rows of the report, in order.
type row struct{ key, label string }

func rows(o options) []row {
	return []row{
		{"ls", "`ls -lR`"},
		{"find", "`find -printf '%s\\n'`"},
		{"cold", "read every file, cold"},
		{"warm", "read every file, warm"},
		{"grep", "`grep -r` a word, warm"},
		{"create", fmt.Sprintf("create %s files", thousands(o.files))},
		{"durable", fmt.Sprintf("create %s files + durable", thousands(o.files))},
		{"mount", "mount, cold (until `.memfs/status` reads)"},
	}
}

func makeTargets(o options, work string) ([]Target, error) {
	var ts []Target
	for _, name := range strings.Split(o.targets, ",") {
		switch strings.TrimSpace(name) {
		case "native":
			ts = append(ts, &nativeTarget{dir: filepath.Join(work, "native", "tree")})
		case "dir", "badger":
			ts = append(ts, newMemfs(o.memfs, name, filepath.Join(work, "memfs-"+name), strings.Fields(o.mountArgs)))
		case "loopback":
			ts = append(ts, newPassthrough("go-fuse loopback", filepath.Join(work, "loopback"), func(b, m string) []string {
				return []string{o.loopback, "-q", "-directmount", m, b}
			}))
		case "bindfs":
			ts = append(ts, newPassthrough("bindfs", filepath.Join(work, "bindfs"), func(b, m string) []string {
				return []string{"bindfs", "-f", b, m}
			}))
		case "rclone":
			ts = append(ts, newPassthrough("rclone mount", filepath.Join(work, "rclone"), func(b, m string) []string {
				return []string{"rclone", "mount", "--vfs-cache-mode", "writes", "--vfs-write-back", "0s", "--cache-dir", filepath.Join(work, "rclone-cache"), b, m}
			}))
		default:
			return nil, fmt.Errorf("unknown target %q (want native, dir, badger, loopback, bindfs, rclone)", name)
		}
	}
	return ts, nil
}

func bench(o options, work string, start time.Time) error {
	targets, err := makeTargets(o, work)
	if err != nil {
		return err
	}
	if _, err := exec.LookPath(o.memfs); err != nil && slices.ContainsFunc(targets, isFUSE) {
		return fmt.Errorf("memfs binary: %v", err)
	}
	loadStart := loadavg()
	logf("work dir %s; %d files in %d dirs, %d rounds, targets %s", work, o.files, o.dirs, o.rounds, o.targets)

	tree := genTree(o.files, o.dirs, 1, "d%03d", "f%05d.md", true)
	newFiles := genTree(o.files, o.dirs, 2, "new/c%03d", "n%05d.md", false)
	treeBytes, wantGrep := totalBytes(tree), planted(tree)
	src := filepath.Join(work, "src")
	if err := writeTree(src, tree); err != nil {
		return err
	}
	for _, t := range targets {
		t0 := time.Now()
		if err := t.Setup(src); err != nil {
			return fmt.Errorf("%s: setup: %w", t.Name(), err)
		}
		logf("%s: loaded the tree in %.2fs", t.Name(), time.Since(t0).Seconds())
	}
	if err := os.RemoveAll(src); err != nil {
		return err
	}

	res := map[string]map[string][]float64{}
	record := func(t Target, key string, d time.Duration) {
		if res[t.Name()] == nil {
			res[t.Name()] = map[string][]float64{}
		}
		res[t.Name()][key] = append(res[t.Name()][key], d.Seconds())
	}
	minFind := o.files + o.dirs + 1
	for r := 0; r < o.rounds; r++ {
		for k := range targets {
			t := targets[(k+r)%len(targets)]
			if err := round(t, r, o, tree, newFiles, treeBytes, wantGrep, minFind, record); err != nil {
				t.Close()
				return fmt.Errorf("round %d, %s: %w", r+1, t.Name(), err)
			}
		}
	}
	for _, t := range targets {
		t.Close()
	}
	report := render(o, targets, res, treeBytes, loadStart, time.Since(start))
	fmt.Print(report)
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(report), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func round(t Target, r int, o options, tree, newFiles []treeFile, treeBytes int64, wantGrep, minFind int,
	record func(Target, string, time.Duration)) error {
	var line []string
	rec := func(key string, d time.Duration) {
		record(t, key, d)
		line = append(line, fmt.Sprintf("%s %.3f", key, d.Seconds()))
	}
	defer func() { logf("round %d/%d %-13s %s", r+1, o.rounds, t.Name()+":", strings.Join(line, "  ")) }()

	var root string
	var created time.Duration
	steps := []func() error{
		dropCaches,
		func() (err error) {
			t0 := time.Now()
			if root, err = t.Mount(); err == nil && isFUSE(t) {
				rec("mount", time.Since(t0))
			}
			return err
		},
		dropCaches,
		func() error {
			d, err := readAll(root, tree, treeBytes)
			if err != nil {
				return fmt.Errorf("cold read: %w", err)
			}
			rec("cold", d)
			return nil
		},
		func() error {
			d, err := readAll(root, tree, treeBytes)
			if err != nil {
				return fmt.Errorf("warm read: %w", err)
			}
			rec("warm", d)
			return nil
		},
		func() error {
			d, err := lsLR(root)
			if err == nil {
				rec("ls", d)
			}
			return err
		},
		func() error {
			d, n, err := runCounted("find", root, "-printf", "%s\n")
			if err != nil {
				return err
			}
			if n < minFind || n > minFind+3 { // memfs adds .memfs/{status,changes}
				return fmt.Errorf("find printed %d lines, want %d", n, minFind)
			}
			rec("find", d)
			return nil
		},
		func() error {
			d, n, err := runCounted("grep", "-r", grepWord, root)
			if err != nil {
				return err
			}
			if n != wantGrep {
				return fmt.Errorf("grep -r found %d lines, want %d", n, wantGrep)
			}
			rec("grep", d)
			return nil
		},
		func() (err error) {
			syscallSync() // start the create from a clean disk
			if created, err = createFiles(root, newFiles); err != nil {
				return fmt.Errorf("create: %w", err)
			}
			return nil
		},
		func() error {
			t1 := time.Now()
			if err := t.Durable(); err != nil {
				return err
			}
			rec("create", created)
			rec("durable", created+time.Since(t1))
			return nil
		},
		func() error {
			if err := t.Reset("new", len(newFiles)); err != nil {
				return fmt.Errorf("reset: %w", err)
			}
			syscallSync()
			return nil
		},
	}
	for _, step := range steps {
		if interrupted.Load() {
			return errInterrupted
		}
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

var errInterrupted = errors.New("interrupted")

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// --- the report ---

func stats(v []float64) (med, lo, hi float64) {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		med = s[n/2]
	} else {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}

func secs(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func ratio(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("x%.0f", v)
	}
	return fmt.Sprintf("x%.1f", v)
}

func render(o options, targets []Target, res map[string]map[string][]float64, treeBytes int64, loadStart string, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Whole-filesystem benchmark (`scripts/bench.sh`)\n\n")
	fmt.Fprintf(&b, "%s\n\n", machine(o))
	fmt.Fprintf(&b, "%s files of 1–4 KiB of text (%.1f MiB) in %d directories; %d rounds, targets interleaved "+
		"(order rotated each round). Seconds: **median** xN (min–max), xN = median / native median. "+
		"Load average (1, 5, 15 min) at the start: %s; at the end: %s.\n\n",
		thousands(o.files), float64(treeBytes)/(1<<20), o.dirs, o.rounds, loadStart, loadavg())
	b.WriteString("| workload |")
	for _, t := range targets {
		fmt.Fprintf(&b, " %s |", t.Name())
	}
	b.WriteString("\n| --- |")
	for range targets {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	base := res["native"]
	for _, rw := range rows(o) {
		fmt.Fprintf(&b, "| %s |", rw.label)
		for _, t := range targets {
			v := res[t.Name()][rw.key]
			if len(v) == 0 {
				b.WriteString(" — |")
				continue
			}
			med, lo, hi := stats(v)
			cell := "**" + secs(med) + "**"
			if bv := base[rw.key]; t.Name() != "native" && len(bv) > 0 {
				bm, _, _ := stats(bv)
				if bm > 0 {
					cell += " " + ratio(med/bm)
				}
			}
			cell += fmt.Sprintf(" (%s–%s)", secs(lo), secs(hi))
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	b.WriteString(bestPeer(o, targets, res))
	fmt.Fprintf(&b, `
- Each round, per target: drop caches (sync; echo 3 > /proc/sys/vm/drop_caches),
  mount (memfs: a fresh `+"`memfs mount --flush-interval 0`"+` process; timed until
  .memfs/status names it), drop caches again, then in this order: cold read,
  warm read (same mount), ls -lR, find, grep, create, durable; then (untimed)
  the created files are checked in the store and removed.
- Reads: one Go loop of os.ReadFile over every file, directory by directory,
  single-threaded (no cat processes). Byte totals are checked.
- ls -lR: the real ls, output to /dev/null. find and grep -r (%q, in 1 file
  of 50): output through a pipe (GNU grep stops at the first match when
  writing to /dev/null); line counts are checked.
- Create: %s new files of 1–4 KiB in %d new directories (mkdir, then
  open O_CREAT|O_TRUNC, write, close each; no fsync), one Go loop.
  Durable: native = one sync(2) after the last close; memfs = SIGTERM and
  wait for the process to exit (final flush to the store, unmount).
  "+ durable" is the create time plus that.
- Run time of the whole benchmark: %s.
`, grepWord, thousands(o.files), o.dirs, took.Round(time.Second))
	return b.String()
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

func machine(o options) string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %.0f GiB", float64(kb)/(1<<20))
		}
	}
	kernel := "?"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	gov := runtime.Version()
	if out, err := exec.Command("go", "version").Output(); err == nil {
		if f := strings.Fields(string(out)); len(f) >= 3 {
			gov = f[2]
		}
	}
	nproc := fmt.Sprint(runtime.NumCPU())
	if out, err := exec.Command("nproc").Output(); err == nil {
		nproc = strings.TrimSpace(string(out))
	}
	rev := ""
	if o.rev != "" {
		rev = ", memfs " + o.rev
	}
	return fmt.Sprintf("**Machine**: %s, nproc %s%s, kernel %s, %s; disk: %s%s. Date: %s.",
		cpu, nproc, mem, kernel, gov, workFS(o.workDir), rev, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
}

// workFS describes the filesystem the work directory is on.
func workFS(dir string) string {
	out, err := exec.Command("findmnt", "-n", "-o", "FSTYPE,SOURCE", "-T", dir).Output()
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(out)), " on ")
}

// bestPeer renders, when peers ran, each memfs target's median against the
// best peer's for every workload (xN < 1: memfs is faster).
func bestPeer(o options, targets []Target, res map[string]map[string][]float64) string {
	var memfs, peers []string
	for _, t := range targets {
		switch n := t.Name(); {
		case n == "native":
		case strings.HasPrefix(n, "memfs"):
			memfs = append(memfs, n)
		default:
			peers = append(peers, n)
		}
	}
	if len(peers) == 0 || len(memfs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nAgainst the best peer (xN = memfs median / best peer median; below 1, memfs is faster):\n\n| workload | best peer |")
	for _, m := range memfs {
		fmt.Fprintf(&b, " %s |", m)
	}
	b.WriteString("\n| --- | --- |")
	for range memfs {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, rw := range rows(o) {
		best, bestName := 0.0, ""
		for _, p := range peers {
			if v := res[p][rw.key]; len(v) > 0 {
				if m, _, _ := stats(v); bestName == "" || m < best {
					best, bestName = m, p
				}
			}
		}
		if bestName == "" || best <= 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s %s |", rw.label, bestName, secs(best))
		for _, m := range memfs {
			if v := res[m][rw.key]; len(v) > 0 {
				med, _, _ := stats(v)
				fmt.Fprintf(&b, " %s |", ratio(med/best))
			} else {
				b.WriteString(" — |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
