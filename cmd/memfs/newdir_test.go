package main

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// listed reports whether the listing of directory dir on the mount (an
// os.ReadDir, as ls does) holds name.
func listed(dir, name string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() == name })
}

// TestExternalNewDirListed: a directory another program makes in a
// directory store shows in the listing of its parent on the mount (and
// every level of a nested one in the listing above it), although the
// kernel had that listing cached, in the default route and in a read-only
// route (a team's new skill). The kernel keeps a directory's listing
// (FOPEN_CACHE_DIR) until the directory changes through the mount or its
// mtime moves: a directory applied behind it must move its parent's.
func TestExternalNewDirListed(t *testing.T) {
	store, team, mnt := t.TempDir(), t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(store, "memory"), 0o755)
	os.WriteFile(filepath.Join(store, "memory/a.md"), []byte("a\n"), 0o644)
	os.MkdirAll(filepath.Join(team, "git"), 0o755)
	os.WriteFile(filepath.Join(team, "git/SKILL.md"), []byte("the git skill\n"), 0o644)
	p := startMount(t, "dir:"+store, mnt, nil, "--route", "skills/=dir:"+team+":ro")
	defer func() {
		if t.Failed() {
			t.Logf("the mount's log:\n%s", p.log)
		}
	}()
	m := func(k string) string { return filepath.Join(mnt, filepath.FromSlash(k)) }

	tests := []struct {
		name string
		// dirs are made (MkdirAll) under root, then files written;
		// with moveIn, under another directory, and the key moveIn
		// there then moved into root whole.
		root   string
		dirs   []string
		files  map[string]string
		moveIn string
		// want are the mount's keys each to be listed in its parent.
		want []string
	}{
		{
			name: "empty directory",
			root: store, dirs: []string{"memory/empty"},
			want: []string{"memory/empty"},
		},
		{
			name: "a directory in the root",
			root: store, dirs: []string{"top"},
			want: []string{"top"},
		},
		{
			name: "nested empty directories",
			root: store, dirs: []string{"memory/e1/e2/e3"},
			want: []string{"memory/e1", "memory/e1/e2", "memory/e1/e2/e3"},
		},
		{
			name: "directory with a file",
			root: store, dirs: []string{"memory/d2"}, files: map[string]string{"memory/d2/f.md": "y"},
			want: []string{"memory/d2", "memory/d2/f.md"},
		},
		{
			name: "nested directories with a file",
			root: store, dirs: []string{"memory/a/b/c"}, files: map[string]string{"memory/a/b/c/f.md": "deep"},
			want: []string{"memory/a", "memory/a/b", "memory/a/b/c", "memory/a/b/c/f.md"},
		},
		{
			name: "a directory tree moved in",
			root: store, dirs: []string{"memory/x/y/z"}, files: map[string]string{"memory/x/y/z/f.md": "moved"},
			moveIn: "memory/x",
			want:   []string{"memory/x", "memory/x/y", "memory/x/y/z", "memory/x/y/z/f.md"},
		},
		{
			name: "a new skill in a read-only route",
			root: team, dirs: []string{"newskill"}, files: map[string]string{"newskill/SKILL.md": "a new skill\n"},
			want: []string{"skills/newskill", "skills/newskill/SKILL.md"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mountKey := func(k string) string {
				if tt.root == team {
					return "skills/" + k
				}
				return k
			}
			// The kernel caches the listing the new directory goes
			// into, and looks up none of the new names (a lookup
			// would leave an entry, negative, for the mount to
			// invalidate).
			if _, err := os.ReadDir(m(path.Dir(tt.want[0]))); err != nil {
				t.Fatal(err)
			}
			ev := watchDir(t, m(path.Dir(tt.want[0])))
			build := tt.root
			if tt.moveIn != "" {
				build = t.TempDir()
			}
			for _, d := range tt.dirs {
				if err := os.MkdirAll(filepath.Join(build, filepath.FromSlash(d)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for k, v := range tt.files {
				if err := os.WriteFile(filepath.Join(build, filepath.FromSlash(k)), []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.moveIn != "" {
				if err := os.Rename(filepath.Join(build, filepath.FromSlash(tt.moveIn)), filepath.Join(tt.root, filepath.FromSlash(tt.moveIn))); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range tt.want {
				dir, name := path.Split(k)
				waitFor(t, k+" listed in /"+dir+" on the mount", 5*time.Second, func() bool { return listed(m(dir), name) })
			}
			waitFor(t, "a create event for "+tt.want[0], 5*time.Second, func() bool { return ev.has(path.Base(tt.want[0]), fsnotify.Create) })
			for k, v := range tt.files {
				if got := readBack(m(mountKey(k))); got != v {
					t.Errorf("%s on the mount reads %q, want %q", mountKey(k), got, v)
				}
			}
		})
	}
	// Every file was made by the helper through the mount (its
	// directories were there for it: no mkdir of its own, which a
	// read-only route refuses).
	if strings.Contains(p.log.String(), "mount helper") {
		t.Errorf("the mount helper did not carry out every change:\n%s", p.log)
	}
}
