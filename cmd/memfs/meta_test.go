package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/tree"
)

// setx sets attributes through a mount and fails the test on error.
func setx(t *testing.T, path string, kv ...string) {
	t.Helper()
	for i := 0; i < len(kv); i += 2 {
		if err := unix.Setxattr(path, kv[i], []byte(kv[i+1]), 0); err != nil {
			t.Fatalf("setxattr %s %s: %v", path, kv[i], err)
		}
	}
}

func lines(s string) string { return strings.Join(strings.Fields(s), " ") }

// Metadata set through the mount is kept by the store, filtered on by ls
// (through the live mount and on the store), and carried by export and
// import; the writer names the mount's --agent.
func TestMetadataFiltersAndExport(t *testing.T) {
	t.Parallel()
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			mnt := t.TempDir()
			p := startMount(t, store, mnt, nil, "--agent", "planner")
			os.MkdirAll(filepath.Join(mnt, "memory"), 0o755)
			notes := map[string][]string{
				"memory/a.md": {meta.Tags, "go,fuse", meta.Importance, "0.9", meta.Source, "agent", meta.Agent, "planner"},
				"memory/b.md": {meta.Tags, "go", meta.Importance, "0.2", meta.Source, "user"},
				"memory/c.md": {meta.Source, "system", "user.free", "text"},
				"notes/d.md":  {meta.Tags, "fuse", meta.Agent, "critic"},
			}
			for k, kv := range notes {
				f := filepath.Join(mnt, k)
				os.MkdirAll(filepath.Dir(f), 0o755)
				if err := os.WriteFile(f, []byte("note "+k+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				setx(t, f, kv...)
			}
			cases := []struct {
				args []string
				want string
			}{
				{[]string{"--tag", "go"}, "memory/a.md memory/b.md"},
				{[]string{"--tag", "go", "--tag", "fuse"}, "memory/a.md"},
				{[]string{"--source", "user"}, "memory/b.md"},
				{[]string{"--agent", "critic"}, "notes/d.md"},
				{[]string{"--importance-min", "0.5"}, "memory/a.md"},
				{[]string{"--prefix", "notes/"}, "notes/d.md"},
				{[]string{"--since", "1h"}, "memory/a.md memory/b.md memory/c.md notes/d.md"},
				{[]string{"--until", "2000-01-01"}, ""},
			}
			for _, c := range cases {
				if got := lines(mustRun(t, "", append([]string{"ls", "--mount", mnt}, c.args...)...)); got != c.want {
					t.Errorf("ls --mount %v = %q, want %q", c.args, got, c.want)
				}
			}
			buf := make([]byte, 256)
			n, err := unix.Getxattr(filepath.Join(mnt, "memory/a.md"), meta.Writer, buf)
			if err != nil || !strings.Contains(string(buf[:n]), `"agent":"planner"`) {
				t.Errorf("writer = %s, %v; want the mount's agent label", buf[:n], err)
			}
			p.stop(t)

			for _, c := range cases {
				if got := lines(mustRun(t, "", append([]string{"ls", "--store", store}, c.args...)...)); got != c.want {
					t.Errorf("ls --store %v = %q, want %q", c.args, got, c.want)
				}
			}
			long := mustRun(t, "", "ls", "-l", "--store", store, "memory/a.md")
			if !strings.Contains(long, "memory/a.md  tags=go,fuse  importance=0.9") {
				t.Errorf("ls -l does not show tags and importance:\n%s", long)
			}
			if _, _, err := run(t, "", "ls", "--store", store, "--importance-min", "2"); err == nil {
				t.Error("ls --importance-min 2 succeeded")
			}
			if _, _, err := run(t, "", "ls", "--store", store, "--since", "yesterday"); err == nil {
				t.Error("ls --since yesterday succeeded")
			}

			// export writes the attributes as the files' own; import
			// into a store of the other kind reads them back.
			exp := t.TempDir()
			mustRun(t, "", "export", "--store", store, exp)
			got, err := tree.FileXAttrs(filepath.Join(exp, "memory/a.md"))
			if err != nil || string(got[meta.Tags]) != "go,fuse" || got[meta.Created] == nil || got[meta.Writer] == nil {
				t.Fatalf("exported attributes = %q, %v", got, err)
			}
			other := "dir:" + t.TempDir()
			if strings.HasPrefix(store, "dir:") {
				other = "badger:" + t.TempDir()
			}
			mustRun(t, "", "import", "--store", other, exp)
			for _, c := range cases {
				if got := lines(mustRun(t, "", append([]string{"ls", "--store", other}, c.args...)...)); got != c.want {
					t.Errorf("after export+import: ls %v = %q, want %q", c.args, got, c.want)
				}
			}
		})
	}
}
