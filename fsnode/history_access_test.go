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
	paths := []string{ // what the per-version checks would let uid 65534 read, and what they would not
		v("memory/open.md", "open1"),
		v("memory/open.md", "open2"),     // 0600 then
		v("memory/closed.md", "closed1"), // 0600 now
		v("memory/priv/x.md", "x1"),      // its directory was 0700 then
		v("memory/priv/x.md", "x2"),
		p("history/memory/open.md/log"),
		at("open1", "memory/open.md"),
		at("x2", "memory/closed.md"), // 0644 then, 0600 now
		at("x1", "memory/priv/x.md"),
	}
	for _, path := range paths { // root first: the kernel caches every entry, attribute and page
		if _, err := os.ReadFile(path); err != nil {
			t.Fatalf("root: cat %s: %v", path, err)
		}
	}
	// Another user of an --allow-other mount gets nothing of the past: not
	// its bytes, not its attributes from the entries root's reads left in
	// the kernel's cache, not its names (see Root.pastTop).
	as := func(args ...string) ([]byte, error) {
		return exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--"}, args...)...).CombinedOutput()
	}
	for _, path := range paths {
		if out, err := as("cat", path); err == nil || !strings.Contains(string(out), "Permission denied") {
			t.Errorf("cat %s as uid 65534: %q, %v; want permission denied", path, out, err)
		}
		if out, err := as("stat", "-c", "%s %a", path); err == nil {
			t.Errorf("stat %s as uid 65534: %q; want permission denied", path, out)
		}
	}
	for _, dir := range []string{"history", "history/memory", "at", "snapshots", "checkpoints"} {
		if out, err := as("ls", p(dir)); err == nil {
			t.Errorf("ls .memfs/%s as uid 65534: %q; want permission denied", dir, out)
		}
	}
	if out, err := as("mkdir", p("snapshots/mine")); err == nil {
		t.Errorf("mkdir .memfs/snapshots/mine as uid 65534 succeeded: %s", out)
	}
	// Root still reads every version, the log whole.
	if got := readFile(t, p("history/memory/open.md/log")); strings.Count(got, "\n") != 3 {
		t.Errorf("log of open.md as root:\n%s; want 3 lines", got)
	}
}
