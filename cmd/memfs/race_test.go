package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExternalEditJustBeforeAFlush: another program edits a dir store's
// file that memfs holds dirty, and memfs flushes at once (0-80 ms later:
// inside the watcher's debounce, or not). Neither version may be lost:
// memfs's takes the key, the other program's is kept in a conflict copy.
// (21 of 40 such races overwrote the external edit silently.) One copy
// per conflict: a watcher's copy made while the flush saved the key is not
// kept beside the store's.
func TestExternalEditJustBeforeAFlush(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	dir := t.TempDir()
	store := "dir:" + dir
	mnt := t.TempDir()
	p := startMount(t, store, mnt, []string{"XDG_STATE_HOME=" + t.TempDir()})
	if err := os.MkdirAll(filepath.Join(mnt, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	const rounds = 40
	for i := range rounds {
		name := fmt.Sprintf("memory/r%02d.md", i)
		path := filepath.Join(mnt, name)
		if err := os.WriteFile(path, []byte("base\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := syncFile(path); err != nil {
			t.Fatal(err)
		}
		ours, theirs := fmt.Sprintf("memfs's edit %d\n", i), fmt.Sprintf("the other program's edit %d\n", i)
		if err := os.WriteFile(path, []byte(ours), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(theirs), 0o644); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(80)) * time.Millisecond)
		if err := syncFile(path); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.terminate(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.log)
	}
	all := map[string]int{} // value -> files that hold it
	filepath.Walk(filepath.Join(dir, "memory"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			all[string(b)]++
		}
		return nil
	})
	lost, doubled := 0, 0
	for i := range rounds {
		name := fmt.Sprintf("memory/r%02d.md", i)
		b, _ := os.ReadFile(filepath.Join(dir, name))
		if want := fmt.Sprintf("memfs's edit %d\n", i); string(b) != want {
			t.Errorf("%s holds %q, want memfs's edit", name, b)
		}
		switch all[fmt.Sprintf("the other program's edit %d\n", i)] {
		case 0:
			lost++
		case 1:
		default:
			doubled++
		}
	}
	if doubled > 0 {
		t.Errorf("%d of %d external edits were kept in more than one conflict copy (seed %d)\n%s", doubled, rounds, seed,
			strings.Join(conflictNames(dir), "\n"))
	}
	if lost > 0 {
		t.Fatalf("%d of %d external edits were overwritten without a conflict copy (seed %d)\n%s", lost, rounds, seed,
			strings.Join(conflictNames(dir), "\n"))
	}
}

func conflictNames(dir string) []string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.Contains(p, ".conflict-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}
