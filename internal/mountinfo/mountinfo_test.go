package mountinfo

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParse(t *testing.T) {
	info := strings.Join([]string{
		`22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw`,
		`41 26 0:38 / /home/u/memory rw,nosuid shared:5 master:2 - fuse.memfs memfs:dir:/s rw,user_id=1000,group_id=1000,default_permissions,allow_other`,
		`42 26 259:70000 /sub /srv/my\040memory\011tab\134back\012nl rw - fuse.memfs memfs:dir:/my\040store rw,user_id=0,group_id=0`,
		`43 26 0:40 / /mnt/odd\0 rw - tmpfs a\999b rw`,
		`garbage line`,
		`44 26 0:41 / /no/separator rw fuse x rw`,
		``,
	}, "\n")
	none := ^uint32(0)
	want := []Mount{
		{Point: "/", FSType: "ext4", Source: "/dev/sda1", Dev: unix.Mkdev(8, 1), UID: none, Whole: true},
		{Point: "/home/u/memory", FSType: "fuse.memfs", Source: "memfs:dir:/s", Dev: unix.Mkdev(0, 38), UID: 1000, AllowOther: true, Whole: true},
		{Point: "/srv/my memory\ttab\\back\nnl", FSType: "fuse.memfs", Source: "memfs:dir:/my store", Dev: unix.Mkdev(259, 70000), UID: 0},
		{Point: `/mnt/odd\0`, FSType: "tmpfs", Source: `a\999b`, Dev: unix.Mkdev(0, 40), UID: none, Whole: true},
	}
	got := Parse(info)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", got, want)
	}
	if got[2].Minor() != 70000 {
		t.Errorf("Minor = %d, want 70000", got[2].Minor())
	}
	if m, ok := Find(got, "/srv/my memory\ttab\\back\nnl"); !ok || m.Source != "memfs:dir:/my store" {
		t.Errorf("Find of an escaped mountpoint = %+v, %v", m, ok)
	}
}

// Find returns the mount on top: the last one at a point.
func TestFindTakesTheLast(t *testing.T) {
	table := Parse("1 0 0:1 / /m rw - tmpfs a rw\n2 1 0:2 / /m rw - fuse.memfs b rw\n")
	if m, ok := Find(table, "/m"); !ok || m.Source != "b" {
		t.Errorf("Find = %+v, %v; want the mount on top (b)", m, ok)
	}
	if _, ok := Find(table, "/n"); ok {
		t.Error("Find of no mount found one")
	}
}

// A directory with a space in its name, mounted on, is found by its real
// name in this process's table.
func TestReadFindsAnEscapedMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root: it mounts a tmpfs")
	}
	dir := t.TempDir() + "/a dir\\with"
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("memfs-test", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	m, ok := At(dir)
	if !ok || m.FSType != "tmpfs" || m.Source != "memfs-test" {
		t.Errorf("At(%q) = %+v, %v; want the tmpfs", dir, m, ok)
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil || st.Dev != m.Dev {
		t.Errorf("stat's device %d, the table's %d (%v)", st.Dev, m.Dev, err)
	}
}
