package fsnode_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hanwen/go-fuse/v2/posixtest"
)

// posixExcluded names every go-fuse posixtest that is not run against
// memfs, with the reason. Everything else in posixtest.All runs.
var posixExcluded = map[string]string{
	"FcntlFlockLocksFile": "memfs leaves POSIX locks to the kernel, which (correctly, per POSIX) never makes two locks of one process conflict; the test expects a filesystem that keeps lock owners apart",
}

func TestPosix(t *testing.T) {
	names := make([]string, 0, len(posixtest.All))
	for name := range posixtest.All {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fn := posixtest.All[name]
		t.Run(name, func(t *testing.T) {
			if why, ok := posixExcluded[name]; ok {
				t.Skip("excluded: " + why)
			}
			m := mount(t, newDirStore(t, t.TempDir()), mountConfig{})
			// A subdirectory, because the root also lists .memfs.
			dir := filepath.Join(m.dir, "posix")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			fn(t, dir)
		})
	}
}
