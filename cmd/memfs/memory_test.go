package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMaxMemoryFlag: --max-memory takes auto or a size of at least 16 MiB;
// anything else is refused before the command does any work.
func TestMaxMemoryFlag(t *testing.T) {
	for _, v := range []string{"0", "1MiB", "16777215", "lots", "-1GiB"} {
		t.Run(v, func(t *testing.T) {
			dir := t.TempDir()
			store := filepath.Join(dir, "store")
			_, _, err := run(t, "", "mount", "--max-memory", v, "--store", "dir:"+store, filepath.Join(dir, "mnt"))
			if want := "mount: --max-memory"; err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("mount --max-memory %s: %v, want an error containing %q", v, err, want)
			}
			if _, err := os.Stat(store); !os.IsNotExist(err) {
				t.Errorf("the store %s was touched (stat: %v) before the flag was refused", store, err)
			}
		})
	}
}
