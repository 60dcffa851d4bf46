package main

import (
	"fmt"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/syncbuf"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// visibilityBound is how long a test waits for another mount's change to
// be enforced: generous, as a promise test on a loaded machine (the
// issue's target, 1 s at p99, is measured and reported, not asserted).
const visibilityBound = 5 * time.Second

// unreadableAfter runs, as uid 65534 through setpriv, a loop that reads
// path on the mount until the read fails, and returns a function that
// waits for that failure and says how long it took after the start it is
// given. The loop reads the file once before it says it is ready: a file
// it cannot read at the start fails the test.
func unreadableAfter(t *testing.T, nobody caller, path string) (ready func(), wait func(start time.Time) (time.Duration, string)) {
	t.Helper()
	script := `cat "$1" >/dev/null || exit 9; echo ready; while cat "$1" >/dev/null 2>&1; do :; done; cat "$1" 2>&1 >/dev/null; exit 0`
	cmd := nobody.command("/", "sh", "-c", script, "sh", path)
	out := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}) // closed when the reader has exited, at end
	var end time.Time
	var waitErr error
	go func() { waitErr = cmd.Wait(); end = time.Now(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill() // sh itself: setpriv execs it
			<-done
		}
	})
	ready = func() {
		t.Helper()
		started := await.Cond(visibilityBound, 2*time.Millisecond, func() bool {
			if strings.Contains(out.String(), "ready") {
				return true
			}
			select {
			case <-done:
				t.Fatalf("uid 65534 cannot read %s before the change: %v\n%s", path, waitErr, out)
			default:
			}
			return false
		})
		if !started {
			t.Fatalf("the reader of %s as uid 65534 did not start", path)
		}
	}
	wait = func(start time.Time) (time.Duration, string) {
		t.Helper()
		select {
		case <-done:
			if waitErr != nil {
				t.Fatalf("reader of %s: %v\n%s", path, waitErr, out)
			}
			return end.Sub(start), strings.TrimPrefix(out.String(), "ready\n")
		case <-time.After(visibilityBound):
			t.Fatalf("uid 65534 still reads %s through the other mount %v after the change was fsynced", path, visibilityBound)
			return 0, ""
		}
	}
	return ready, wait
}

// percentile is the p-th percentile (0..100) of ds, nearest rank.
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(i, 0)]
}

// With --allow-other, a note A makes private (chmod 600, or a move into a
// 0700 directory), fsynced, is closed to an unprivileged reader of mount B
// of the same etcd namespace within the visibility bound (issue 26): cat
// gets EACCES, and neither B's search (.memfs/search/, memfs search
// --mount B) nor its context packs (.memfs/context.md, .memfs/context/)
// show the note to that reader any more. Each trial times the change from
// the return of A's fsync until uid 65534's read on B fails; the test logs
// p50 and p99 (BENCHMARKS.md).
func TestAllowOtherPrivateOnOneMountIsPrivateOnTheOther(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setpriv"); err != nil {
		if _, err := os.Stat("/bin/setpriv"); err != nil {
			t.Fatalf("this test runs commands as another user with setpriv (util-linux): %v", err)
		}
	}
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root: it mounts with --allow-other and reads as uid %d", otherUID)
	}
	store := sharedEtcdStore(t)
	env := sharedEnv(t)
	a := startMount(t, store, sharedDir(t), env, "--agent", "alice", "--allow-other")
	b := startMount(t, store, sharedDir(t), env, "--agent", "bob", "--allow-other")
	bin := sharedBinary(t)
	nobody := caller{name: "uid 65534", env: []string{"MEMFS_TEST_MAIN=1", "HOME=/"},
		priv: []string{fmt.Sprintf("--reuid=%d", otherUID), fmt.Sprintf("--regid=%d", otherUID), "--clear-groups"}}
	am := func(k string) string { return filepath.Join(a.mnt, "memory", k) }
	bm := func(k string) string { return filepath.Join(b.mnt, "memory", k) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	fsync := func(p string) {
		t.Helper()
		f, err := os.Open(p)
		must(err)
		must(f.Sync())
		must(f.Close())
	}
	must(os.Mkdir(am("pub"), 0o755))
	must(os.Mkdir(am("vault"), 0o700))
	must(os.Chmod(am("vault"), 0o700))
	fsync(am("vault"))

	// What uid 65534 finds of word on B: search files, memfs search, packs.
	probes := func(word string) map[string][]string {
		return map[string][]string{
			"cat .memfs/search/" + word:  {"cat", ".memfs/search/" + word},
			"memfs search --mount B":     {bin, "search", "--mount", b.mnt, word},
			"cat .memfs/context.md":      {"cat", ".memfs/context.md"},
			"cat .memfs/context/" + word: {"cat", ".memfs/context/" + word},
		}
	}
	// shows says which probes show the note (by word, or its name)
	// to uid 65534; a pack's "## Search: WORD" heading repeats the question.
	shows := func(word, name string) []string {
		var got []string
		for what, argv := range probes(word) {
			out, err := nobody.run(t, b.mnt, argv...)
			if err != nil {
				t.Errorf("%s as uid 65534: %v\n%s", what, err, out)
			}
			out = strings.ReplaceAll(out, "## Search: "+word, "")
			if strings.Contains(out, word) || strings.Contains(out, name) {
				got = append(got, what)
			}
		}
		slices.Sort(got)
		return got
	}

	const trials = 20
	var all, chmods, moves []time.Duration
	for i := range trials {
		move := i%2 == 1
		word := fmt.Sprintf("kinkajou%02d", i)
		name := fmt.Sprintf("note-%02d.md", i)
		must(writeSync(am("pub/"+name), []byte("a note about "+word+"\n")))
		waitFor(t, "B has "+name, visibilityBound, func() bool {
			return readBack(bm("pub/"+name)) != "" && !strings.HasPrefix(readBack(bm("pub/"+name)), "<")
		})
		// The first trial of each kind checks that search and packs show
		// the note before, as they must not after (the test can fail).
		check := i < 2
		if check {
			want := len(probes(word))
			waitFor(t, "search and packs on B show "+name+" to uid 65534", visibilityBound, func() bool { return len(shows(word, name)) == want })
		}
		ready, wait := unreadableAfter(t, nobody, bm("pub/"+name))
		ready()
		if move {
			must(os.Rename(am("pub/"+name), am("vault/"+name)))
			fsync(am("vault/" + name))
		} else {
			must(os.Chmod(am("pub/"+name), 0o600))
			fsync(am("pub/" + name))
		}
		start := time.Now()
		d, why := wait(start)
		all = append(all, d)
		// The file itself, by its new name for a moved one: EACCES.
		at := bm("pub/" + name)
		if move {
			at = bm("vault/" + name)
			waitFor(t, name+" under vault/ on B", visibilityBound, func() bool { _, err := os.Lstat(at); return err == nil })
			moves = append(moves, d)
		} else {
			chmods = append(chmods, d)
			if !strings.Contains(why, "Permission denied") {
				t.Errorf("trial %d: uid 65534's read of %s on B failed with %q, want Permission denied (EACCES)", i, name, why)
			}
		}
		if out, err := nobody.run(t, "/", "cat", at); err == nil || !strings.Contains(out, "Permission denied") {
			t.Errorf("trial %d: cat %s as uid 65534 on B: %v, %q; want Permission denied", i, at, err, out)
		}
		if check {
			var got []string
			if !await.Cond(visibilityBound, 20*time.Millisecond, func() bool { got = shows(word, name); return len(got) == 0 }) {
				t.Errorf("trial %d (%s): after A made it private, B still shows it to uid 65534 in %v", i, name, got)
			}
		}
	}
	t.Logf("visibility of a chmod 600 or a move into a 0700 directory on the other mount, %d trials: p50 %v, p99 %v (chmod: p50 %v, max %v; move: p50 %v, max %v)",
		trials, percentile(all, 50), percentile(all, 99), percentile(chmods, 50), percentile(chmods, 100), percentile(moves, 50), percentile(moves, 100))
}
