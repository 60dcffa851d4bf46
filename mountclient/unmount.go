package mountclient

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/memfs/memfs/internal/mountinfo"
)

// UnmountOptions say how long Unmount waits, and what it does with a
// mount that processes still use (a shell in it, an open file): by
// default, nothing (it fails at once, naming them, as umount(8) does).
type UnmountOptions struct {
	Timeout time.Duration // how long to wait for the flush and unmount
	Lazy    bool          // detach a busy mount now: memfs flushes and exits when its last user closes
	Wait    bool          // wait (up to Timeout) for a busy mount's users to close
}

// Unmounted says how Unmount ended.
type Unmounted struct {
	// Dead: the serving process was gone (or did not answer), and the
	// dead mount was detached; its journal is replayed at the next
	// mount. AbortErr is why its FUSE connection could not be aborted.
	Dead     bool
	AbortErr error
	ReadOnly bool     // a read-only mount: nothing was flushed
	Users    []string // a busy mount detached (Lazy): the processes using it
	PID      int      // the memfs process that served the mount
}

// Message says what Unmount did to mnt, for a person.
func (u Unmounted) Message(mnt string) string {
	switch {
	case u.Dead:
		return mnt + ": the memfs process was gone; detached the dead mount. Mount the store again to replay its journal."
	case len(u.Users) > 0:
		return fmt.Sprintf("%s: detached; in use by %s until they close it, then memfs (process %d) flushes and exits", mnt, strings.Join(u.Users, ", "), u.PID)
	case u.ReadOnly:
		return mnt + ": unmounted (read-only: nothing to flush)"
	}
	return mnt + ": flushed and unmounted"
}

// Print reports u, what Unmount did to mnt with the error err, as memfs
// unmount does: on warn why its FUSE connection could not be aborted, if
// so; on w the Message, unless err; and it returns err.
func (u Unmounted) Print(w, warn io.Writer, mnt string, err error) error {
	if u.AbortErr != nil {
		fmt.Fprintf(warn, "%s: %v\n", mnt, u.AbortErr)
	}
	if err == nil {
		fmt.Fprintln(w, u.Message(mnt))
	}
	return err
}

// Unmount has the memfs process serving mnt flush and unmount it
// (SIGTERM to the process serving this very mount: a status names any PID
// its server likes), and waits up to o.Timeout for the mount to go and
// the process to exit. A mount in use (mountinfo.MountUsers) is refused
// at once, naming its users, unless o says to wait or to detach it. A
// mount whose server does not answer is aborted (mountinfo.Abort:
// requests waiting on it fail at once) and detached.
func Unmount(mnt string, o UnmountOptions) (Unmounted, error) {
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
	u := Unmounted{ReadOnly: m.ReadOnly, PID: mc.PID}
	users := slices.DeleteFunc(mountinfo.MountUsers(mnt), func(s string) bool { return strings.HasPrefix(s, strconv.Itoa(mc.PID)+" ") })
	switch {
	case len(users) > 0 && o.Lazy:
		// Detached, memfs is not signalled: it serves the users until
		// the last closes, and then flushes and exits (its mount ended
		// from outside).
		u.Users = users
		return u, detach(mnt)
	case len(users) > 0 && !o.Wait:
		return Unmounted{}, fmt.Errorf("%s is busy, in use by %s; nothing was done\n"+
			"  close them (cd out of it) and unmount again, or: memfs unmount --lazy %s (detach it now; memfs flushes and exits when they close), "+
			"or --wait (wait up to --timeout for them)", mnt, strings.Join(users, ", "), mnt)
	}
	pid := mc.PID
	if err := mc.Signal(syscall.SIGTERM); err != nil {
		return Unmounted{}, fmt.Errorf("signal memfs process %d: %w", pid, err)
	}
	deadline := time.Now().Add(o.Timeout)
	for time.Now().Before(deadline) {
		if _, ok := mountinfo.At(mnt); !ok {
			// Wait for the process to finish its last flush and exit.
			for time.Now().Before(deadline) && syscall.Kill(pid, 0) == nil {
				time.Sleep(20 * time.Millisecond)
			}
			return u, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return Unmounted{}, fmt.Errorf("%s is still mounted after %v: is it busy? in use by: %s (memfs process %d unmounts it once it is free; see its log)",
		mnt, o.Timeout, strings.Join(mountinfo.MountUsers(mnt), ", "), pid)
}

// detach unmounts mnt lazily (MNT_DETACH): it leaves the namespace now,
// and its file system ends when the last user closes. A user who is not
// root has fusermount3 do it.
func detach(mnt string) error {
	err := syscall.Unmount(mnt, syscall.MNT_DETACH)
	if errors.Is(err, syscall.EPERM) {
		if out, ferr := exec.Command("fusermount3", "-u", "-z", mnt).CombinedOutput(); ferr != nil {
			return fmt.Errorf("detach %s: %v; fusermount3: %v: %s", mnt, err, ferr, out)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("detach %s: %w", mnt, err)
	}
	return nil
}
