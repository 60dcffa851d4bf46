package usererr

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memfs/memfs/backend"
)

func TestMessage(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("export: %w", &fs.PathError{Op: "statat", Path: "memory/a", Err: syscall.EACCES}), "export: stat memory/a: permission denied"},
		{&fs.PathError{Op: "mkdirat", Path: "memory", Err: syscall.EEXIST}, "mkdir memory: file exists"},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.ENOENT}, "open x: no such file or directory"},
		{errors.New("plain"), "plain"},
	} {
		if got := Message(tt.err); got != tt.want {
			t.Errorf("Message(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestMount(t *testing.T) {
	failed := errors.New("fusermount exited with code 256")
	err := Mount(failed, filepath.Join(t.TempDir(), "fuse"))
	if !errors.Is(err, failed) || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "modprobe fuse") {
		t.Errorf("Mount with no device = %v, want the device named", err)
	}
	if err := Mount(failed, "/dev/null"); err != failed {
		t.Errorf("Mount with a device it may open = %v, want the error as it was", err)
	}
	if Mount(nil, "/nonexistent") != nil {
		t.Error("Mount(nil) is not nil")
	}
}

func TestRm(t *testing.T) {
	own := errors.New("rm: x: no such key")
	if err := Rm(Refuse(own)); err != own {
		t.Errorf("Rm(Refuse(e)) = %v, want e as it is", err)
	}
	if err := Rm(&fs.PathError{Op: "remove", Path: "memory", Err: syscall.EISDIR}); err == nil || !strings.Contains(err.Error(), "-r removes it") {
		t.Errorf("Rm(EISDIR) = %v", err)
	}
}

// OpenStore names the store; one another program holds says who that may
// be, and stays backend.ErrStoreInUse.
func TestOpenStore(t *testing.T) {
	inUse := fmt.Errorf("dirstore: %w (pid 42)", backend.ErrStoreInUse)
	err := OpenStore("dir:/s", inUse)
	if !errors.Is(err, backend.ErrStoreInUse) || !strings.Contains(err.Error(), "another program holds dir:/s: a memfs command still at work") {
		t.Errorf("OpenStore(in use) = %v", err)
	}
	if err := OpenStore("dir:/s", fs.ErrPermission); !errors.Is(err, fs.ErrPermission) || err.Error() != "open store dir:/s: permission denied" {
		t.Errorf("OpenStore(permission) = %v", err)
	}
}

// CheckKeys refuses the first key CheckKey refuses, with its error; a
// directory's trailing slash passes only with dirs.
func TestCheckKeys(t *testing.T) {
	tests := []struct {
		keys []string
		dirs bool
		bad  string // the key refused, "" for none
	}{
		{[]string{"memory/a.md", "b"}, false, ""},
		{[]string{"memory/", "b/"}, true, ""},
		{[]string{"memory/a.md", ".memfs", "../x"}, false, ".memfs"},
		{[]string{"a", "memory/"}, false, "memory/"},
		{[]string{"a", "../x/"}, true, "../x"},
	}
	for _, tt := range tests {
		err := CheckKeys("rm", tt.keys, tt.dirs)
		if tt.bad == "" {
			if err != nil {
				t.Errorf("CheckKeys(%q, dirs %v) = %v, want nil", tt.keys, tt.dirs, err)
			}
			continue
		}
		want := CheckKey("rm", tt.bad)
		if want == nil || err == nil || err.Error() != want.Error() {
			t.Errorf("CheckKeys(%q, dirs %v) = %v, want %v", tt.keys, tt.dirs, err, want)
		}
	}
}

// CheckPrefix trims the slashes around a prefix and checks what is left
// as a key; nothing left is the whole store.
func TestCheckPrefix(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"", "", ""},
		{"/", "", ""},
		{"/memory/", "memory", ""},
		{"memory/notes", "memory/notes", ""},
		{".memfs/", "", "import: --prefix: .memfs: a name reserved"},
		{"a/../b", "", "import: --prefix: "},
	}
	for _, tt := range tests {
		got, err := CheckPrefix("import: --prefix", tt.in)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.HasPrefix(err.Error(), tt.err) {
			t.Errorf("CheckPrefix(%q) = %q, %v; want %q, error %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}
