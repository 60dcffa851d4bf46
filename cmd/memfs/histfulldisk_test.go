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

// TestFullDiskDuringHistoryWrite: a store on a small tmpfs that fills up
// while flushes write values and their history (chunked values, and
// appends to files acknowledged before, so that each flush adds chunks
// and versions). Every fsync that fails says ENOSPC; every one that
// succeeded is kept: after the disk grows and memfs mounts again, each
// file reads back as its last acknowledged content (or a later write
// of it), every version .memfs/history lists reads back (none names
// bytes the disk never took), each acknowledged content is one of them,
// and memfs log --verify finds nothing damaged.
func TestFullDiskDuringHistoryWrite(t *testing.T) {
	t.Parallel()
	// badger keeps a reserve of 36 MiB free for its memory maps; the dir
	// store fills a smaller disk sooner (a 40 MiB one took 11 min under
	// -race on a loaded machine).
	for kind, size := range map[string]int{"dir": 12 << 20, "badger": 40 << 20} {
		t.Run(kind, func(t *testing.T) {
			disk := smallDisk(t, size)
			store := kind + ":" + filepath.Join(disk, "store")
			env := []string{"XDG_STATE_HOME=" + t.TempDir()}
			mnt := t.TempDir()
			p := startMount(t, store, mnt, env)
			path := func(i int) string { return filepath.Join(mnt, "memory", fmt.Sprintf("f%02d.md", i)) }
			acked := map[int]string{}     // file -> its last acknowledged content
			written := map[int][]string{} // file -> every content written after it
			var files []int               // acknowledged files, in order
			var refused int
			for i := 0; refused < 4 && i < 200; i++ {
				// A new file of ~400 KiB, or an append to an acknowledged one.
				f, text := i, strings.Repeat(fmt.Sprintf("line %d of a file that fills the disk with its history\n", i), 8_000)
				if i%3 == 2 && len(files) > 0 {
					f = files[(i/3)%len(files)]
					text = acked[f] + fmt.Sprintf("appended at step %d\n", i)
				}
				// os.WriteFile truncates first: a flush between its
				// truncate and its write may save the empty file.
				written[f] = append(written[f], "", text)
				err := os.WriteFile(path(f), []byte(text), 0o644)
				if err == nil {
					err = syncFile(path(f))
				}
				if err == nil {
					if _, ok := acked[f]; !ok {
						files = append(files, f)
					}
					acked[f], written[f] = text, nil
					continue
				}
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("step %d: close or fsync on a full disk: %v, want ENOSPC", i, err)
				}
				refused++
			}
			if refused == 0 {
				t.Fatal("the disk never filled up")
			}
			t.Logf("%d files acknowledged, %d writes refused", len(acked), refused)
			if _, err := os.ReadFile(filepath.Join(mnt, ".memfs", "status")); err != nil {
				t.Fatalf("memfs died on a full disk: %v\n%s", err, p.log)
			}
			p.terminate(t)
			if strings.Contains(p.log.String(), "fatal error") || strings.Contains(p.log.String(), "panic:") {
				t.Fatalf("memfs crashed:\n%s", p.log)
			}
			if out, err := exec.Command("mount", "-o", "remount,size=400m", disk).CombinedOutput(); err != nil {
				t.Fatalf("grow the tmpfs: %v: %s", err, out)
			}

			p2 := startMount(t, store, mnt, env)
			var unrecorded []string
			for f, want := range acked {
				b, err := os.ReadFile(path(f))
				if err != nil {
					t.Errorf("f%02d after the remount: %v", f, err)
					continue
				}
				ok := string(b) == want
				for _, later := range written[f] {
					ok = ok || string(b) == later
				}
				if !ok {
					t.Errorf("f%02d after the remount: %d bytes, neither its acknowledged %d nor a later write", f, len(b), len(want))
				}
				hist := filepath.Join(mnt, ".memfs", "history", "memory", fmt.Sprintf("f%02d.md", f))
				ents, err := os.ReadDir(hist)
				if err != nil {
					t.Errorf("ls %s: %v", hist, err)
					continue
				}
				found := false
				for _, e := range ents {
					if e.Name() == "log" {
						continue
					}
					v, err := os.ReadFile(filepath.Join(hist, e.Name()))
					if err != nil {
						t.Errorf("version %s of f%02d: %v", e.Name(), f, err)
					}
					found = found || string(v) == want
				}
				if !found {
					unrecorded = append(unrecorded, fmt.Sprintf("f%02d (%d versions)", f, max(0, len(ents)-1)))
				}
			}
			if t.Failed() {
				return
			}
			if err := p2.terminate(t); err != nil {
				t.Fatalf("unmount with room again: %v\n%s", err, p2.log)
			}
			if out, stderr, err := run(t, "", "log", "--verify", "--store", store); err != nil {
				t.Errorf("log --verify after the full disk: %v\n%s%s", err, out, stderr)
			}
			if len(unrecorded) > 0 {
				t.Errorf("acknowledged values with no version: %s", strings.Join(unrecorded, ", "))
			}
		})
	}
}
