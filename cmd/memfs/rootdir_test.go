package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestAllowOtherRootChmodHoldsAfterRemount: a chmod 700 of the mount's
// root shuts other users out with --allow-other, and still does after a
// remount (the root came back 0755: its mode was not kept).
func TestAllowOtherRootChmodHoldsAfterRemount(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root: it mounts with --allow-other and runs ls as uid %d", otherUID)
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("this test runs ls as another user with setpriv (util-linux): %v", err)
	}
	for _, kind := range []string{"dir", "badger"} {
		t.Run(kind, func(t *testing.T) {
			store := kind + ":" + t.TempDir()
			mnt := sharedDir(t)
			p := startMount(t, store, mnt, nil, "--allow-other")
			if err := os.WriteFile(filepath.Join(mnt, "memory", "private.md"), []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(mnt, 0o700); err != nil {
				t.Fatalf("chmod 700 of the root: %v", err)
			}
			other := func() error {
				return exec.Command("setpriv", fmt.Sprintf("--reuid=%d", otherUID), fmt.Sprintf("--regid=%d", otherUID),
					"--clear-groups", "cat", filepath.Join(mnt, "memory", "private.md")).Run()
			}
			if err := other(); err == nil {
				t.Fatalf("uid %d read memory/private.md under a root of mode 0700", otherUID)
			}
			p.stop(t)
			startMount(t, store, mnt, nil, "--allow-other")
			fi, err := os.Stat(mnt)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o700 {
				t.Errorf("root after a remount: %v, want drwx------", fi.Mode())
			}
			if err := other(); err == nil {
				t.Errorf("after a remount uid %d reads memory/private.md under a root chmodded 700", otherUID)
			}
		})
	}
}
