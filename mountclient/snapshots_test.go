package mountclient_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memfs/memfs/mountclient"
)

// ListSnapshots names every snapshot, a run's checkpoints or a run's
// newest, as .memfs/snapshots/ shows them.
func TestListSnapshotsThroughTheMount(t *testing.T) {
	_, mnt := mountDir(t)
	c, err := mountclient.Open(mnt, mountclient.Own)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "note.md"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"plain", "run1/s1", "run1/s2", "run2/x"} {
		if err := c.Snapshot(name); err != nil {
			t.Fatalf("Snapshot(%s): %v", name, err)
		}
	}
	tests := []struct {
		which string
		want  []string
	}{
		{"", []string{"plain", "run1/s1", "run1/s2", "run2/x"}},
		{"run1/", []string{"run1/s1", "run1/s2"}},
		{"run1/latest", []string{"run1/s2"}},
		// A run with no checkpoint has none to list, as on a store.
		{"run3/", nil},
	}
	for _, tt := range tests {
		got, err := c.ListSnapshots(tt.which)
		slices.Sort(got)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ListSnapshots(%q) = %q, %v; want %q", tt.which, got, err, tt.want)
		}
	}
	if _, err := c.ListSnapshots("run3/latest"); err == nil {
		t.Error("ListSnapshots(run3/latest) of no such run: no error")
	}
}
