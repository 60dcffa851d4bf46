package tree

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/internal/paths"
)

// SetXAttrs writes attrs to path, never through a symlink.
func SetXAttrs(path string, attrs map[string][]byte) error {
	for name, v := range attrs {
		if err := unix.Lsetxattr(path, name, v, 0); err != nil {
			return fmt.Errorf("setxattr %s %s: %w", path, name, err)
		}
	}
	return nil
}

// SetXAttrsAt writes attrs to the node rel of root, never through a
// symlink, however deep rel is: the node is pinned by an O_PATH
// descriptor that the root opens segment by segment without following a
// symlink, and named by /proc/self/fd, a path far under PATH_MAX (the
// path under the root may be longer than PATH_MAX: keys have no limit).
func SetXAttrsAt(root *os.Root, rel string, attrs map[string][]byte) error {
	if len(attrs) == 0 {
		return nil
	}
	p, done, err := procPath(root, rel)
	if err != nil {
		return err
	}
	defer done()
	for name, v := range attrs {
		if err := unix.Setxattr(p, name, v, 0); err != nil {
			return fmt.Errorf("setxattr %s: %w", name, err)
		}
	}
	return nil
}

// procPath opens rel under root with O_PATH, never following a symlink,
// and returns the /proc/self/fd path of the descriptor, which a call that
// follows links (setxattr, getxattr) resolves to that very node; done
// closes the descriptor.
func procPath(root *os.Root, rel string) (string, func(), error) {
	// Not root.OpenFile: it follows a link that stays inside the root,
	// O_NOFOLLOW or not.
	f, err := paths.OpenNoFollow(root, rel, unix.O_PATH, 0)
	if err != nil {
		return "", nil, err
	}
	return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())), func() { f.Close() }, nil
}
