package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// holdIn starts a process whose working directory is dir, as a shell
// cd'ed into a mount is; cleanup kills it by its pid.
func holdIn(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// TestUnmountBusyNamesHolders: memfs unmount of a busy mount fails at
// once, names the processes holding it and what to do, and leaves the
// mount served; --lazy detaches it, and memfs flushes and exits once the
// last holder is gone.
func TestUnmountBusyNamesHolders(t *testing.T) {
	store, mnt := "dir:"+t.TempDir(), t.TempDir()
	p := startMount(t, store, mnt, nil)
	if err := os.WriteFile(filepath.Join(mnt, "note.md"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	holder := holdIn(t, mnt)
	_, _, err := run(t, "", "unmount", "--timeout", "10m", mnt)
	holderName := fmt.Sprintf("%d (sleep)", holder.Process.Pid)
	if err == nil || !strings.Contains(err.Error(), holderName) || !strings.Contains(err.Error(), "--lazy") {
		t.Fatalf("unmount of a busy mount: %v; want a failure naming %s and --lazy", err, holderName)
	}
	// Refused, not begun: the mount still serves, and memfs was not asked to stop.
	if _, err := os.ReadFile(filepath.Join(mnt, ".memfs", "status")); err != nil {
		t.Fatalf("the mount no longer answers after a refused unmount: %v", err)
	}
	if strings.Contains(p.log.String(), "signal:") {
		t.Errorf("memfs was signalled although the unmount was refused:\n%s", p.log)
	}

	out := mustRun(t, "", "unmount", "--lazy", mnt)
	if !strings.Contains(out, "detached") || !strings.Contains(out, holderName) {
		t.Errorf("unmount --lazy said %q; want it detached, held by %s", out, holderName)
	}
	if isMounted(mnt) {
		t.Fatalf("%s still in the mount table after unmount --lazy", mnt)
	}
	select {
	case err := <-p.done:
		t.Fatalf("memfs exited (%v) while %s still used its mount", err, holderName)
	default:
	}
	holder.Process.Kill()
	holder.Wait()
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Fatalf("memfs after the last holder closed: %v\n%s", err, p.log)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("memfs did not exit after the last holder of its detached mount closed\n%s", p.log)
	}
	if got := mustRun(t, "", "cat", "--store", store, "note.md"); got != "kept\n" {
		t.Errorf("store after a lazy unmount: %q", got)
	}
}

// TestUnmountReadOnlySaysSo: nothing is flushed from a read-only mount,
// and unmount does not say it was.
func TestUnmountReadOnlySaysSo(t *testing.T) {
	store, mnt := "dir:"+t.TempDir(), t.TempDir()
	mustRun(t, "hello\n", "put", "--store", store, "note.md")
	startMount(t, store, mnt, nil, "--read-only")
	out := mustRun(t, "", "unmount", mnt)
	if strings.Contains(out, "flushed") || !strings.Contains(out, "read-only") {
		t.Errorf("unmount of a read-only mount said %q; want no flush claimed, and read-only named", out)
	}
}
