package mountclient_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/mountclient"
)

// dirSpec is a store's name, as a command's location.Location would read
// it: a local dir or badger store, or a shared one (etcd).
type dirSpec struct{ scheme, dir string }

func (d dirSpec) String() string   { return d.scheme + ":" + d.dir }
func (d dirSpec) Scheme() string   { return d.scheme }
func (d dirSpec) Path() string     { return d.dir }
func (d dirSpec) Local() bool      { return d.scheme != "etcd" }
func (d dirSpec) LockPath() string { return dirstore.LockPath(d.dir) }

func parseDir(v string) (dirSpec, error) {
	dir, ok := strings.CutPrefix(v, "dir:")
	if !ok {
		return dirSpec{}, fmt.Errorf("%q: not a dir store", v)
	}
	return dirSpec{"dir", dir}, nil
}

// Same compares parsed specs: a local store's directory with every
// symlink resolved, a shared store's by its name.
func TestSame(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		a, b dirSpec
		want bool
	}{
		{dirSpec{"dir", dir}, dirSpec{"dir", link}, true},
		{dirSpec{"dir", dir}, dirSpec{"badger", dir}, false},
		{dirSpec{"dir", dir}, dirSpec{"dir", dir + "/x"}, false},
		{dirSpec{"etcd", "//h:2379/ns"}, dirSpec{"etcd", "//h:2379/ns"}, true},
		{dirSpec{"etcd", "//h:2379/ns"}, dirSpec{"etcd", "//h:2379/other"}, false},
		{dirSpec{"etcd", "//h:2379/ns"}, dirSpec{"dir", "//h:2379/ns"}, false},
	}
	for _, tt := range tests {
		if got := mountclient.Same(tt.a, tt.b); got != tt.want {
			t.Errorf("Same(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// A store a live mount serves is worked on through it, named by the
// store, by --mount, or by a working directory inside it; a store no
// mount serves is opened; --mount and a --store of another store
// disagree.
func TestLocate(t *testing.T) {
	dir, mnt := mountDir(t)
	other := "dir:" + t.TempDir()
	if tg, err := mountclient.Locate("", other, true, parseDir); err != nil || tg.Client != nil || tg.Spec.String() != other {
		t.Errorf("Locate(a store no mount serves) = %+v, %v; want the store", tg, err)
	}
	for _, c := range []struct{ mount, store string }{{"", "dir:" + dir}, {mnt, ""}, {mnt, "dir:" + dir}} {
		tg, err := mountclient.Locate(c.mount, c.store, c.store != "", parseDir)
		if err != nil || tg.Client == nil || tg.Client.Dir != mnt || tg.Spec.String() != "dir:"+dir {
			t.Errorf("Locate(%q, %q) = %+v, %v; want the mount at %s", c.mount, c.store, tg, err, mnt)
		}
	}
	t.Chdir(mnt)
	if tg, err := mountclient.Locate("", "", false, parseDir); err != nil || tg.Client == nil || tg.Client.Dir != mnt {
		t.Errorf("Locate inside the mount = %+v, %v; want the mount", tg, err)
	}
	if _, err := mountclient.Locate(mnt, other, true, parseDir); err == nil || !strings.Contains(err.Error(), "name two stores") {
		t.Errorf("Locate(--mount, another --store) = %v, want an error saying they name two stores", err)
	}
	if _, ok := mountclient.Serving(dirSpec{"dir", strings.TrimPrefix(other, "dir:")}, parseDir); ok {
		t.Error("Serving(a store no mount serves) found one")
	}
	want := fmt.Sprintf("dir:%s is already mounted at %s (memfs process %d); use that mount, or memfs unmount %s first", dir, mnt, os.Getpid(), mnt)
	if err := mountclient.CheckUnserved(dirSpec{"dir", dir}, parseDir); err == nil || err.Error() != want {
		t.Errorf("CheckUnserved(a served store) = %v, want %q", err, want)
	}
	if err := mountclient.CheckUnserved(dirSpec{"dir", strings.TrimPrefix(other, "dir:")}, parseDir); err != nil {
		t.Errorf("CheckUnserved(a store no mount serves) = %v, want nil", err)
	}
	checkNeedsStore(t, dir, mnt, other)
}

// checkNeedsStore: a command that needs the store to itself is refused
// one a live mount serves (at mnt, of the store dir), with what to do
// instead; a store no mount serves (other) is its own.
func checkNeedsStore(t *testing.T, dir, mnt, other string) {
	t.Helper()
	served, err := mountclient.Locate("", "dir:"+dir, true, parseDir)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("fsck: dir:%s is mounted at %s (memfs process %d), and fsck needs the store to itself\n  unmount it", dir, mnt, os.Getpid())
	if err := served.NeedsStore("fsck", "unmount it"); err == nil || err.Error() != want {
		t.Errorf("NeedsStore of a served store = %v, want %q", err, want)
	}
	free, err := mountclient.Locate("", other, true, parseDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := free.NeedsStore("fsck", "unmount it"); err != nil {
		t.Errorf("NeedsStore of a store no mount serves = %v, want nil", err)
	}
}
