// Package paths compares host paths as the kernel reaches them: with every
// symlink resolved; and opens files under an os.Root following no symlink
// (OpenNoFollow), which os.Root.OpenFile does not promise even given
// O_NOFOLLOW.
//
// # Concurrency
//
// Its functions hold no state and are safe for concurrent use.
package paths

import (
	"path/filepath"
	"strings"
)

// Resolved returns the absolute path p with every symlink resolved; a part
// that does not exist yet (a new store) is joined to its nearest existing
// parent, resolved.
func Resolved(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	return filepath.Join(Resolved(parent), filepath.Base(p))
}

// Within reports whether path is dir or under it (both clean and absolute).
func Within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
