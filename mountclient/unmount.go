package mountclient

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/memfs/memfs/internal/mountinfo"
)

// Unmounted says how Unmount ended.
type Unmounted struct {
	// Dead: the serving process was gone (or did not answer), and the
	// dead mount was detached; its journal is replayed at the next
	// mount. AbortErr is why its FUSE connection could not be aborted.
	Dead     bool
	AbortErr error
}

// Unmount has the memfs process serving mnt flush and unmount it
// (SIGTERM to the process serving this very mount: a status names any PID
// its server likes), and waits up to timeout for the mount to go and the
// process to exit. A mount whose server does not answer is aborted
// (mountinfo.Abort: requests waiting on it fail at once) and detached.
func Unmount(mnt string, timeout time.Duration) (Unmounted, error) {
	m, ok := mountinfo.At(mnt)
	if !ok {
		return Unmounted{}, fmt.Errorf("%s is not mounted", mnt)
	}
	if !isMemfs(m) {
		return Unmounted{}, fmt.Errorf("%s is a %s mount of %s, not memfs's: nothing was done", mnt, m.FSType, m.Source)
	}
	if _, err := os.ReadFile(filepath.Join(mnt, ".memfs", "status")); err != nil {
		if !errors.Is(err, syscall.ENOTCONN) && !errors.Is(err, syscall.ECONNABORTED) {
			// The server answered (a refusal: root reading a user's mount
			// without allow_other): it is alive, and is not aborted.
			return Unmounted{}, fmt.Errorf("unmount: %w: nothing was done", err)
		}
		u := Unmounted{Dead: true, AbortErr: mountinfo.Abort(mnt)}
		if derr := syscall.Unmount(mnt, syscall.MNT_DETACH); derr != nil {
			return u, fmt.Errorf("%s: memfs does not answer (%v) and the unmount failed: %w", mnt, err, derr)
		}
		return u, nil
	}
	mc, err := Open(mnt, Any)
	if err != nil {
		return Unmounted{}, fmt.Errorf("unmount: %w", err)
	}
	pid := mc.PID
	if err := mc.Signal(syscall.SIGTERM); err != nil {
		return Unmounted{}, fmt.Errorf("signal memfs process %d: %w", pid, err)
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, ok := mountinfo.At(mnt); !ok {
			// Wait for the process to finish its last flush and exit.
			for time.Now().Before(deadline) && syscall.Kill(pid, 0) == nil {
				time.Sleep(20 * time.Millisecond)
			}
			return Unmounted{}, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return Unmounted{}, fmt.Errorf("%s is still mounted after %v: is it busy? in use by: %s (see the memfs log of process %d)",
		mnt, timeout, strings.Join(mountinfo.MountUsers(mnt), ", "), pid)
}
