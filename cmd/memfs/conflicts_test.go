package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Two mounts of one etcd namespace, keep-both: memfs log --op conflict
// shows the conflict, memfs conflicts lists it (the copy holds the losing
// writer's version: mine), and memfs conflicts resolve --keep mine puts
// that version back under the key and removes the copy, on both mounts.
func TestConflictsCommand(t *testing.T) {
	store := sharedEtcdStore(t)
	a, b := twoMounts(t, store, sharedEnv(t))
	const key = "memory/plan.md"
	if err := writeSync(filepath.Join(a.mnt, key), []byte("base\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B reads the plan", 10*time.Second, func() bool {
		got, err := os.ReadFile(filepath.Join(b.mnt, key))
		return err == nil && string(got) == "base\n"
	})
	fd, err := os.OpenFile(filepath.Join(b.mnt, key), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fd.WriteString("bob's plan\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeSync(filepath.Join(a.mnt, key), []byte("alice's plan\n")); err != nil {
		t.Fatal(err)
	}
	if err := fd.Sync(); err != nil {
		t.Fatal(err)
	}
	fd.Close()
	if out := mustRun(t, "", "log", "--store", store, "--op", "conflict"); !strings.Contains(out, "conflict") || !strings.Contains(out, "kept-both") {
		t.Errorf("memfs log --op conflict:\n%s\nwant the conflict, kept-both", out)
	}
	out := mustRun(t, "", "conflicts", "--store", store)
	line := regexp.MustCompile(`(?m)^memory/plan\.md\t(memory/plan\.conflict-bob-[^\t]+\.md)\t\S+\tcopy holds mine, agent bob, kept-both at seq \d+$`)
	m := line.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("memfs conflicts:\n%s\nwant the plan's copy by bob, holding mine", out)
	}
	if out := mustRun(t, "", "conflicts", "resolve", "--store", store, "--keep", "mine", key); !strings.Contains(out, "kept mine") {
		t.Errorf("memfs conflicts resolve: %q", out)
	}
	for _, mnt := range []string{a.mnt, b.mnt} {
		waitFor(t, mnt+" shows bob's plan under the key, and no copy", 10*time.Second, func() bool {
			got, err := os.ReadFile(filepath.Join(mnt, key))
			_, cerr := os.Stat(filepath.Join(mnt, m[1]))
			return err == nil && string(got) == "bob's plan\n" && os.IsNotExist(cerr)
		})
	}
	if out := mustRun(t, "", "conflicts", "--store", store); out != "" {
		t.Errorf("memfs conflicts after the resolution:\n%s\nwant nothing", out)
	}
	if _, _, err := run(t, "", "conflicts", "resolve", "--store", store, "--keep", "mine", key); err == nil || !strings.Contains(err.Error(), "no open conflict") {
		t.Errorf("resolve with no conflict: %v, want no open conflict", err)
	}
}

// Under --on-conflict merge, sed -i (a temp file renamed over the key) on
// one mount while the other saves an edit of another line merges both,
// through the kernel, on both mounts: no conflict copy.
func TestSedInPlaceMergesOnEtcd(t *testing.T) {
	if _, err := exec.LookPath("sed"); err != nil {
		t.Fatalf("this test runs sed -i: %v", err)
	}
	a, b := twoMounts(t, sharedEtcdStore(t), sharedEnv(t), "--on-conflict", "merge")
	const key = "memory/plan.md"
	if err := writeSync(filepath.Join(a.mnt, key), []byte("one\ntwo\nthree\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B reads the plan", 10*time.Second, func() bool {
		got, err := os.ReadFile(filepath.Join(b.mnt, key))
		return err == nil && string(got) == "one\ntwo\nthree\n"
	})
	// B's sed -i is not saved yet (sed does not fsync) when alice saves.
	if out, err := exec.Command("sed", "-i", "s/three/three, bob/", filepath.Join(b.mnt, key)).CombinedOutput(); err != nil {
		t.Fatalf("sed -i: %v\n%s", err, out)
	}
	if err := writeSync(filepath.Join(a.mnt, key), []byte("one, alice\ntwo\nthree\n")); err != nil {
		t.Fatal(err)
	}
	fd, err := os.Open(filepath.Join(b.mnt, key))
	if err != nil {
		t.Fatal(err)
	}
	if err := fd.Sync(); err != nil { // flushes B: the save meets alice's
		t.Fatal(err)
	}
	fd.Close()
	const merged = "one, alice\ntwo\nthree, bob\n"
	for _, p := range []*memfsProc{a, b} {
		waitFor(t, p.mnt+" shows the merge", 10*time.Second, func() bool {
			got, err := os.ReadFile(filepath.Join(p.mnt, key))
			return err == nil && string(got) == merged
		})
		ents, _ := os.ReadDir(filepath.Join(p.mnt, "memory"))
		for _, e := range ents {
			if strings.Contains(e.Name(), ".conflict-") {
				t.Errorf("%s: a conflict copy %s; want the merge alone\n%s", p.mnt, e.Name(), b.log)
			}
		}
	}
}

// Under keep-both, the mount whose flush met another mount's version
// shows the outcome at once, though the kernel keeps names and
// attributes long (the default): theirs under the name, with its size,
// and its own version listed beside as a copy. Both moves are made
// behind the kernel, which memfs tells.
func TestKeepBothSeenAtOnce(t *testing.T) {
	a, b := twoMounts(t, sharedEtcdStore(t), sharedEnv(t))
	const key = "memory/plan.md"
	inA, inB := filepath.Join(a.mnt, key), filepath.Join(b.mnt, key)
	if err := writeSync(inA, []byte("base\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B reads the plan", 10*time.Second, func() bool { return readBack(inB) == "base\n" })
	os.ReadDir(filepath.Join(b.mnt, "memory")) // the kernel keeps B's listing, and the name's attributes
	os.Stat(inB)
	os.WriteFile(inB, []byte("bob's plan\n"), 0o644) // not saved yet
	if err := writeSync(inA, []byte("alice's longer plan\n")); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, inB) // B's flush meets alice's version (saved: fsynced): hers takes the name
	var copy string
	waitFor(t, "B shows the outcome", 5*time.Second, func() bool {
		fi, err := os.Stat(inB)
		if err != nil || fi.Size() != int64(len("alice's longer plan\n")) || readBack(inB) != "alice's longer plan\n" {
			return false
		}
		ents, _ := os.ReadDir(filepath.Join(b.mnt, "memory"))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "plan.conflict-") {
				copy = e.Name()
				return true
			}
		}
		return false
	})
	if got := readBack(filepath.Join(b.mnt, "memory", copy)); got != "bob's plan\n" {
		t.Errorf("B's copy %s holds %q, want B's version", copy, got)
	}
}
