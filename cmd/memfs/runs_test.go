package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs"
)

// Runs through the kernel (issue 37): processes write, rename and remove
// notes through a mount with MEMFS_RUN in their environment (a file's
// user.memfs.run names the run of a writer that names none), step
// summaries and checkpoints are added; .memfs/runs/RUN/meta.json says
// what each run did. After a kill -9 and a remount, every run's
// projection is what it was (each change was fsynced), and on the store
// it equals a rebuild from the whole event log (memfs runs rebuild
// --check exits 0).
func TestRunsThroughTheMount(t *testing.T) {
	for name, store := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, mnt := store(), t.TempDir()
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, seed))
			p := startMount(t, st, mnt, nil)
			keys := runOps(t, seed, rng, mnt)
			// A file's run: written by a process that names none.
			tagged := filepath.Join(mnt, "memory", "tagged.md")
			if err := writeSync(tagged, []byte("x\n")); err != nil {
				t.Fatal(err)
			}
			if err := unix.Setxattr(tagged, "user.memfs.run", []byte("r-by-file"), 0); err != nil {
				t.Fatal(err)
			}
			if err := writeSync(tagged, []byte("y\n")); err != nil {
				t.Fatal(err)
			}
			keys["r-by-file"] = map[string]bool{"memory/tagged.md": true}

			before := runMetas(t, mnt, p)
			for run, ks := range keys {
				m, ok := before[run]
				if !ok {
					t.Fatalf("seed %d: run %s is not in .memfs/runs/: %v", seed, run, slices.Sorted(maps.Keys(before)))
				}
				for k := range ks {
					if !slices.Contains(m.Keys, k) {
						t.Errorf("seed %d: run %s changed %s; meta.json keys: %v", seed, run, k, m.Keys)
					}
				}
				if m.Events == 0 || m.First.After(m.Last) {
					t.Errorf("seed %d: run %s: %+v", seed, run, m.Meta)
				}
			}
			for run, m := range before {
				if len(m.Checkpoints) == 0 && m.Steps == 0 {
					continue
				}
				if got := strings.Count(mustRun(t, "", "checkpoint", "list", "--mount", mnt, run), "\n"); got != len(m.Checkpoints) || got != m.Steps {
					t.Errorf("seed %d: run %s: %d checkpoints listed, meta.json says %d checkpoints and %d steps", seed, run, got, len(m.Checkpoints), m.Steps)
				}
			}

			// The run's events, paged as the log's: memfs log --run.
			for run, m := range before {
				out := mustRun(t, "", "log", "--mount", mnt, "--run", run, "--json", "--limit", "1000")
				if n := strings.Count(out, "\n"); n != m.Events || strings.Count(out, `"run":"`+run+`"`) != n {
					t.Errorf("seed %d: memfs log --run %s: %d events, meta.json says %d:\n%s", seed, run, n, m.Events, out)
				}
			}
			if out, errOut, err := run(t, "", "runs", "rebuild", "--check", "--mount", mnt); err != nil || out != "" {
				t.Errorf("seed %d: runs rebuild --check through the mount: %v\n%s%s", seed, err, out, errOut)
			}
			p.kill9(t)
			p = startMount(t, st, mnt, nil)
			after := runMetas(t, mnt, p)
			if !equalJSON(before, after) {
				t.Errorf("seed %d: the runs changed across a kill -9 and a remount:\nbefore %v\nafter  %v", seed, before, after)
			}
			if err := p.terminate(t); err != nil {
				t.Fatal(err)
			}
			if out, errOut, err := run(t, "", "runs", "rebuild", "--check", "--store", st); err != nil || out != "" {
				t.Errorf("seed %d: runs rebuild --check: %v\n%s%s", seed, err, out, errOut)
			}
			var shown memfs.Run
			if err := json.Unmarshal([]byte(mustRun(t, "", "runs", "show", "--store", st, "r1")), &shown); err != nil {
				t.Fatal(err)
			}
			if !equalJSON(shown, after["r1"]) {
				t.Errorf("seed %d: memfs runs show on the store:\n%+v\nthrough the mount:\n%+v", seed, shown, after["r1"])
			}
		})
	}
}

// runOps makes 40 random changes of notes through the mount at mnt, each
// by a shell whose environment names its run, and step summaries with
// checkpoints; it returns the keys each run changed.
func runOps(t *testing.T, seed uint64, rng *rand.Rand, mnt string) map[string]map[string]bool {
	t.Helper()
	mem := filepath.Join(mnt, "memory")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	// The writer: a shell whose environment names the run.
	sh := func(run, script string, args ...string) {
		t.Helper()
		cmd := exec.Command("sh", append([]string{"-c", script, "sh"}, args...)...)
		cmd.Env = append(os.Environ(), "MEMFS_RUN="+run)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("seed %d: MEMFS_RUN=%s %s %v: %v\n%s", seed, run, script, args, err, out)
		}
	}
	keys := map[string]map[string]bool{} // run -> keys it changed
	note := func(run, k string) {
		if keys[run] == nil {
			keys[run] = map[string]bool{}
		}
		keys[run]["memory/"+k] = true
	}
	exists := map[string]bool{}
	for i := range 40 {
		run := []string{"r1", "r2", "other-run.3"}[rng.IntN(3)]
		k := fmt.Sprintf("n%d.md", rng.IntN(6))
		to := fmt.Sprintf("n%d.md", rng.IntN(6))
		switch op := rng.IntN(6); {
		case op <= 2 || !exists[k]:
			sh(run, `printf '%s\n' "$2" > "$1" && sync "$1"`, filepath.Join(mem, k), fmt.Sprintf("op %d", i))
			exists[k] = true
			note(run, k)
		case op == 3 && k != to:
			sh(run, `mv "$1" "$2" && sync "$3"`, filepath.Join(mem, k), filepath.Join(mem, to), mem)
			delete(exists, k)
			exists[to] = true
			note(run, k)
			note(run, to)
		case op == 4:
			sh(run, `rm "$1" && sync "$2"`, filepath.Join(mem, k), mem)
			delete(exists, k)
			note(run, k)
		default:
			mustRun(t, "", "summary", "add", "--mount", mnt, "--run", run, "--step", fmt.Sprintf("s%d", i), "step", fmt.Sprint(i))
			mustRun(t, "", "checkpoint", "save", "--mount", mnt, run, fmt.Sprintf("s%d", i))
		}
	}
	return keys
}

// runMetas reads every run's meta.json through the mount at mnt.
func runMetas(t *testing.T, mnt string, p *memfsProc) map[string]memfs.Run {
	t.Helper()
	dir := filepath.Join(mnt, ".memfs", "runs")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v\nthe mount's log:\n%s", err, p.log)
	}
	out := map[string]memfs.Run{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), memfs.RunMetaFile))
		if err != nil {
			t.Fatal(err)
		}
		var r memfs.Run
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v\n%s", e.Name(), err, b)
		}
		out[e.Name()] = r
	}
	return out
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
