package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// smallDisk mounts a tmpfs of size bytes under a temp directory for the
// test, and unmounts it at cleanup.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a %d-byte tmpfs (the full-disk tests need root): %v: %s", size, err, out)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return dir
}

// TestFullDisk: a store on a disk that fills up. memfs must not crash
// (badger writes through memory maps, where a full disk is a SIGBUS):
// fsync gets ENOSPC, what was saved before stays readable, and the unmount
// writes what the store refused to a recovery directory and exits
// non-zero, naming it.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	// badger keeps a reserve of 36 MiB free for its memory maps; the dir
	// store needs none and fills an 8 MiB disk after a few files (a 40 MiB
	// one took 20 files of 1 MB, each through FUSE, the journal and the
	// store under -race: most of this test's 449 s on a loaded machine).
	for kind, size := range map[string]int{"dir": 8 << 20, "badger": 40 << 20} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			disk := smallDisk(t, size)
			store := kind + ":" + filepath.Join(disk, "store")
			state := t.TempDir()
			env := []string{"XDG_STATE_HOME=" + state}
			mnt := t.TempDir()
			p := startMount(t, store, mnt, env)
			content := func(i int) string {
				return strings.Repeat(fmt.Sprintf("line of file %d, which fills the disk\n", i), 26_000) // ~1 MB
			}
			refused := fillDisk(t, mnt, 80, content)
			if _, err := os.ReadFile(filepath.Join(mnt, ".memfs", "status")); err != nil {
				t.Fatalf("memfs died on a full disk: %v\n%s", err, p.log)
			}
			// What the store refused is still served from memory.
			name := fmt.Sprintf("f%02d.txt", refused[0])
			if b, err := os.ReadFile(filepath.Join(mnt, name)); err != nil || string(b) != content(refused[0]) {
				t.Fatalf("a refused file read back through the mount: %d bytes, %v", len(b), err)
			}
			err := p.terminate(t)
			if err == nil || !strings.Contains(p.log.String(), "recovery") {
				t.Fatalf("unmount on a full disk: %v; want a failure naming the recovery directory\n%s", err, p.log)
			}
			if strings.Contains(p.log.String(), "fatal error") {
				t.Fatalf("memfs crashed:\n%s", p.log)
			}
			// Each refused file is in the recovery directory, or, when the
			// unmount's last flush found room (the journal it truncates is
			// on the same small disk), in the store: never lost.
			recovered := 0
			for _, i := range refused {
				name := fmt.Sprintf("f%02d.txt", i)
				got, _ := filepath.Glob(filepath.Join(state, "memfs", "recovery", "*", name))
				if len(got) == 0 {
					if b, _, err := run(t, "", "cat", "--store", store, name); err != nil || b != content(i) {
						t.Fatalf("%s is in no recovery directory, and in the store: %d bytes, %v", name, len(b), err)
					}
					continue
				}
				recovered++
				if b, err := os.ReadFile(got[0]); err != nil || string(b) != content(i) {
					t.Fatalf("recovered %s: %d bytes, %v", name, len(b), err)
				}
			}
			if recovered == 0 {
				t.Fatalf("the unmount named a recovery directory, but none of the refused files %v is in one\n%s", refused, p.log)
			}
			// What fsync acknowledged before the disk filled is in the store.
			if refused[0] > 0 {
				if got := mustRun(t, "", "cat", "--store", store, "f00.txt"); got != content(0) {
					t.Fatalf("f00.txt from the store: %d bytes, want %d", len(got), len(content(0)))
				}
			}
		})
	}
}

// TestFullDiskUnderARoute: one route's store fills its disk. Its files
// are refused (ENOSPC at fsync), kept in memory and served, and at
// unmount written to a recovery directory; the other routes go on:
// another route's fsync succeeds while that disk is full.
func TestFullDiskUnderARoute(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t, 8<<20)
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state}
	store, mnt := "dir:"+t.TempDir(), t.TempDir()
	route := filepath.Join(disk, "route")
	os.Mkdir(route, 0o755)
	p := startMount(t, store, mnt, env, "--route", "full/=dir:"+route)
	content := func(i int) string {
		return strings.Repeat(fmt.Sprintf("line of file %d, which fills the route's disk\n", i), 23_000) // ~1 MB
	}
	refused := fillDisk(t, filepath.Join(mnt, "full"), 40, content)
	// The default route goes on.
	ok := filepath.Join(mnt, "memory", "ok.md")
	if err := os.WriteFile(ok, []byte("saved while the route is full\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syncFile(ok); err != nil {
		t.Errorf("fsync in the default route while another route's disk is full: %v", err)
	}
	if got := mustRun(t, "", "cat", "--store", store, "memory/ok.md"); got != "saved while the route is full\n" {
		t.Errorf("memory/ok.md in the default store: %q", got)
	}
	name := filepath.Join(mnt, "full", fmt.Sprintf("f%02d.txt", refused[0]))
	if b, err := os.ReadFile(name); err != nil || string(b) != content(refused[0]) {
		t.Fatalf("a refused file read back through the mount: %d bytes, %v", len(b), err)
	}
	if err := p.terminate(t); err == nil || !strings.Contains(p.log.String(), "recovery") {
		t.Fatalf("unmount with a route's disk full: %v; want a failure naming the recovery directory\n%s", err, p.log)
	}
	for _, i := range refused {
		name := fmt.Sprintf("f%02d.txt", i)
		got, _ := filepath.Glob(filepath.Join(state, "memfs", "recovery", "*", "full", name))
		if len(got) == 0 {
			if b, err := os.ReadFile(filepath.Join(route, name)); err != nil || string(b) != content(i) {
				t.Fatalf("%s is in no recovery directory, and in the route's store: %d bytes, %v", name, len(b), err)
			}
			continue
		}
		if b, err := os.ReadFile(got[0]); err != nil || string(b) != content(i) {
			t.Fatalf("recovered %s: %d bytes, %v", name, len(b), err)
		}
	}
}

// fillDisk writes files fNN.txt of content(NN) into dir, each closed and
// fsynced, until three are refused with ENOSPC (close(2) can fail first:
// the journal that makes a closed file survive a crash may be on the
// full disk too; either way the file is not acknowledged, and stays in
// memory), and returns their numbers; at most n files. Any other error,
// or a disk that never fills, fails t.
func fillDisk(t *testing.T, dir string, n int, content func(int) string) []int {
	t.Helper()
	var refused []int
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf("f%02d.txt", i))
		err := os.WriteFile(path, []byte(content(i)), 0o644)
		if err == nil {
			err = syncFile(path)
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("close or fsync on a full disk: %v, want ENOSPC", err)
		}
		if refused = append(refused, i); len(refused) == 3 {
			return refused
		}
	}
	if len(refused) == 0 {
		t.Fatal("the disk never filled up")
	}
	return refused
}
