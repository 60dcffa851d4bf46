package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperPID returns the PID of the mount helper (the __apply child) of the
// memfs process pid.
func helperPID(t *testing.T, pid int) int {
	t.Helper()
	var found int
	waitFor(t, "the mount helper process", 10*time.Second, func() bool {
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			child, err := strconv.Atoi(d.Name())
			if err != nil {
				continue
			}
			stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...: comm may hold spaces and parentheses.
			rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
			fields := strings.Fields(rest)
			if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
				continue
			}
			cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
			if strings.Contains(string(cmdline), "__apply") {
				found = child
				return true
			}
		}
		return false
	})
	return found
}

// TestExternalChangesAfterHelperDies kills the mount's helper process: the
// external changes made after it still reach the mount (applied to the
// session directly; watchers then see no event), and memfs says once that
// the helper failed.
func TestExternalChangesAfterHelperDies(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	os.MkdirAll(filepath.Join(store, "memory"), 0o755)
	os.WriteFile(filepath.Join(store, "memory/a.md"), []byte("old\n"), 0o644)
	mnt := t.TempDir()
	p := startMount(t, "dir:"+store, mnt, nil)
	helper := helperPID(t, p.cmd.Process.Pid)
	if err := syscall.Kill(helper, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the killed helper to die", 10*time.Second, func() bool {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(helper), "stat"))
		if err != nil {
			return true // reaped
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		return len(fields) > 0 && fields[0] == "Z"
	})

	os.WriteFile(filepath.Join(store, "memory/new.md"), []byte("made after the helper died\n"), 0o644)
	waitFor(t, "a new file on the mount", 10*time.Second, func() bool {
		return readBack(filepath.Join(mnt, "memory/new.md")) == "made after the helper died\n"
	})
	os.WriteFile(filepath.Join(store, "memory/a.md"), []byte("changed\n"), 0o644)
	waitFor(t, "a modification on the mount", 10*time.Second, func() bool {
		return readBack(filepath.Join(mnt, "memory/a.md")) == "changed\n"
	})
	os.Remove(filepath.Join(store, "memory/a.md"))
	waitFor(t, "a removal on the mount", 10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(mnt, "memory/a.md"))
		return os.IsNotExist(err)
	})
	if n := strings.Count(p.log.String(), "the mount helper failed"); n != 1 {
		t.Errorf("the helper's failure logged %d times, want once:\n%s", n, p.log)
	}
}
