package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/internal/syncbuf"
)

// The tests of a shared store: two memfs processes mount one namespace on
// a real etcd server (internal/etcdtest starts it, and kills it by PID).

// sharedEnv is what both mounts of a test share: a state directory of
// their own (their journals) and a short etcd timeout, so that an outage
// shows as EIO within a second.
func sharedEnv(t *testing.T) []string {
	return []string{"XDG_STATE_HOME=" + t.TempDir(), "MEMFS_ETCD_TIMEOUT=1s"}
}

// etcdURL is the --store of namespace ns on the servers at endpoints.
func etcdStoreURL(ns string, endpoints ...string) string {
	hosts := make([]string, len(endpoints))
	for i, e := range endpoints {
		hosts[i] = strings.TrimPrefix(e, "http://")
	}
	return "etcd://" + strings.Join(hosts, ",") + "/" + ns
}

// midRun is how many files a writer of the kill tests writes before the
// kill, and twice as many after it: counted, not timed, so that a loaded
// machine writes as many as an idle one.
const midRun = 100

// sharedEtcdStore is the --store of a namespace of the test's own on the
// package's shared etcd server (for a test that neither stops nor kills
// it; one that does starts its own with etcdtest.Start).
func sharedEtcdStore(t *testing.T) string {
	t.Helper()
	endpoint, ns := etcdtest.Shared(t)
	return etcdStoreURL(ns, endpoint)
}

// twoMounts starts mounts A and B of store, with the same extra flags.
func twoMounts(t *testing.T, store string, env []string, extra ...string) (a, b *memfsProc) {
	root := t.TempDir()
	a = startMount(t, store, filepath.Join(root, "a"), env, append([]string{"--agent", "alice"}, extra...)...)
	b = startMount(t, store, filepath.Join(root, "b"), env, append([]string{"--agent", "bob"}, extra...)...)
	return a, b
}

// writeSync writes path and fsyncs it: when it returns nil, the store has
// the value.
func writeSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// (a) A write on A is readable on B, and an inotify watcher on B hears it.
func TestSharedVisibility(t *testing.T) {
	a, b := twoMounts(t, sharedEtcdStore(t), sharedEnv(t))

	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(filepath.Join(b.mnt, "memory")); err != nil {
		t.Fatal(err)
	}
	heard := make(chan string, 100)
	go func() {
		for ev := range w.Events {
			heard <- filepath.Base(ev.Name)
		}
	}()
	for i := range 5 {
		name := fmt.Sprintf("note%d.md", i)
		want := fmt.Sprintf("written on A, round %d\n", i)
		if err := writeSync(filepath.Join(a.mnt, "memory", name), []byte(want)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "B reads "+name, 10*time.Second, func() bool {
			got, err := os.ReadFile(filepath.Join(b.mnt, "memory", name))
			return err == nil && string(got) == want
		})
		deadline := time.After(10 * time.Second)
	hear:
		for {
			select {
			case n := <-heard:
				if n == name {
					break hear
				}
			case <-deadline:
				t.Fatalf("the watcher on B heard nothing of %s\nA:\n%s\nB:\n%s", name, a.log, b.log)
			}
		}
	}
	status, err := os.ReadFile(filepath.Join(b.mnt, ".memfs", "status"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(status), "peers: 2\n") || !strings.Contains(string(status), "alice@") || !strings.Contains(string(status), "bob@") {
		t.Errorf(".memfs/status of B does not list both mounts:\n%s", status)
	}
}

// appendLines appends n lines "tag-i" to path, one write each, and fsyncs
// every syncEvery lines and after the last. A line is acknowledged once an
// fsync after its write returned 0: acked is how many lines were (the
// first acked). An fsync that fails with EIO (the store timed out: on a
// loaded machine etcd may take longer than the mounts' 1 s) acknowledges
// nothing, and the writer goes on, as a program that retries does;
// syncErrs are those failures. err is the first failure of another kind,
// which ends the writer.
func appendLines(path, tag string, n, syncEvery int) (acked int, syncErrs []error, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	for i := range n {
		if _, err := fmt.Fprintf(f, "{\"w\":%q,\"i\":%d}\n", tag, i); err != nil {
			return acked, syncErrs, fmt.Errorf("%s line %d: %w", tag, i, err)
		}
		if (i+1)%syncEvery != 0 && i+1 != n {
			continue
		}
		switch err := f.Sync(); {
		case err == nil:
			acked = i + 1
		case errors.Is(err, syscall.EIO):
			syncErrs = append(syncErrs, fmt.Errorf("%s fsync after line %d: %w", tag, i, err))
		default:
			return acked, syncErrs, fmt.Errorf("%s fsync after line %d: %w", tag, i, err)
		}
	}
	return acked, syncErrs, nil
}

// storeLines counts the lines of every file under dir/memory whose name
// starts with prefix (the file and its conflict copies), read through a
// fresh mount.
func storeLines(t *testing.T, dir, prefix string) map[string]int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "memory"))
	if err != nil {
		t.Fatal(err)
	}
	count := make(map[string]int)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "memory", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			count[sc.Text()]++
		}
	}
	return count
}

// (b) 4 writers on each mount append 1,000 lines each to one JSONL file,
// with fsyncs: after both unmount, every line is there, once (merge), or in
// the file or its conflict copies (keep-both). An fsync may fail under load
// (EIO: the mounts' etcd timeout is 1 s); the writer goes on, and its lines
// are acknowledged by a later fsync, or by the clean unmount.
func TestSharedConcurrentAppends(t *testing.T) {
	lines := 1000
	if raceDetector {
		lines = 250 // the race detector slows every FUSE request tenfold
	}
	for _, policy := range []string{"merge", "keep-both"} {
		t.Run(policy, func(t *testing.T) {
			store := sharedEtcdStore(t)
			env := sharedEnv(t)
			a, b := twoMounts(t, store, env, "--on-conflict", policy)
			var wg sync.WaitGroup
			var mu sync.Mutex
			acked := make(map[string]int) // per writer: its lines acknowledged
			var syncErrs []error
			for _, m := range []*memfsProc{a, b} {
				for w := range 4 {
					tag := fmt.Sprintf("%s%d", filepath.Base(m.mnt), w)
					wg.Go(func() {
						n, serrs, err := appendLines(filepath.Join(m.mnt, "memory", "log.jsonl"), tag, lines, 50)
						if err != nil {
							t.Error(err)
						}
						mu.Lock()
						acked[tag] = n
						syncErrs = append(syncErrs, serrs...)
						mu.Unlock()
					})
				}
			}
			wg.Wait()
			if len(syncErrs) > 0 {
				// Not a failure: an fsync that got EIO acknowledged
				// nothing, and a later one (or the unmount) saves the
				// lines.
				t.Logf("%d fsyncs failed with EIO, e.g. %v", len(syncErrs), syncErrs[0])
			}
			for _, m := range []*memfsProc{a, b} {
				if err := m.terminate(t); err != nil {
					t.Fatalf("unmount %s: %v\n%s", m.mnt, err, m.log)
				}
			}
			c := startMount(t, store, filepath.Join(t.TempDir(), "c"), env)
			count := storeLines(t, c.mnt, "log")
			// Every line was written; those whose fsync failed are
			// acknowledged by the clean unmount (memfs exits 0 only
			// when its last flush saved everything).
			var missing, unacked, twice []string
			for _, m := range []string{"a", "b"} {
				for w := range 4 {
					tag := fmt.Sprintf("%s%d", m, w)
					for i := range lines {
						l := fmt.Sprintf("{\"w\":\"%s\",\"i\":%d}", tag, i)
						switch {
						case count[l] == 0 && i < acked[tag]:
							missing = append(missing, l)
						case count[l] == 0:
							unacked = append(unacked, l)
						case count[l] > 1 && policy == "merge":
							twice = append(twice, l)
						}
					}
				}
			}
			if len(unacked) > 0 {
				t.Errorf("%d of %d lines whose fsync failed lost after a clean unmount, e.g. %v", len(unacked), 8*lines, unacked[:min(5, len(unacked))])
			}
			if len(missing) > 0 {
				t.Errorf("%d of %d acknowledged lines lost, e.g. %v", len(missing), 8*lines, missing[:min(5, len(missing))])
			}
			if len(twice) > 0 {
				t.Errorf("%d lines merged twice, e.g. %v", len(twice), twice[:min(5, len(twice))])
			}
			copies := conflictCopies(t, c.mnt, "log")
			if policy == "merge" && len(copies) > 0 {
				t.Errorf("merge left conflict copies: %v", copies)
			}
			// The writers did meet: the conflicts are in the event log.
			events, err := os.ReadFile(filepath.Join(c.mnt, ".memfs", "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			n := strings.Count(string(events), `"op":"conflict"`)
			if n == 0 {
				t.Errorf("no conflict in the event log: the two mounts' appends never met")
			}
			t.Logf("%s: %d conflicts, %d conflict copies", policy, n, len(copies))
		})
	}
}

// conflictCopies lists the conflict copies of memory/PREFIX*.
func conflictCopies(t *testing.T, mnt, prefix string) []string {
	ents, err := os.ReadDir(filepath.Join(mnt, "memory"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && strings.Contains(e.Name(), ".conflict-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// (c) Both mounts edit one Markdown note in different sections: merged.
func TestSharedMarkdownSections(t *testing.T) {
	store := sharedEtcdStore(t)
	env := sharedEnv(t)
	a, b := twoMounts(t, store, env, "--on-conflict", "merge")
	base := "# Plan\n\n## Goals\n\nship it\n\n## Risks\n\nnone known\n\n## Notes\n\nnothing yet\n"
	note := "memory/plan.md"
	if err := writeSync(filepath.Join(a.mnt, note), []byte(base)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B reads the note", 10*time.Second, func() bool {
		got, err := os.ReadFile(filepath.Join(b.mnt, note))
		return err == nil && string(got) == base
	})
	fromA := strings.Replace(base, "ship it\n", "ship it by Friday\n", 1)
	fromB := strings.Replace(base, "nothing yet\n", "bob was here\n", 1)
	// Both write before either's flush reaches the other: B's flush meets
	// A's version and merges.
	for _, w := range []struct {
		m    *memfsProc
		text string
	}{{a, fromA}, {b, fromB}} {
		if err := os.WriteFile(filepath.Join(w.m.mnt, note), []byte(w.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsyncPath(t, filepath.Join(a.mnt, note))
	fsyncPath(t, filepath.Join(b.mnt, note))
	want := strings.Replace(fromA, "nothing yet\n", "bob was here\n", 1)
	for _, m := range []*memfsProc{a, b} {
		waitFor(t, m.mnt+" shows the merged note", 10*time.Second, func() bool {
			got, err := os.ReadFile(filepath.Join(m.mnt, note))
			return err == nil && string(got) == want
		})
	}
	if copies := conflictCopies(t, a.mnt, "plan"); len(copies) > 0 {
		t.Errorf("a clean merge left conflict copies: %v", copies)
	}
	events, err := os.ReadFile(filepath.Join(b.mnt, ".memfs", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(events), `"conflict"`) {
		t.Errorf("the merge is not in the event log:\n%s", events)
	}
}

// writeUntil writes memory/TAG-i.md on mnt until stop closes or a write
// fails, counting in n the writes acknowledged so far, and returns the
// names whose close succeeded (acknowledged).
func writeUntil(mnt, tag string, stop <-chan struct{}, n *atomic.Int64) (acked []string, err error) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return acked, nil
		default:
		}
		name := fmt.Sprintf("%s-%04d.md", tag, i)
		if err := os.WriteFile(filepath.Join(mnt, "memory", name), []byte(name+"\n"), 0o644); err != nil {
			return acked, err
		}
		acked = append(acked, name)
		n.Add(1)
	}
}

// checkAcked fails for every acknowledged name not on mnt with its content.
func checkAcked(t *testing.T, mnt string, names []string) {
	t.Helper()
	var lost []string
	for _, n := range names {
		got, err := os.ReadFile(filepath.Join(mnt, "memory", n))
		if err != nil || string(got) != n+"\n" {
			lost = append(lost, fmt.Sprintf("%s (%q, %v)", n, got, err))
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d acknowledged files lost, e.g. %v", len(lost), len(names), lost[:min(5, len(lost))])
	}
}

// writerMain writes DIR/TAG-i.md, one file after another, and prints each
// name once its close succeeded, until a write fails or it is killed.
func writerMain(dir, tag string) {
	for i := 0; ; i++ {
		name := fmt.Sprintf("%s-%04d.md", tag, i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return
		}
		fmt.Println(name)
	}
}

// startWriter runs writerMain in a subprocess on dir: a process that may
// be left waiting on a killed mount is never the test's own (a request
// sent to a dead daemon can wait uninterruptibly). It returns the
// process and its output (the acknowledged names).
func startWriter(t *testing.T, dir, tag string) (*exec.Cmd, *syncbuf.Buffer) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MEMFS_TEST_WRITER="+dir, "MEMFS_TEST_WRITER_TAG="+tag)
	out := &syncbuf.Buffer{}
	cmd.Stdout = out
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, out
}

// (d) kill -9 of A mid-run, restart: nothing A closed is lost.
func TestSharedKillNine(t *testing.T) {
	store := sharedEtcdStore(t)
	env := sharedEnv(t)
	a, b := twoMounts(t, store, env)
	wa, outA := startWriter(t, filepath.Join(a.mnt, "memory"), "a")
	stop := make(chan struct{})
	resB := make(chan []string, 1)
	var nB atomic.Int64
	go func() {
		acked, err := writeUntil(b.mnt, "b", stop, &nB)
		if err != nil {
			t.Errorf("B's writer: %v", err)
		}
		resB <- acked
	}()
	// Mid-run: both writers under way.
	waitFor(t, "both writers to have written "+fmt.Sprint(midRun)+" files", 60*time.Second, func() bool {
		return nB.Load() >= midRun && strings.Count(outA.String(), "\n") >= midRun
	})
	a.kill9(t) // A's writer fails from here on (ENOTCONN) and exits
	exited := make(chan error, 1)
	go func() { exited <- wa.Wait() }()
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		wa.Process.Kill()
		t.Fatal("A's writer still running 30 s after A was killed")
	}
	close(stop)
	ackedB := <-resB
	ackedA := strings.Fields(outA.String())
	if len(ackedA) == 0 || len(ackedB) == 0 {
		t.Fatalf("nothing written before the kill (A %d, B %d)", len(ackedA), len(ackedB))
	}
	// A again, on its mountpoint (so its journal): it replays what it had
	// closed and flushes it.
	a2 := startMount(t, store, a.mnt, env, "--agent", "alice")
	fsyncPath(t, filepath.Join(a2.mnt, "memory"))
	all := append(ackedA, ackedB...)
	// B follows the namespace's watch: every file A closed reaches it, in
	// no particular order.
	waitFor(t, "B sees every file A closed", 30*time.Second, func() bool {
		for _, n := range ackedA {
			if _, err := os.Stat(filepath.Join(b.mnt, "memory", n)); err != nil {
				return false
			}
		}
		return true
	})
	checkAcked(t, b.mnt, all)
	if err := b.terminate(t); err != nil {
		t.Fatal(err)
	}
	if err := a2.terminate(t); err != nil {
		t.Fatal(err)
	}
	c := startMount(t, store, filepath.Join(t.TempDir(), "c"), env)
	checkAcked(t, c.mnt, all)
}

// (e) etcd stopped for 10 s mid-run and restarted: nothing lost; fsync
// fails with EIO while it is down; what was read keeps reading.
func TestSharedEtcdOutage(t *testing.T) {
	srv := etcdtest.Start(t)
	store := etcdStoreURL("outage", srv.Endpoint())
	env := sharedEnv(t)
	a, b := twoMounts(t, store, env)
	if err := writeSync(filepath.Join(a.mnt, "memory", "before.md"), []byte("before\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B reads before.md", 10*time.Second, func() bool {
		got, err := os.ReadFile(filepath.Join(b.mnt, "memory", "before.md"))
		return err == nil && string(got) == "before\n"
	})
	srv.Stop()
	down := time.Now()
	var written []string
	sawEIO := false
	for time.Since(down) < 10*time.Second {
		name := fmt.Sprintf("during-%03d.md", len(written))
		f, err := os.Create(filepath.Join(a.mnt, "memory", name))
		if err != nil {
			t.Fatalf("create during the outage: %v", err)
		}
		if _, err := f.WriteString(name + "\n"); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); errors.Is(err, syscall.EIO) {
			sawEIO = true
		} else if err != nil {
			t.Errorf("fsync during the outage: %v, want EIO", err)
		} else {
			t.Errorf("fsync during the outage succeeded")
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		written = append(written, name)
		// What B had read stays readable.
		if got, err := os.ReadFile(filepath.Join(b.mnt, "memory", "before.md")); err != nil || string(got) != "before\n" {
			t.Errorf("B's loaded file during the outage: %q, %v", got, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !sawEIO {
		t.Error("no fsync returned EIO while etcd was down")
	}
	srv.Restart()
	waitFor(t, "fsync succeeds again", 30*time.Second, func() bool {
		f, err := os.Open(filepath.Join(a.mnt, "memory"))
		if err != nil {
			return false
		}
		defer f.Close()
		return f.Sync() == nil
	})
	for _, m := range []*memfsProc{a, b} {
		if err := m.terminate(t); err != nil {
			t.Fatalf("%v\n%s", err, m.log)
		}
	}
	c := startMount(t, store, filepath.Join(t.TempDir(), "c"), env)
	checkAcked(t, c.mnt, written)
	if got, err := os.ReadFile(filepath.Join(c.mnt, "memory", "before.md")); err != nil || string(got) != "before\n" {
		t.Errorf("before.md: %q, %v", got, err)
	}
}

// (f) A three-member etcd cluster with one member killed mid-run: nothing
// lost.
func TestSharedClusterMemberKilled(t *testing.T) {
	cl := etcdtest.StartCluster(t, 3)
	store := etcdStoreURL("cluster", cl.Endpoints()...)
	env := sharedEnv(t)
	a, b := twoMounts(t, store, env)
	stop := make(chan struct{})
	type result struct {
		acked []string
		err   error
	}
	res := make(chan result, 2)
	var n [2]atomic.Int64
	for i, m := range []*memfsProc{a, b} {
		go func() {
			acked, err := writeUntil(m.mnt, filepath.Base(m.mnt), stop, &n[i])
			res <- result{acked, err}
		}()
	}
	wrote := func(least0, least1 int64) func() bool {
		return func() bool { return n[0].Load() >= least0 && n[1].Load() >= least1 }
	}
	waitFor(t, "both writers under way", 60*time.Second, wrote(midRun, midRun))
	cl.Kill(0)
	// And going on after the kill.
	waitFor(t, "both writers going on after the kill", 60*time.Second, wrote(n[0].Load()+2*midRun, n[1].Load()+2*midRun))
	close(stop)
	var all []string
	for range 2 {
		r := <-res
		if r.err != nil {
			t.Errorf("writer: %v", r.err)
		}
		all = append(all, r.acked...)
	}
	sort.Strings(all)
	for _, m := range []*memfsProc{a, b} {
		if err := m.terminate(t); err != nil {
			t.Fatalf("%v\n%s", err, m.log)
		}
	}
	c := startMount(t, store, filepath.Join(t.TempDir(), "c"), env)
	checkAcked(t, c.mnt, all)
}
