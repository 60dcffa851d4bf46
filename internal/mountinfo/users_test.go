package mountinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A process with a file open under a directory keeps it busy; a
// directory nobody uses has no users.
func TestMountUsers(t *testing.T) {
	dir, idle := t.TempDir(), t.TempDir()
	f, err := os.Create(filepath.Join(dir, "held"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	me := fmt.Sprintf("%d ", os.Getpid())
	users := MountUsers(dir)
	if !slices.ContainsFunc(users, func(u string) bool { return strings.HasPrefix(u, me) }) {
		t.Errorf("MountUsers(%s) = %v, want this process (%d) among them", dir, users, os.Getpid())
	}
	if users := MountUsers(idle); len(users) != 0 {
		t.Errorf("MountUsers(%s) = %v, want none", idle, users)
	}
}
