package tree

import (
	"fmt"

	"golang.org/x/sys/unix"
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
