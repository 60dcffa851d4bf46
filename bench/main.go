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
//
// # Concurrency
//
// A command, not a library: the workloads run one at a time on main's
// goroutine (a parallel-write workload starts its own writers and waits
// for them). A signal goroutine stops what the run started (cleanup, under
// cleanupMu; the registry of processes and mounts is guarded by its own
// mutex) and a goroutine per memfs process waits for its exit.
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
	"strconv"
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
	edits     int   // files edited in place by sed -i
	bigBytes  int64 // size of the sequentially written and read file
	mountKeys int   // keys of the mount phase (0: no mount phase)
	mountReps int   // repetitions of the mount phase
	quick     bool
	out       string
	memfs     string
	memfsBase string // a baseline binary for the targets dir-base and badger-base
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
	flag.IntVar(&o.edits, "edits", 1000, "files edited in place (one sed -i over all of them)")
	flag.Int64Var(&o.bigBytes, "big", 256<<20, "bytes of the large file written (1 MiB writes, fsync) and read sequentially")
	flag.IntVar(&o.mountKeys, "mount-keys", 100000, "keys of the mount phase after the rounds (mount time and memory; 0: skip it)")
	flag.IntVar(&o.mountReps, "mount-reps", 0, "repetitions of the mount phase (0: as many as -rounds)")
	flag.BoolVar(&o.quick, "quick", false, "2 rounds of 2,000 files, 200 edits, a 32 MiB file, a 10,000-key mount phase (unless flags say otherwise)")
	flag.StringVar(&o.out, "o", "", "also write the markdown report to this file")
	flag.StringVar(&o.memfs, "memfs", "memfs", "the memfs binary")
	flag.StringVar(&o.memfsBase, "memfs-base", "", "a baseline memfs binary (an earlier build), for the targets dir-base, badger-base and etcd-base: before/after in one run")
	flag.StringVar(&o.work, "work", "", "work directory, new or empty (default: a new one under /var/tmp); removed at the end")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (stores, logs)")
	flag.StringVar(&o.targets, "targets", "native,dir,badger", "comma-separated targets: native, dir (memfs dir store), badger (memfs badger store), etcd (memfs on an etcd server the benchmark starts: /usr/bin/etcd), loopback (go-fuse example), bindfs, rclone (rclone mount)")
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
		if !set["edits"] {
			o.edits = 200
		}
		if !set["big"] {
			o.bigBytes = 32 << 20
		}
		if !set["mount-keys"] {
			o.mountKeys = 10000
		}
	}
	if o.mountReps <= 0 {
		o.mountReps = o.rounds
	}
	if o.rounds < 1 || o.files < o.dirs || o.dirs < 1 || o.edits < 0 || o.edits > o.files || o.bigBytes < 1 || o.mountKeys < 0 {
		fmt.Fprintln(os.Stderr, "bench: want -rounds >= 1, -files >= -dirs >= 1, 0 <= -edits <= -files, -big >= 1, -mount-keys >= 0")
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
	// memfs keeps per-process state under $XDG_STATE_HOME/memfs (an etcd
	// store's journals, one directory per store URL, so one per run; the
	// dir store's helper log): keep it in the work directory, removed
	// with it, rather than in root's home.
	if err := os.Setenv("XDG_STATE_HOME", filepath.Join(work, "state")); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}

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

// The rows of the report, in order. unit "" is seconds; "MiB" a memory size.
type row struct{ key, label, unit string }

func rows(o options) []row {
	big := mib(o.bigBytes)
	rs := []row{
		{"ls", "`ls -lR`", ""},
		{"find", "`find -printf '%s\\n'`", ""},
		{"cold", "read every file, cold", ""},
		{"warm", "read every file, warm", ""},
		{"grep", "`grep -r` a word, warm", ""},
		{"edit", fmt.Sprintf("`sed -i` on %s files", thousands(o.edits)), ""},
		{"seqw", fmt.Sprintf("write %s (1 MiB writes)", big), ""},
		{"seqws", fmt.Sprintf("write %s + fsync", big), ""},
		{"seqr", fmt.Sprintf("read %s, warm", big), ""},
		{"create", fmt.Sprintf("create %s files", thousands(o.files)), ""},
		{"flush", fmt.Sprintf("flush %s new files (memfs: fsync of one; native: sync)", thousands(o.files)), ""},
		{"durable", fmt.Sprintf("create %s files + durable", thousands(o.files)), ""},
		{"mount", fmt.Sprintf("mount %s keys, cold (memfs: until `.memfs/status` reads)", thousands(o.files)), ""},
	}
	if o.mountKeys > 0 {
		k := thousands(o.mountKeys)
		rs = append(rs,
			row{"mountN", fmt.Sprintf("mount %s keys, cold", k), ""},
			row{"rssN", fmt.Sprintf("RSS after mounting %s keys, MiB", k), "MiB"},
			row{"hwmN", fmt.Sprintf("peak RSS (VmHWM) mounting %s keys, MiB", k), "MiB"},
		)
	}
	return rs
}

// mib names a size in MiB ("256 MiB"), or in bytes when it is not whole.
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%s bytes", thousands(int(n)))
}

// makeTargets builds the targets -targets names, each with its own
// directory under work. shared "" gives each its own copy of the tree (the
// rounds); otherwise every target serves the tree at shared (the mount
// phase: the dir store and the peers serve it in place, the badger store
// imports it, native is left out).
func makeTargets(o options, work, shared string) ([]Target, error) {
	var ts []Target
	// memfs needs room for the large file (its default limit is 64 MiB)
	mountArgs := append([]string{"--max-file-size", strconv.FormatInt(max(300_000_000, o.bigBytes), 10)}, strings.Fields(o.mountArgs)...)
	for _, name := range strings.Split(o.targets, ",") {
		name = strings.TrimSpace(name)
		dir := filepath.Join(work, name)
		switch name {
		case "native":
			if shared == "" {
				ts = append(ts, &nativeTarget{dir: filepath.Join(dir, "tree")})
			}
		case "dir", "badger", "dir-base", "badger-base":
			store := ""
			if strings.HasPrefix(name, "dir") {
				store = shared
			}
			bin := o.memfs
			if strings.HasSuffix(name, "-base") {
				if o.memfsBase == "" {
					return nil, fmt.Errorf("target %s needs -memfs-base", name)
				}
				bin = o.memfsBase
			}
			t := newMemfs(bin, strings.TrimSuffix(name, "-base"), filepath.Join(work, "memfs-"+name), store, mountArgs)
			t.name = "memfs " + name
			ts = append(ts, t)
		case "etcd", "etcd-base":
			// One etcd server for the run, a namespace of its own for
			// each set of targets.
			ep, err := benchEtcd(work)
			if err != nil {
				return nil, err
			}
			bin := o.memfs
			if name == "etcd-base" {
				if o.memfsBase == "" {
					return nil, fmt.Errorf("target %s needs -memfs-base", name)
				}
				bin = o.memfsBase
			}
			etcdNamespaces++
			store := fmt.Sprintf("etcd://%s/bench%d", ep, etcdNamespaces)
			t := newMemfs(bin, "etcd", filepath.Join(work, "memfs-"+name), store, mountArgs)
			t.name = "memfs " + name
			ts = append(ts, t)
		case "loopback":
			ts = append(ts, newPassthrough("go-fuse loopback", dir, shared, func(b, m string) []string {
				return []string{o.loopback, "-q", "-directmount", m, b}
			}))
		case "bindfs":
			ts = append(ts, newPassthrough("bindfs", dir, shared, func(b, m string) []string {
				return []string{"bindfs", "-f", b, m}
			}))
		case "rclone":
			ts = append(ts, newPassthrough("rclone mount", dir, shared, func(b, m string) []string {
				return []string{"rclone", "mount", "--vfs-cache-mode", "writes", "--vfs-write-back", "0s", "--cache-dir", filepath.Join(dir, "cache"), b, m}
			}))
		default:
			return nil, fmt.Errorf("unknown target %q (want native, dir, badger, etcd, dir-base, badger-base, etcd-base, loopback, bindfs, rclone)", name)
		}
	}
	return ts, nil
}

// plan is what every round works with, computed once.
type plan struct {
	tree, newFiles []treeFile
	treeBytes      int64
	wantGrep       int
	minFind        int
	edits          []treeFile
	perDir         map[string]int  // entries of each tree directory
	inTree         map[string]bool // the tree's paths
	big            *bigData
}

func bench(o options, work string, start time.Time) error {
	targets, err := makeTargets(o, work, "")
	if err != nil {
		return err
	}
	if _, err := exec.LookPath(o.memfs); err != nil && slices.ContainsFunc(targets, isFUSE) {
		return fmt.Errorf("memfs binary: %v", err)
	}
	loadStart := loadavg()
	logf("work dir %s; %d files in %d dirs, %d rounds, targets %s", work, o.files, o.dirs, o.rounds, o.targets)

	pl := plan{
		tree:     genTree(o.files, o.dirs, 1, "d%03d", "f%05d.md", true),
		newFiles: genTree(o.files, o.dirs, 2, newDir+"/c%03d", "n%05d.md", false),
		minFind:  o.files + o.dirs + 1,
		perDir:   map[string]int{},
		inTree:   map[string]bool{},
		big:      newBigData(o.bigBytes),
	}
	pl.treeBytes, pl.wantGrep = totalBytes(pl.tree), planted(pl.tree)
	pl.edits = pickEdits(pl.tree, o.edits)
	for _, f := range pl.tree {
		pl.perDir[filepath.Dir(f.rel)]++
		pl.inTree[f.rel] = true
	}
	src := filepath.Join(work, "src")
	if err := writeTree(src, pl.tree); err != nil {
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

	res := newResults()
	for r := 0; r < o.rounds; r++ {
		for k := range targets {
			t := targets[(k+r)%len(targets)]
			if err := round(t, r, o, &pl, res); err != nil {
				t.Close()
				return fmt.Errorf("round %d, %s: %w", r+1, t.Name(), err)
			}
		}
	}
	for _, t := range targets {
		t.Close()
	}
	if o.mountKeys > 0 {
		if err := mountPhase(o, work, res); err != nil {
			return fmt.Errorf("mount phase: %w", err)
		}
	}
	report := render(o, targets, res, pl.treeBytes, loadStart, time.Since(start))
	fmt.Print(report)
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(report), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// results collects the measurements and the failures of every target.
type results struct {
	vals  map[string]map[string][]float64    // target name -> row key -> values
	fails map[string]map[string]map[int]bool // target name -> row key -> rounds that failed
	notes []string                           // what failed, in order
	last  map[string]map[string]int          // target name -> row key -> round of the last value
}

func newResults() *results {
	return &results{vals: map[string]map[string][]float64{}, fails: map[string]map[string]map[int]bool{},
		last: map[string]map[string]int{}}
}

func (r *results) record(t Target, round int, key string, v float64) {
	n := t.Name()
	if r.vals[n] == nil {
		r.vals[n] = map[string][]float64{}
		r.last[n] = map[string]int{}
	}
	r.vals[n][key] = append(r.vals[n][key], v)
	r.last[n][key] = round
}

// failGroups: the rows a failure under a key makes void.
var failGroups = map[string][]string{
	"seqw":    {"seqw", "seqws", "seqr"},
	"create":  {"create", "flush", "durable"},
	"durable": {"create", "flush", "durable"},
}

// fail records that t's workload key failed in round: the round's values
// of the rows it voids are dropped (a broken target must not look fast).
func (r *results) fail(t Target, round int, key, msg string) {
	n := t.Name()
	r.notes = append(r.notes, fmt.Sprintf("round %d, %s, %s: %s", round, n, key, msg))
	logf("round %d %s: FAILED %s: %s", round, n, key, msg)
	group := failGroups[key]
	if group == nil {
		group = []string{key}
	}
	if r.fails[n] == nil {
		r.fails[n] = map[string]map[int]bool{}
	}
	for _, k := range group {
		if r.fails[n][k] == nil {
			r.fails[n][k] = map[int]bool{}
		}
		r.fails[n][k][round] = true
		if v := r.vals[n][k]; len(v) > 0 && r.last[n][k] == round {
			r.vals[n][k] = v[:len(v)-1]
			r.last[n][k] = -1
		}
	}
}

// isPeer: a peer FUSE filesystem, whose wrong outputs are recorded as
// failures (and its state repaired) instead of stopping the benchmark.
func isPeer(t Target) bool { return isFUSE(t) && !isMemfs(t) }

// A step of a round. A step with a key is a workload: when a peer fails
// it, the failure is recorded under that row and the round goes on.
type step struct {
	key string
	run func() error
}

func round(t Target, r int, o options, pl *plan, res *results) error {
	s := &roundRun{t: t, r: r, pl: pl, res: res}
	defer func() { logf("round %d/%d %-13s %s", r+1, o.rounds, t.Name()+":", strings.Join(s.line, "  ")) }()
	steps := []step{
		{"", dropCaches},
		{"", s.mount},
		{"", dropCaches},
		{"cold", func() error { return s.readTree("cold") }},
		{"warm", func() error { return s.readTree("warm") }},
		{"ls", s.ls},
		{"find", s.find},
		{"grep", s.grep},
		{"edit", s.edit},
		{"seqw", s.seqw},
		{"create", s.create},
		{"flush", s.flush},
		{"", s.durable},
		{"", s.reset},
	}
	for _, st := range steps {
		if interrupted.Load() {
			return errInterrupted
		}
		if err := st.run(); err != nil {
			if st.key == "" || !isPeer(t) || interrupted.Load() {
				return err
			}
			res.fail(t, r+1, st.key, err.Error())
		}
	}
	return nil
}

// roundRun is one round on one target: what its steps share.
type roundRun struct {
	t   Target
	r   int // the round, from 0
	pl  *plan
	res *results

	root             string // the mount point, once mounted
	created, flushed time.Duration
	line             []string // each timing recorded, for the round's log line
}

func (s *roundRun) rec(key string, d time.Duration) {
	s.res.record(s.t, s.r+1, key, d.Seconds())
	s.line = append(s.line, fmt.Sprintf("%s %.3f", key, d.Seconds()))
}

func (s *roundRun) bigPath() string { return filepath.Join(s.root, bigName) }

func (s *roundRun) mount() (err error) {
	t0 := time.Now()
	if s.root, err = s.t.Mount(); err == nil && isFUSE(s.t) {
		s.rec("mount", time.Since(t0))
	}
	return err
}

// readTree reads the whole tree, checked, as the workload key ("cold" or
// "warm").
func (s *roundRun) readTree(key string) error {
	d, err := readAll(s.root, s.pl.tree, s.pl.treeBytes)
	if err != nil {
		return fmt.Errorf("%s read: %w", key, err)
	}
	s.rec(key, d)
	return nil
}

func (s *roundRun) ls() error {
	d, err := lsLR(s.root)
	if err == nil {
		s.rec("ls", d)
	}
	return err
}

func (s *roundRun) find() error {
	want := s.pl.minFind + reservedEntries(s.root, s.pl) // memfs adds its namespace, and .memfs when listed
	d, n, err := runCounted("find", s.root, "-printf", "%s\n")
	if err != nil {
		return err
	}
	if n != want {
		return fmt.Errorf("find printed %d lines, want %d", n, want)
	}
	s.rec("find", d)
	return nil
}

func (s *roundRun) grep() error {
	d, n, err := runCounted("grep", "-r", grepWord, s.root)
	if err != nil {
		return err
	}
	if n != s.pl.wantGrep {
		return fmt.Errorf("grep -r found %d lines, want %d", n, s.pl.wantGrep)
	}
	s.rec("grep", d)
	return nil
}

// edit edits in place: one sed -i over the chosen files (warm: they were
// just read), checked; then (untimed) undone, checked, and made durable,
// so that the next workloads start clean.
func (s *roundRun) edit() error {
	pl := s.pl
	if len(pl.edits) == 0 {
		return nil
	}
	d, err := sedInPlace(s.root, pl.edits, "1s/^/"+editPrefix+"/")
	if err != nil {
		return err
	}
	if err := checkFiles(s.root, pl.edits, editPrefix, pl.perDir); err != nil {
		return fmt.Errorf("after sed -i: %w", err)
	}
	s.rec("edit", d)
	if _, err := sedInPlace(s.root, pl.edits, "1s/^"+editPrefix+"//"); err != nil {
		return fmt.Errorf("undoing the edit: %w", err)
	}
	if err := checkFiles(s.root, pl.edits, "", pl.perDir); err != nil {
		return fmt.Errorf("after undoing the edit: %w", err)
	}
	return settle(s.t, s.root, pl)
}

// seqw is one large file: 1 MiB writes, fsync; a first read (untimed, full
// SHA-256 check), the warm read (timed); then removed, durably.
func (s *roundRun) seqw() error {
	defer os.Remove(s.bigPath()) // also after a failure (a peer's)
	w, ws, err := seqWrite(s.bigPath(), s.pl.big)
	if err != nil {
		return fmt.Errorf("sequential write: %w", err)
	}
	if _, err := seqRead(s.bigPath(), s.pl.big, true); err != nil {
		return fmt.Errorf("first read of the large file: %w", err)
	}
	rd, err := seqRead(s.bigPath(), s.pl.big, false)
	if err != nil {
		return fmt.Errorf("warm read of the large file: %w", err)
	}
	s.rec("seqw", w)
	s.rec("seqws", ws)
	s.rec("seqr", rd)
	if err := os.Remove(s.bigPath()); err != nil {
		return err
	}
	return settle(s.t, s.root, s.pl)
}

func (s *roundRun) create() (err error) {
	syscallSync() // start the create from a clean disk
	if s.created, err = createFiles(s.root, s.pl.newFiles); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	return nil
}

// flush flushes the created files: memfs flushes its whole session on the
// fsync of any file; native makes them durable with sync(2). Peers: none
// (their durable is the unmount).
func (s *roundRun) flush() (err error) {
	switch {
	case isMemfs(s.t):
		newFiles := s.pl.newFiles
		s.flushed, err = memfsFlush(s.root, filepath.Join(s.root, newFiles[len(newFiles)-1].rel), len(newFiles))
		if err != nil {
			return fmt.Errorf("flush: %w", err)
		}
		s.rec("flush", s.flushed)
	case !isFUSE(s.t):
		t0 := time.Now()
		syscallSync()
		s.flushed = time.Since(t0)
		s.rec("flush", s.flushed)
	}
	return nil
}

// durable ends the create workload: its time to durable is the create, the
// flush and the target's own durable step (the unmount, for a FUSE target).
func (s *roundRun) durable() error {
	t1 := time.Now()
	if err := s.t.Durable(); err != nil {
		return err
	}
	if s.created > 0 {
		s.rec("create", s.created)
		s.rec("durable", s.created+s.flushed+time.Since(t1))
	}
	return nil
}

func (s *roundRun) reset() error {
	probs, err := s.t.Reset(s.pl)
	if len(probs) > 0 && !isPeer(s.t) {
		return fmt.Errorf("after the round: %v", probs)
	}
	for _, p := range probs {
		s.res.fail(s.t, s.r+1, p.key, "after the unmount: "+p.msg)
	}
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	syscallSync()
	return nil
}

// reservedEntries counts memfs's own .memfs directory under root and
// everything in it (0 when there is none), for the find check.
func reservedEntries(root string, pl *plan) int {
	n := 0
	// memory/, skills/ and agents/ are in every memfs mount: empty where
	// the tree has nothing there.
	for _, d := range []string{"memory", "skills", "agents"} {
		if fi, err := os.Stat(filepath.Join(root, d)); err == nil && fi.IsDir() &&
			!slices.ContainsFunc(pl.tree, func(f treeFile) bool { return strings.HasPrefix(f.rel, d+"/") }) {
			n++
		}
	}
	// .memfs opens by name but is listed only with --show-memfs: find
	// walks it only then.
	if ents, err := os.ReadDir(root); err != nil || !slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() == ".memfs" }) {
		return n
	}
	filepath.WalkDir(filepath.Join(root, ".memfs"), func(p string, d os.DirEntry, err error) error {
		if err == nil {
			n++
		}
		return nil
	})
	return n
}

// settle makes everything written under root durable (untimed): for memfs
// the fsync of one file, which flushes the session, checked in
// .memfs/status (nothing dirty, no delete pending); then sync(2).
func settle(t Target, root string, pl *plan) error {
	if isMemfs(t) {
		if _, err := memfsFlush(root, filepath.Join(root, pl.tree[0].rel), 0); err != nil {
			return err
		}
	}
	syscallSync()
	return nil
}

// memfsFlush fsyncs file (opened read-only) on a memfs mount and returns
// the time of the fsync. memfs flushes its whole session on it; the status
// must show at least minDirty dirty entries before and none dirty and no
// delete pending after.
func memfsFlush(root, file string, minDirty int) (time.Duration, error) {
	if st, err := memfsStatus(root); err != nil {
		return 0, err
	} else if st.Dirty < minDirty {
		return 0, fmt.Errorf(".memfs/status shows %d dirty entries before the flush, want at least %d", st.Dirty, minDirty)
	}
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	err = f.Sync()
	d := time.Since(t0)
	f.Close()
	if err != nil {
		return 0, fmt.Errorf("fsync %s: %w", file, err)
	}
	st, err := memfsStatus(root)
	if err != nil {
		return 0, err
	}
	if st.Dirty != 0 || st.PendingDeletes != 0 || st.LastFlushResult != "ok" {
		return 0, fmt.Errorf("after fsync: dirty %d, pending_deletes %d, last_flush_result %s; want 0, 0, ok", st.Dirty, st.PendingDeletes, st.LastFlushResult)
	}
	return d, nil
}

// mountPhase measures mount time and memory with o.mountKeys keys: a tree
// of that many files is written once; the dir store and the peers serve it
// in place, the badger store imports it once. Each repetition mounts every
// target once (order rotated) from dropped caches, reads the serving
// process's VmRSS and VmHWM, checks the mount, and unmounts.
func mountPhase(o options, work string, res *results) error {
	base := filepath.Join(work, "mount-phase")
	tree := filepath.Join(base, "tree")
	dirs := max(1, o.mountKeys/100)
	files := genTree(o.mountKeys, dirs, 4, "m%04d", "k%06d.md", false)
	last := files[len(files)-1].rel
	t0 := time.Now()
	if err := writeTreeParallel(tree, files, 4); err != nil {
		return err
	}
	files = nil
	syscallSync()
	logf("mount phase: wrote %d files in %d dirs in %.1fs", o.mountKeys, dirs, time.Since(t0).Seconds())
	targets, err := makeTargets(o, base, tree)
	if err != nil {
		return err
	}
	for _, t := range targets {
		t0 := time.Now()
		if err := t.Setup(tree); err != nil {
			return fmt.Errorf("%s: setup: %w", t.Name(), err)
		}
		logf("mount phase: %s: set up in %.1fs", t.Name(), time.Since(t0).Seconds())
	}
	defer func() {
		for _, t := range targets {
			t.Close()
		}
	}()
	for r := 0; r < o.mountReps; r++ {
		for k := range targets {
			if interrupted.Load() {
				return errInterrupted
			}
			t := targets[(k+r)%len(targets)].(*fuseTarget)
			if err := dropCaches(); err != nil {
				return err
			}
			t0 := time.Now()
			root, err := t.Mount()
			if err != nil {
				return err
			}
			d := time.Since(t0)
			rss, hwm, err := procMem(t.p.pid)
			if err != nil {
				return err
			}
			// check (untimed) that the mount serves the whole tree
			if t.memfs {
				st, err := memfsStatus(root)
				if err != nil {
					return err
				}
				if st.KeysIndexed != o.mountKeys {
					return fmt.Errorf("%s: .memfs/status: keys_indexed %d, want %d", t.Name(), st.KeysIndexed, o.mountKeys)
				}
			}
			if _, err := os.Stat(filepath.Join(root, last)); err != nil {
				return fmt.Errorf("%s: %w", t.Name(), err)
			}
			if err := t.Durable(); err != nil {
				return err
			}
			res.record(t, r+1, "mountN", d.Seconds())
			res.record(t, r+1, "rssN", float64(rss)/(1<<20))
			res.record(t, r+1, "hwmN", float64(hwm)/(1<<20))
			logf("mount phase %d/%d %-17s mount %.3f  VmRSS %.1f MiB  VmHWM %.1f MiB", r+1, o.mountReps, t.Name()+":",
				d.Seconds(), float64(rss)/(1<<20), float64(hwm)/(1<<20))
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

func render(o options, targets []Target, rs *results, treeBytes int64, loadStart string, took time.Duration) string {
	res := rs.vals
	var b strings.Builder
	fmt.Fprintf(&b, "### Whole-filesystem benchmark (`scripts/bench.sh`)\n\n")
	fmt.Fprintf(&b, "%s\n\n", machine(o))
	fmt.Fprintf(&b, "%s files of 1–4 KiB of text (%.1f MiB) in %d directories; %d rounds, targets interleaved "+
		"(order rotated each round). Seconds (rows in MiB: memory): **median** xN (min–max), xN = median / native median. "+
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
			failed := ""
			if n := len(rs.fails[t.Name()][rw.key]); n > 0 {
				failed = fmt.Sprintf(" **failed in %d of %d rounds**", n, o.rounds)
			}
			if len(v) == 0 {
				if failed != "" {
					fmt.Fprintf(&b, "%s |", failed)
				} else {
					b.WriteString(" — |")
				}
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
			cell += fmt.Sprintf(" (%s–%s)", secs(lo), secs(hi)) + failed
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	b.WriteString(bestPeer(o, targets, rs))
	if len(rs.notes) > 0 {
		b.WriteString("\nFailures (outputs found wrong; the values of a failed run are left out, and a peer that failed a workload is not its best peer):\n\n")
		for _, n := range rs.notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	fmt.Fprintf(&b, `
- Each round, per target: drop caches (sync; echo 3 > /proc/sys/vm/drop_caches),
  mount (memfs: a fresh `+"`memfs mount --flush-interval 0 --max-file-size %d`"+`
  process; timed until .memfs/status names it; peers: until the mountpoint
  is mounted), drop caches again, then in this order: cold read, warm read
  (same mount), ls -lR, find, grep, edit, large file, create, flush,
  durable; then (untimed) the created files are checked in the store (or
  backing directory) and removed.
- Reads: one Go loop of os.ReadFile over every file, directory by directory,
  single-threaded (no cat processes). Byte totals are checked.
- ls -lR: the real ls, output to /dev/null. find and grep -r (%q, in 1 file
  of 50): output through a pipe (GNU grep stops at the first match when
  writing to /dev/null); line counts are checked.
- Edit: one `+"`sed -i '1s/^/%s/' FILE...`"+` over %s files spread over all
  directories (GNU sed: temp file in the same directory, rename over the
  file; no fsync); every edited file is then read back and compared, and
  no directory may hold a leftover entry. Untimed: a second sed takes the
  text off again (checked), then the changes are made durable (memfs: fsync
  of one file, which flushes the session; everyone: sync(2)).
- Large file: %s of random bytes written by one process in 1 MiB writes
  (open O_CREAT|O_TRUNC; "write" = open + writes), then fsync and close
  ("+ fsync" = all of it); the size is checked. Then a first read (untimed,
  SHA-256 of the whole content checked) and the warm read (timed: 1 MiB
  reads, byte count and each MiB's stamp checked). Then the file is removed
  and the removal made durable as above (memfs: .memfs/status must show
  nothing dirty and no delete pending).
- Create: %s new files of 1–4 KiB in %d new directories (mkdir, then
  open O_CREAT|O_TRUNC, write, close each; no fsync), one Go loop.
  Flush: memfs = fsync(2) of one of the created files (memfs flushes its
  whole session on any fsync; .memfs/status must show at least %s dirty
  entries before and none after); native = sync(2); peers: not measured.
  Durable: native = that sync(2) (a second one is ~0); memfs = that fsync,
  then SIGTERM and wait for the process to exit (its final flush finds
  nothing left; unmount); peers = umount(2), wait for the process, sync(2).
  "+ durable" is create + flush + that.
`, max(300_000_000, o.bigBytes), grepWord, editPrefix, thousands(o.edits), mib(o.bigBytes), thousands(o.files), o.dirs, thousands(o.files))
	if o.mountKeys > 0 {
		fmt.Fprintf(&b, `- Mount phase, after the rounds: %s files of 1–4 KiB in %s directories,
  written once. The memfs dir store and the peers serve that tree in place,
  the badger store holds a copy (memfs import, once). %d repetitions, targets
  interleaved, each from dropped caches: start the process, time until
  ready (memfs: .memfs/status names the process; peers: mounted), then read
  VmRSS and VmHWM of the serving process from /proc/PID/status (memfs dir
  also starts a small helper process, not counted), check the mount
  (memfs: keys_indexed in .memfs/status; all: stat of the last file), and
  unmount.
`, thousands(o.mountKeys), thousands(max(1, o.mountKeys/100)), o.mountReps)
	}
	if etcdEndpoint != "" {
		b.WriteString(`- memfs etcd: one etcd server (/usr/bin/etcd, one member, loopback) for
  the run, started by the benchmark, a namespace per tree (memfs import, as
  for badger). Dropping the caches does not evict etcd's database: etcd
  maps it, and drop_caches leaves mapped pages. Only the first read of
  data just written (the first round, the first mount repetition) may
  find it on disk; later "cold" figures are memfs cold, etcd warm.
`)
	}
	fmt.Fprintf(&b, "- Run time of the whole benchmark: %s.\n", took.Round(time.Second))
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
func bestPeer(o options, targets []Target, rs *results) string {
	res := rs.vals
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
			if v := res[p][rw.key]; len(v) > 0 && len(rs.fails[p][rw.key]) == 0 {
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
