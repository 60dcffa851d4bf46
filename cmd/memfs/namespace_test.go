package main

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
)

// TestNamespaceAlwaysThere checks that every writable mount shows
// memory/, skills/ and agents/ (persisted directories, made at the first
// mount, made again when removed), never replaces a file that holds one of
// those names, and gives .memfs the mount's time rather than 1970.
func TestNamespaceAlwaysThere(t *testing.T) {
	t.Parallel()
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			spec, err := parseStore(store)
			if err != nil {
				t.Fatal(err)
			}
			mnt := t.TempDir()
			before := time.Now().Add(-time.Second) // the kernel's clock granularity
			p := startMount(t, store, mnt, nil)
			for _, d := range memfs.NamespaceDirs() {
				fi, err := os.Stat(filepath.Join(mnt, d))
				if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
					t.Errorf("%s in a fresh mount: %v, %v; want a 0755 directory", d, fi, err)
				}
			}
			var st syscall.Stat_t
			if err := syscall.Stat(filepath.Join(mnt, ".memfs"), &st); err != nil {
				t.Fatal(err)
			}
			if mt := time.Unix(st.Mtim.Unix()); mt.Before(before) || mt.After(time.Now()) {
				t.Errorf(".memfs mtime %v; want the mount's time (after %v)", mt, before)
			}
			if err := os.Remove(filepath.Join(mnt, "skills")); err != nil {
				t.Fatal(err)
			}
			if err := p.terminate(t); err != nil {
				t.Fatalf("memfs exit: %v\n%s", err, p.log)
			}
			if got := storeDirs(t, spec); !slices.Equal(got, []string{"agents", "memory"}) {
				t.Errorf("the store holds directories %q after a removed skills/; want agents, memory", got)
			}

			// A second mount makes skills/ again; a file named agents
			// (another program's) stays a file.
			st2, err := openStoreAs(spec, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := st2.Delete(t.Context(), "agents"); err != nil {
				t.Fatal(err)
			}
			if err := st2.Save(t.Context(), backend.Entry{Key: "agents", Value: []byte("a file"),
				Info: backend.Info{Mode: 0o644, MTime: time.Unix(1700000000, 0)}}); err != nil {
				t.Fatal(err)
			}
			st2.Close()
			p = startMount(t, store, mnt, nil)
			if fi, err := os.Stat(filepath.Join(mnt, "skills")); err != nil || !fi.IsDir() {
				t.Errorf("skills/ after a remount: %v, %v; want it made again", fi, err)
			}
			if b, err := os.ReadFile(filepath.Join(mnt, "agents")); err != nil || string(b) != "a file" {
				t.Errorf("the file agents after a remount: %q, %v; want it kept", b, err)
			}
			if err := p.terminate(t); err != nil {
				t.Fatalf("memfs exit: %v\n%s", err, p.log)
			}
		})
	}
}

// storeDirs lists the directory entries at the top of the store.
func storeDirs(t *testing.T, spec storeSpec) []string {
	t.Helper()
	st, err := openStoreAs(spec, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	listed, err := st.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range listed {
		if e.Info.Mode.IsDir() && !slices.Contains([]byte(e.Key), '/') {
			dirs = append(dirs, e.Key)
		}
	}
	return dirs
}
