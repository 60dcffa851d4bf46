package mountclient_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/internal/mountinfo"
	"github.com/memfs/memfs/mountclient"
)

// Unmount of a mount that is not memfs's (a tmpfs, with no .memfs/status
// to read) refuses and leaves it mounted: it took any failed status read
// for a dead memfs and detached whatever was mounted there.
func TestUnmountLeavesAMountNotMemfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root: it mounts a tmpfs")
	}
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("memfs-test", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	if u, err := mountclient.Unmount(dir, mountclient.UnmountOptions{Timeout: time.Second}); err == nil {
		t.Errorf("Unmount of a tmpfs = %+v, nil; want a refusal", u)
	}
	if _, ok := mountinfo.At(dir); !ok {
		t.Error("Unmount detached a tmpfs")
	}
}

// Print says what the unmount did on w, unless it failed, and a failed
// abort on warn in any case.
func TestUnmountedPrint(t *testing.T) {
	refused := errors.New("in use")
	tests := []struct {
		name      string
		u         mountclient.Unmounted
		err       error
		out, warn string
	}{
		{"flushed", mountclient.Unmounted{}, nil, "/m: flushed and unmounted\n", ""},
		{"read-only", mountclient.Unmounted{ReadOnly: true}, nil, "/m: unmounted (read-only: nothing to flush)\n", ""},
		{"dead, not aborted", mountclient.Unmounted{Dead: true, AbortErr: errors.New("no connection")}, nil,
			"/m: the memfs process was gone; detached the dead mount. Mount the store again to replay its journal.\n", "/m: no connection\n"},
		{"refused", mountclient.Unmounted{}, refused, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, warn strings.Builder
			if err := tt.u.Print(&out, &warn, "/m", tt.err); err != tt.err {
				t.Errorf("got error %v, want %v", err, tt.err)
			}
			if out.String() != tt.out || warn.String() != tt.warn {
				t.Errorf("got out %q, warn %q; want %q, %q", out.String(), warn.String(), tt.out, tt.warn)
			}
		})
	}
}
