package lockfile

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// HolderPID returns the PID the lock file at path names, or 0 when it
// names none. The file keeps the PID of its last holder after the lock is
// released: the caller checks that the process still holds the store (a
// memfs mount says so in its .memfs/status).
func HolderPID(path string) int {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	b := make([]byte, 32)
	n, _ := f.Read(b)
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
