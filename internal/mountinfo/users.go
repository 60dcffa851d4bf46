package mountinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memfs/memfs/internal/paths"
)

// MountUsers lists the processes with a working directory or an open file
// under dir, as "PID (command)": what keeps a mountpoint busy.
func MountUsers(dir string) []string {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var users []string
	for _, p := range procs {
		if using(p, dir) {
			comm, _ := os.ReadFile(filepath.Join(p, "comm"))
			users = append(users, fmt.Sprintf("%s (%s)", filepath.Base(p), strings.TrimSpace(string(comm))))
		}
	}
	return users
}

func using(proc, dir string) bool {
	if cwd, err := os.Readlink(filepath.Join(proc, "cwd")); err == nil && paths.Within(cwd, dir) {
		return true
	}
	fds, _ := os.ReadDir(filepath.Join(proc, "fd"))
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(proc, "fd", fd.Name())); err == nil && paths.Within(target, dir) {
			return true
		}
	}
	return false
}
