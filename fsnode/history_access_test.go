package fsnode_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/history"
)

// A reader sees a past version only if it may read the key now and could
// read the version then (its mode and owner, its directories' then):
// uid 65534 through --allow-other, after root has read everything (so
// that the kernel's caches hold it all).
func TestMountHistoryAccess(t *testing.T) {
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("this test runs commands as another user with setpriv (util-linux): %v", err)
	}
	st := newDirStore(t, t.TempDir())
	h := newTestHistory(t, st)
	seq := map[string]uint64{}
	h.record(history.OpWrite, dirEntry("memory", 0o755, 0))
	seq["open1"] = h.record(history.OpWrite, file("memory/open.md", "open v1\n", 0o644, 0, 1))
	seq["open2"] = h.record(history.OpWrite, file("memory/open.md", "open v2, private then\n", 0o600, 0, 2))
	seq["open3"] = h.record(history.OpWrite, file("memory/open.md", "open v3\n", 0o644, 0, 3))
	seq["closed1"] = h.record(history.OpWrite, file("memory/closed.md", "open then, closed now\n", 0o644, 0, 1))
	h.record(history.OpWrite, dirEntry("memory/priv", 0o700, 0))
	seq["x1"] = h.record(history.OpWrite, file("memory/priv/x.md", "x1: in a 0700 directory then\n", 0o644, 0, 1))
	h.record(history.OpAttr, dirEntry("memory/priv", 0o755, 0))
	seq["x2"] = h.record(history.OpWrite, file("memory/priv/x.md", "x2: in a 0755 directory\n", 0o644, 0, 2))
	present := []backend.Entry{dirEntry("memory", 0o755, 0), file("memory/open.md", "open v3\n", 0o644, 0, 3),
		file("memory/closed.md", "open then, closed now\n", 0o600, 0, 4), dirEntry("memory/priv", 0o755, 0),
		file("memory/priv/x.md", "x2: in a 0755 directory\n", 0o644, 0, 2)}
	if err := st.Save(t.Context(), present...); err != nil {
		t.Fatal(err)
	}
	m := mount(t, st, mountConfig{fopts: fsnode.Options{History: h}, mopts: fsnode.MountOptions{AllowOther: true}})
	h.c = m.c
	if err := os.Chmod(filepath.Dir(m.dir), 0o755); err != nil {
		t.Fatal(err)
	}
	p := func(rel string) string { return filepath.Join(m.dir, ".memfs", rel) }
	v := func(key, name string) string { return p("history/" + key + "/" + ver(seq[name])) }
	at := func(name, key string) string { return p("at/" + itoa(seq[name]) + "/" + key) }
	cases := []struct {
		path string
		ok   bool // uid 65534 may read it
	}{
		{v("memory/open.md", "open1"), true},
		{v("memory/open.md", "open2"), false}, // 0600 then
		{v("memory/open.md", "open3"), true},
		{v("memory/closed.md", "closed1"), false}, // 0600 now
		{v("memory/priv/x.md", "x1"), false},      // its directory was 0700 then
		{v("memory/priv/x.md", "x2"), true},
		{at("open1", "memory/open.md"), true},
		{at("open2", "memory/open.md"), false},
		{at("x2", "memory/closed.md"), false}, // 0644 then, 0600 now
		{at("x1", "memory/priv/x.md"), false},
		{at("x2", "memory/priv/x.md"), true},
	}
	for _, c := range cases { // root first: the kernel caches every entry, attribute and page
		if _, err := os.ReadFile(c.path); err != nil {
			t.Fatalf("root: cat %s: %v", c.path, err)
		}
	}
	for _, c := range cases {
		out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "cat", c.path).CombinedOutput()
		if (err == nil) != c.ok {
			t.Errorf("cat %s as uid 65534: %q, %v; want allowed %v", c.path, out, err, c.ok)
		}
		if !c.ok && strings.Contains(string(out), "open then") || !c.ok && strings.Contains(string(out), "x1") {
			t.Errorf("cat %s as uid 65534 printed %q", c.path, out)
		}
	}
	// The log shows uid 65534 the versions it could read then.
	out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "cat", p("history/memory/open.md/log")).CombinedOutput()
	if err != nil || strings.Count(string(out), "\n") != 2 || strings.Contains(string(out), ver(seq["open2"])) {
		t.Errorf("log of open.md as uid 65534:\n%s(%v); want the lines of v1 and v3", out, err)
	}
	if got := readFile(t, p("history/memory/open.md/log")); strings.Count(got, "\n") != 3 {
		t.Errorf("log of open.md as root:\n%s; want 3 lines", got)
	}
	// A key it may not read now: not even listed.
	out, err = exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "ls", p("history/memory")).CombinedOutput()
	if err != nil || strings.Contains(string(out), "closed.md") || !strings.Contains(string(out), "open.md") {
		t.Errorf("ls .memfs/history/memory as uid 65534: %q, %v; want open.md, not closed.md", out, err)
	}
	// Nor may it take or remove a snapshot.
	if out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "mkdir", p("snapshots/mine")).CombinedOutput(); err == nil {
		t.Errorf("mkdir .memfs/snapshots/mine as uid 65534 succeeded: %s", out)
	}
}
