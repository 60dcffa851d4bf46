package cliargs

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// InMount returns keys as a command going through the mount at mnt
// takes them: when the working directory is inside the mount, a key is
// relative to it (in mnt/memory, "a.md" is memory/a.md, "../skills" is
// skills), and a path into the mount names its key; elsewhere keys are
// as given.
func InMount(keys []string, mnt string) []string {
	cwd, err := os.Getwd()
	if err != nil || mnt == "" {
		return keys
	}
	return relative(keys, mnt, cwd)
}

func relative(keys []string, mnt, cwd string) []string {
	dir, err := filepath.Rel(mnt, cwd)
	if err != nil || dir == ".." || strings.HasPrefix(dir, "../") {
		return keys
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		switch {
		case filepath.IsAbs(k):
			if r, err := filepath.Rel(mnt, k); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
				k = r
			}
		case k != "":
			trail := strings.HasSuffix(k, "/")
			k = path.Join(filepath.ToSlash(dir), k)
			if trail {
				k += "/"
			}
		}
		out[i] = k
	}
	return out
}
