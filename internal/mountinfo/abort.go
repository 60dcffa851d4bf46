package mountinfo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// fusectl is where the kernel's FUSE control filesystem lists connections.
const fusectl = "/sys/fs/fuse/connections"

// Abort aborts the FUSE connection of the mount at mnt, as
// writing to /sys/fs/fuse/connections/N/abort does: every request waiting
// on it fails at once (ENOTCONN). A serving process that died while one of
// its own threads, or a child, waited on the mount cannot otherwise finish
// exiting: it would wait for an answer only it could give. The control
// filesystem is mounted for the call when it is not (root only).
func Abort(mnt string) error {
	dev, err := fuseDevice(mnt)
	if err != nil {
		return err
	}
	abort := filepath.Join(fusectl, dev, "abort")
	if _, err := os.Stat(abort); errors.Is(err, os.ErrNotExist) {
		if err := syscall.Mount("fusectl", fusectl, "fusectl", 0, ""); err != nil && !errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("mount the FUSE control filesystem at %s: %w", fusectl, err)
		} else if err == nil {
			defer syscall.Unmount(fusectl, 0) // leave the system as it was
		}
	}
	if err := os.WriteFile(abort, []byte("1"), 0); err != nil {
		return fmt.Errorf("abort the FUSE connection of %s: %w", mnt, err)
	}
	return nil
}

// fuseDevice returns the minor device number of the FUSE mount at mnt, as
// /proc/self/mountinfo gives it: the name of its connection in fusectl.
func fuseDevice(mnt string) (string, error) {
	m, ok := At(mnt)
	if !ok || !strings.HasPrefix(m.FSType, "fuse") {
		return "", fmt.Errorf("%s is no FUSE mount", mnt)
	}
	return strconv.FormatUint(uint64(m.Minor()), 10), nil
}
