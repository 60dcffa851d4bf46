package session_test

import (
	"context"
	"io/fs"
	"testing"

	"github.com/memfs/memfs/session"
)

// accessTree builds a session whose files and directories have the modes
// and owners the permission tests need. uid 1000 (group 100) is "alice",
// group 50 "staff", uid 2000 someone else.
func accessTree(t *testing.T) *session.Context {
	t.Helper()
	c := session.NewContext(openStore(t, t.TempDir()), session.Options{DirMode: 0o755})
	type node struct {
		key      string
		dir      bool
		mode     fs.FileMode
		uid, gid uint32
	}
	for _, n := range []node{
		{key: "open", dir: true, mode: 0o755},
		{key: "open/world.md", mode: 0o644},
		{key: "open/zero.md", mode: 0o000},
		{key: "open/alice.md", mode: 0o600, uid: 1000, gid: 100},
		{key: "open/not-alice.md", mode: 0o077, uid: 1000, gid: 100}, // the owner's bits deny her
		{key: "open/staff.md", mode: 0o640, gid: 50},
		{key: "shut", dir: true, mode: 0o700},
		{key: "shut/world.md", mode: 0o644},
		{key: "passage", dir: true, mode: 0o711}, // search, no listing
		{key: "passage/world.md", mode: 0o644},
		{key: "staffdir", dir: true, mode: 0o750, gid: 50},
		{key: "staffdir/staff.md", mode: 0o640, gid: 50},
		{key: "alicedir", dir: true, mode: 0o700, uid: 1000, gid: 100},
		{key: "alicedir/deep", dir: true, mode: 0o755, uid: 1000, gid: 100},
		{key: "alicedir/deep/world.md", mode: 0o644, uid: 1000, gid: 100},
		{key: "gone", dir: true, mode: 0o755},
		{key: "gone/shut", dir: true, mode: 0o700},
	} {
		if n.dir {
			if err := c.Mkdir(n.key, n.mode, n.uid, n.gid); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := c.Set(n.key, []byte("value of "+n.key)); err != nil {
			t.Fatal(err)
		}
		mode, uid, gid := n.mode, n.uid, n.gid
		if _, err := c.SetAttr(context.Background(), n.key, session.Attr{Mode: &mode, UID: &uid, GID: &gid}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

var (
	credRoot   = session.Cred{UID: 0, GIDs: []uint32{0}}
	credNobody = session.Cred{UID: 65534, GIDs: []uint32{65534}}
	credAlice  = session.Cred{UID: 1000, GIDs: []uint32{100}}
	credStaff  = session.Cred{UID: 2000, GIDs: []uint32{2000, 50}} // staff as a supplementary group
)

func TestCanRead(t *testing.T) {
	c := accessTree(t)
	tests := []struct {
		name string
		key  string
		cr   session.Cred
		want bool
	}{
		{"world-readable file", "open/world.md", credNobody, true},
		{"mode 000: denied to others", "open/zero.md", credNobody, false},
		{"mode 000: root reads it (CAP_DAC_OVERRIDE)", "open/zero.md", credRoot, true},
		{"0600: the owner reads", "open/alice.md", credAlice, true},
		{"0600: others do not", "open/alice.md", credNobody, false},
		{"0600: a member of the file's group does not", "open/alice.md", session.Cred{UID: 3000, GIDs: []uint32{100}}, false},
		{"owner bits deny the owner though others may", "open/not-alice.md", credAlice, false},
		{"owner bits deny only the owner", "open/not-alice.md", credNobody, true},
		{"group bits by supplementary group", "open/staff.md", credStaff, true},
		{"group bits by primary group", "open/staff.md", session.Cred{UID: 3000, GIDs: []uint32{50}}, true},
		{"group bits: not a member", "open/staff.md", credNobody, false},
		{"0644 file in a 0700 directory", "shut/world.md", credNobody, false},
		{"0644 file in a 0700 directory: root", "shut/world.md", credRoot, true},
		{"directory with x but no r: reading by name works", "passage/world.md", credNobody, true},
		{"group directory, group file: member", "staffdir/staff.md", credStaff, true},
		{"group directory, group file: not a member", "staffdir/staff.md", credNobody, false},
		{"an ancestor, not the parent, is shut", "alicedir/deep/world.md", credNobody, false},
		{"an ancestor shut to all but its owner", "alicedir/deep/world.md", credAlice, true},
		{"a directory is not a readable file", "open", credRoot, false},
		{"a missing key", "open/missing.md", credRoot, false},
		{"an invalid key", "../etc/passwd", credRoot, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Access().CanRead(tt.key, tt.cr); got != tt.want {
				t.Errorf("CanRead(%q, %v) = %v, want %v", tt.key, tt.cr, got, tt.want)
			}
			if got := c.Access().Readable(tt.cr, tt.key)[0]; got != tt.want {
				t.Errorf("Readable(%v, %q) = %v, want %v", tt.cr, tt.key, got, tt.want)
			}
		})
	}
}

func TestCanReadRootDirectoryCounts(t *testing.T) {
	// The root directory's mode is Options.DirMode (the mount's root).
	c := session.NewContext(openStore(t, t.TempDir()), session.Options{DirMode: 0o700})
	if err := c.Mkdir("open", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("open/world.md", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got := c.Access().CanRead("open/world.md", credNobody); got {
		t.Errorf("CanRead under a root directory of mode 0700 = %v, want false", got)
	}
	if got := c.Access().CanRead("open/world.md", credRoot); !got {
		t.Errorf("CanRead by root under a root directory of mode 0700 = %v, want true", got)
	}
}

func TestCanList(t *testing.T) {
	c := accessTree(t)
	tests := []struct {
		name string
		key  string
		cr   session.Cred
		want bool
	}{
		{"the root", "", credNobody, true},
		{"0755", "open", credNobody, true},
		{"0700, not the owner", "shut", credNobody, false},
		{"0700, root", "shut", credRoot, true},
		{"0711: search but no read", "passage", credNobody, false},
		{"0750 group member", "staffdir", credStaff, true},
		{"0750 not a member", "staffdir", credNobody, false},
		{"0755 under a 0700 ancestor", "alicedir/deep", credNobody, false},
		{"0755 under a 0700 ancestor: its owner", "alicedir/deep", credAlice, true},
		{"a file is not a directory", "open/world.md", credRoot, false},
		{"missing", "nowhere", credRoot, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Access().CanList(tt.key, tt.cr); got != tt.want {
				t.Errorf("CanList(%q, %v) = %v, want %v", tt.key, tt.cr, got, tt.want)
			}
		})
	}
}

func TestCanSee(t *testing.T) {
	c := accessTree(t)
	for _, k := range []string{"open/world.md", "shut/world.md"} {
		if err := c.Delete(k); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		key  string
		cr   session.Cred
		want bool
	}{
		{"an existing file: readable", "open/staff.md", credStaff, true},
		{"an existing file: unreadable, though its name lists", "open/alice.md", credNobody, false},
		{"removed from a listable directory", "open/world.md", credNobody, true},
		{"removed from a 0700 directory", "shut/world.md", credNobody, false},
		{"removed from a 0700 directory: root", "shut/world.md", credRoot, true},
		{"never existed under a 0700 directory: its nearest ancestor", "gone/shut/x/y.md", credNobody, false},
		{"never existed under a listable one", "gone/x/y.md", credNobody, true},
		{"an existing directory: its parent lists", "shut", credNobody, true},
		{"an existing directory: its parent does not list", "alicedir/deep", credNobody, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Access().CanSee(tt.key, tt.cr); got != tt.want {
				t.Errorf("CanSee(%q, %v) = %v, want %v", tt.key, tt.cr, got, tt.want)
			}
			if got := c.Access().Seeable(tt.cr, tt.key)[0]; got != tt.want {
				t.Errorf("Seeable(%v, %q) = %v, want %v", tt.cr, tt.key, got, tt.want)
			}
		})
	}
}

func TestCredString(t *testing.T) {
	tests := []struct {
		a, b session.Cred
		same bool
	}{
		{session.Cred{UID: 1, GIDs: []uint32{2, 3}}, session.Cred{UID: 1, GIDs: []uint32{3, 2, 3}}, true},
		{session.Cred{UID: 1, GIDs: []uint32{2}}, session.Cred{UID: 1, GIDs: []uint32{2, 3}}, false},
		{session.Cred{UID: 1}, session.Cred{UID: 12}, false},
		{session.Cred{UID: 1, GIDs: []uint32{2}}, session.Cred{UID: 12}, false},
	}
	for _, tt := range tests {
		if got := tt.a.String() == tt.b.String(); got != tt.same {
			t.Errorf("%q == %q: got %v, want %v", tt.a.String(), tt.b.String(), got, tt.same)
		}
	}
}

func TestCredFromContext(t *testing.T) {
	if _, ok := session.CredFrom(context.Background()); ok {
		t.Errorf("CredFrom of a bare context: got ok, want none")
	}
	got, ok := session.CredFrom(session.WithCred(context.Background(), credAlice))
	if !ok || got.String() != credAlice.String() {
		t.Errorf("CredFrom(WithCred(credAlice)) = %v, %v; want %v, true", got, ok, credAlice)
	}
}
