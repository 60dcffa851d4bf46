package route_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/route"
)

// TestConfig: a config's routes and quotas, those of the mountpoint's own
// table after the top ones, then the flags, a flag replacing the file's
// route of one prefix; an unknown setting is an error.
func TestConfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "memfs.toml")
	os.WriteFile(p, []byte(`
[routes]
"skills/" = "dir:/srv/team-skills:ro"
"scratch/" = "mem:?ttl=1h"

[quotas]
"memory/" = "100MiB,10000files,1MiB"

[mount."/home/ada/memory".routes]
"team/" = "mem:"
`), 0o644)
	c, err := route.ReadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	routes, quotas := c.Flags("/home/ada/memory/", []string{"scratch=mem:"}, nil)
	if got, want := strings.Join(routes, " "), "skills/=dir:/srv/team-skills:ro team/=mem: scratch=mem:"; got != want {
		t.Errorf("routes %q, want %q", got, want)
	}
	if got, want := strings.Join(quotas, " "), "memory/=100MiB,10000files,1MiB"; got != want {
		t.Errorf("quotas %q, want %q", got, want)
	}
	if routes, _ := c.Flags("/elsewhere", nil, nil); len(routes) != 2 {
		t.Errorf("another mountpoint's routes: %v", routes)
	}
	os.WriteFile(p, []byte("[route]\n\"a/\" = \"mem:\"\n"), 0o644)
	if _, err := route.ReadConfig(p); err == nil || !strings.Contains(err.Error(), "unknown setting") {
		t.Errorf("a typo: %v", err)
	}
	t.Setenv("MEMFS_CONFIG", filepath.Join(t.TempDir(), "none.toml"))
	if _, err := route.ReadConfig(route.ConfigPath()); err == nil {
		t.Error("MEMFS_CONFIG naming no file: no error")
	}
}
