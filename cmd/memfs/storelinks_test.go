package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs"
)

// TestSymlinksInTheStoreDirectory: a store that arrives by git pull, rsync
// or unzip can carry a symlink where memfs keeps its own files (journal,
// lock, system records, badger's files). memfs must never follow one: no
// command, read-only or not, changes what the link points to, and each
// fails with an error that names the link.
func TestSymlinksInTheStoreDirectory(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind, name string
		dir        bool // the link points to a directory
	}{
		{"dir", ".memfs-sys/.journal", false},
		{"dir", ".memfs-sys/.lock", false},
		{"dir", ".memfs-journal", false}, // the layout before's
		{"dir", ".memfs.lock", false},
		{"dir", ".memfs-sys", true},
		{"dir", ".memfs-sys/events", true},
		{"badger", "memfs.journal", false},
		{"badger", "memfs.lock", false},
		{"badger", "MANIFEST", false},
		{"badger", "000001.vlog", false},
	}
	// One note is put once per kind, into a seed store each case's store
	// starts as a copy of.
	seeds := map[string]string{}
	for _, kind := range []string{"dir", "badger"} {
		seeds[kind] = t.TempDir()
		mustRun(t, "a note\n", "put", "--store", kind+":"+seeds[kind], "memory/a.md")
	}
	for _, tc := range cases {
		t.Run(tc.kind+"/"+tc.name, func(t *testing.T) {
			t.Parallel() // the mount below runs in a process of its own
			dir := t.TempDir()
			if out, err := exec.Command("cp", "-a", seeds[tc.kind]+"/.", dir).CombinedOutput(); err != nil {
				t.Fatalf("copy the seed store: %v: %s", err, out)
			}
			store := tc.kind + ":" + dir
			outside := t.TempDir()
			target := filepath.Join(outside, "precious")
			if tc.dir {
				if err := os.MkdirAll(filepath.Join(target, "events"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(target, "events", "keep"), []byte("precious\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(target, []byte("precious\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, tc.name)
			if err := os.RemoveAll(link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			before := snapshotTree(t, outside)

			for _, args := range [][]string{
				{"ls", "--store", store},
				{"cat", "--store", store, "memory/a.md"},
				{"put", "--store", store, "memory/b.md"},
				{"log", "--store", store},
			} {
				_, errOut, err := run(t, "new\n", args...)
				if err == nil {
					t.Errorf("memfs %s succeeded with %s a symlink", args[0], tc.name)
				} else if msg := err.Error() + errOut; !strings.Contains(msg, tc.name) || !strings.Contains(msg, "symbolic link") {
					t.Errorf("memfs %s: %q does not name the link %s as a symbolic link", args[0], msg, tc.name)
				}
			}

			// A mount refuses the store too, before it mounts anything.
			mnt := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "mount", "--store", store, mnt)
			cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1", "XDG_STATE_HOME="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if isMounted(mnt) {
				exec.Command("umount", "-l", mnt).Run()
				t.Fatalf("memfs mounted a store with %s a symlink", tc.name)
			}
			if err == nil || !bytes.Contains(out, []byte(tc.name)) || !bytes.Contains(out, []byte("symbolic link")) {
				t.Errorf("memfs mount: %v, %q; want a failure naming the link", err, out)
			}

			if after := snapshotTree(t, outside); after != before {
				t.Fatalf("what the link points to changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// snapshotTree describes every file under dir: name, mode, size, mtime and
// content.
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(p + " " + fi.Mode().String() + " " + fi.ModTime().String())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString(" " + string(data))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestOverlapThroughSymlinks: the kernel would deadlock serving a mount
// from a store inside it (or the mount would show itself); the check must
// hold when the store or the mountpoint is given through a symlink.
func TestOverlapThroughSymlinks(t *testing.T) {
	base := t.TempDir()
	store := filepath.Join(base, "store")
	inside := filepath.Join(store, "mnt")
	other := filepath.Join(base, "other")
	for _, d := range []string{inside, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	storeLink := filepath.Join(base, "store-link")
	mntLink := filepath.Join(base, "mnt-link")
	outerLink := filepath.Join(base, "outer-link") // a mountpoint that holds the store
	for _, l := range [][2]string{{store, storeLink}, {inside, mntLink}, {base, outerLink}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, mnt, store string
		overlap          bool
	}{
		{"store through a link, mountpoint inside it", inside, storeLink, true},
		{"mountpoint through a link into the store", mntLink, store, true},
		{"both through links", mntLink, storeLink, true},
		{"store under a mountpoint given through a link", filepath.Join(outerLink, "other"), filepath.Join(other, "s"), true},
		{"apart, through links", filepath.Join(outerLink, "other"), storeLink, false},
		{"apart", other, store, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := memfs.CheckOverlap(tc.mnt, tc.store)
			if tc.overlap && err == nil {
				t.Fatalf("mountpoint %s and store %s: no error, want an overlap", tc.mnt, tc.store)
			}
			if !tc.overlap && err != nil {
				t.Fatalf("mountpoint %s and store %s: %v, want none", tc.mnt, tc.store, err)
			}
		})
	}
	// A store that does not exist yet is resolved through its nearest
	// existing parent.
	if err := memfs.CheckOverlap(inside, filepath.Join(storeLink, "mnt", "new", "deeper")); err == nil {
		t.Error("a new store inside the mountpoint, given through a link: no error")
	}
	if err := memfs.CheckOverlap(filepath.Join(storeLink, "mnt"), filepath.Join(store, "mnt", "s")); err == nil {
		t.Error("a new store inside the mountpoint, both through links: no error")
	}
}
