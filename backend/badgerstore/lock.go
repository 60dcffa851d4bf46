package badgerstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

const (
	lockName       = "memfs.lock" // ours: flocked by Open, holds the PID
	badgerLockName = "LOCK"       // badger's own directory lock, also with a PID
)

// lock takes the exclusive lock of the store in dir and writes our PID
// into the lock file. flock belongs to the open file description, so a
// second Open in this process fails like one in another process; the kernel
// drops the lock when the holder dies, so a crash never leaves the store
// locked. The file is never removed: unlinking a lock file lets a waiter
// lock the old inode while a newcomer locks a new one.
func lock(dir string) (*os.File, error) {
	name := filepath.Join(dir, lockName)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("badgerstore: lock: %w", err)
	}
	if err := flock(f); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, inUse(dir, name)
		}
		return nil, fmt.Errorf("badgerstore: lock %s: %w", name, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("badgerstore: lock %s: %w", name, err)
	}
	return f, nil
}

// checkBadgerLock reports backend.ErrStoreInUse when another program (not
// a memfs, which would hold our lock first) has badger open on dir.
// Badger's own refusal cannot be recognised: it formats the flock errno
// into its message with %+v, so errors.Is finds nothing. Testing its lock
// file the same way badger does gives the errno, and the holder's PID,
// which badger writes there too. A program that takes the lock between this
// probe and badger.Open still makes Open fail, only with badger's message.
func checkBadgerLock(dir string) error {
	name := filepath.Join(dir, badgerLockName)
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil // a new store
	}
	if err != nil {
		return fmt.Errorf("badgerstore: %w", err)
	}
	defer f.Close() // releases the probe's lock
	if err := flock(f); errors.Is(err, unix.EWOULDBLOCK) {
		return inUse(dir, name)
	}
	return nil // any other failure: let badger.Open report it
}

func flock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// inUse is the error for a store whose lock file name is held. The holder
// writes its PID right after it takes the lock; in the moment between, or
// if the file is unreadable, the error names no process.
func inUse(dir, name string) error {
	holder := "another process"
	if b, err := os.ReadFile(name); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			holder = "process " + strconv.Itoa(pid)
		}
	}
	return fmt.Errorf("badgerstore: %s is in use by %s: %w", dir, holder, backend.ErrStoreInUse)
}
