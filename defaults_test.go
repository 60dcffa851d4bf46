package memfs_test

import (
	"path/filepath"
	"testing"

	"github.com/memfs/memfs"
)

// The state directory follows $XDG_STATE_HOME, else ~/.local/state; the
// recovery directories are under it.
func TestDefaultStateDir(t *testing.T) {
	home, state := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	for _, tt := range []struct{ xdg, want string }{
		{state, filepath.Join(state, "memfs")},
		{"", filepath.Join(home, ".local", "state", "memfs")},
	} {
		t.Setenv("XDG_STATE_HOME", tt.xdg)
		if got := memfs.DefaultStateDir(); got != tt.want {
			t.Errorf("DefaultStateDir() with XDG_STATE_HOME=%q = %s, want %s", tt.xdg, got, tt.want)
		}
		if got, want := memfs.DefaultRecoveryDir(), filepath.Join(tt.want, "recovery"); got != want {
			t.Errorf("DefaultRecoveryDir() = %s, want %s", got, want)
		}
	}
}
