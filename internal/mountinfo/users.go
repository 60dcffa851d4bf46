package mountinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memfs/memfs/internal/paths"
)

// MountUsers lists the processes with a working or root directory, an
// open file or a mapped file under dir, as "PID (command)": what keeps a
// mountpoint busy (as fuser -m finds them). Other users' processes are
// seen only by root.
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
	for _, link := range []string{"cwd", "root"} {
		if target, err := os.Readlink(filepath.Join(proc, link)); err == nil && paths.Within(target, dir) {
			return true
		}
	}
	fds, _ := os.ReadDir(filepath.Join(proc, "fd"))
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(proc, "fd", fd.Name())); err == nil && paths.Within(target, dir) {
			return true
		}
	}
	return maps(proc, dir)
}

// maps reports whether the process maps a file under dir: the path is a
// line's sixth field on (it may hold spaces).
func maps(proc, dir string) bool {
	data, _ := os.ReadFile(filepath.Join(proc, "maps"))
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.SplitN(line, " ", 6)
		if len(f) == 6 {
			if path := strings.TrimLeft(f[5], " "); strings.HasPrefix(path, "/") && paths.Within(path, dir) {
				return true
			}
		}
	}
	return false
}
