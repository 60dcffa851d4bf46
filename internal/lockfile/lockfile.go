// Package lockfile is the exclusive lock a store takes on its directory: a
// non-blocking flock(2) on a file that holds the holder's PID, so that a
// second opener can say who holds it.
//
// The lock belongs to the open file description, so a second Lock in this
// same process conflicts just as another process does, and the kernel drops
// it when the holder dies: a crash never leaves a store locked. The file is
// never removed: unlinking a lock file lets a waiter lock the orphaned inode
// while a newcomer locks a fresh one, and both win. It is opened without
// following a symbolic link (backend.ErrSymlink): a store that arrives by
// git pull or unzip could otherwise make memfs truncate a file elsewhere.
//
// # Concurrency
//
// The functions keep no state and are safe for concurrent use. The lock
// is the open file description's, not the process's or the goroutine's:
// two Locks of one path in one process conflict (the second fails with
// ErrStoreInUse), whichever goroutines call them.
package lockfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

// Lock takes the lock at path, creating the file (0644) if needed, and
// writes our PID into it. If another holder has it, the error wraps
// backend.ErrStoreInUse and names the holder's PID; what is locked is
// named by what (the store's directory).
func Lock(path, what string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("lock %s %w", path, backend.ErrSymlink)
	}
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := Flock(f); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			if flock(f, unix.LOCK_SH) == nil {
				// Only readers (Share) hold it: the PID in the file
				// is a writer's that is gone.
				return nil, fmt.Errorf("%s is in use by a memfs command that reads it (wait for it to end): %w", what, backend.ErrStoreInUse)
			}
			return nil, InUse(what, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// Flock takes a non-blocking exclusive flock on f, retrying on EINTR.
func Flock(f *os.File) error { return flock(f, unix.LOCK_EX) }

// flock takes a non-blocking flock of kind how (unix.LOCK_EX or
// unix.LOCK_SH) on f, retrying on EINTR.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// InUse is the error for a store whose lock file at path is held. The
// holder writes its PID right after it takes the lock; in the moment
// between, or if the file is unreadable, the error names no process.
func InUse(what, path string) error {
	return fmt.Errorf("%s is in use by %s: %w", what, Holder(path), backend.ErrStoreInUse)
}

// Holder describes who holds the lock at path, from the PID in it.
func Holder(path string) string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "another process"
	}
	defer f.Close()
	b := make([]byte, 32)
	n, _ := f.Read(b)
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:n])))
	if err != nil || pid <= 0 {
		return "another process"
	}
	return "process " + strconv.Itoa(pid)
}
