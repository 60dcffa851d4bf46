package install

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The units' places under PREFIX: both in systemd's unit search paths
// for PREFIX /usr/local (systemd.unit(5), systemd-analyze unit-paths).
const (
	systemUnit = SystemUnit
	userUnit   = UserUnit
)

// installUnits installs under a new prefix with self as the memfs binary
// and returns the prefix.
func installUnits(t *testing.T, self string) string {
	t.Helper()
	prefix := t.TempDir()
	err := Install(Options{
		Prefix:    prefix,
		HelperDir: filepath.Join(prefix, "sbin"),
		Helpers:   []string{"mount.fuse.memfs"},
		Self:      self,
		ManPage:   ".TH memfs 1\n",
	}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return prefix
}

// unitLines reads a unit's lines, trimmed, comments left out.
func unitLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestInstallWritesUnits: install writes both units, their commands
// naming the binary install ran as (where the helper links point), and
// the user unit serves the CLI's default store: it sets no MEMFS_STORE
// and passes no --store, so memfs mount takes the same default as
// memfs mount ~/memory, unless ~/.config/memfs/INSTANCE.env sets one.
func TestInstallWritesUnits(t *testing.T) {
	const self = "/opt/memfs-1.2/bin/memfs"
	prefix := installUnits(t, self)
	units := []struct {
		rel  string
		want []string
	}{
		{systemUnit, []string{
			"Type=notify",
			"ExecStart=" + self + " mount $MEMFS_ARGS %f",
			"ExecStop=" + self + " unmount --timeout 80s %f",
			"ExecStopPost=-" + self + " unmount %f",
			"Environment=MEMFS_STORE=badger:/var/lib/memfs/%i",
			"EnvironmentFile=-/etc/memfs/%i.env",
			"Restart=on-failure", "KillMode=mixed", "WantedBy=multi-user.target",
		}},
		{userUnit, []string{
			"Type=notify",
			"ExecStart=" + self + " mount $MEMFS_ARGS %h/%I",
			"ExecStop=" + self + " unmount --timeout 80s %h/%I",
			"ExecStopPost=-/usr/bin/fusermount3 -u -z %h/%I",
			"EnvironmentFile=-%h/.config/memfs/%i.env",
			"Restart=on-failure", "KillMode=mixed", "WantedBy=default.target",
		}},
	}
	for _, u := range units {
		lines := unitLines(t, filepath.Join(prefix, u.rel))
		have := map[string]bool{}
		for _, l := range lines {
			have[l] = true
			if strings.Contains(l, "/usr/local/bin/memfs") {
				t.Errorf("%s still names /usr/local/bin/memfs: %s", u.rel, l)
			}
		}
		for _, w := range u.want {
			if !have[w] {
				t.Errorf("%s lacks the line %q:\n%s", u.rel, w, strings.Join(lines, "\n"))
			}
		}
	}
	for _, l := range unitLines(t, filepath.Join(prefix, userUnit)) {
		if strings.HasPrefix(l, "Environment=MEMFS_STORE") || strings.Contains(l, "--store") {
			t.Errorf("the user unit chooses a store (%s): it must serve the CLI's default store", l)
		}
	}
}

// TestUnitsVerify runs systemd-analyze verify on the installed units,
// with the binary's path as it is and with one that needs quoting (a
// space, a %, a $) in a unit file.
func TestUnitsVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze on this machine: the units' lines are checked by TestInstallWritesUnits only")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(t.TempDir(), "my bin 100%", "$memfs")
	if err := os.MkdirAll(filepath.Dir(odd), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, odd); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{self, odd} {
		prefix := installUnits(t, bin)
		for _, u := range []struct {
			rel, instance string
			user          bool
		}{
			{systemUnit, "memfs@srv-memory.service", false},
			{userUnit, "memfs@memory.service", true},
		} {
			data, err := os.ReadFile(filepath.Join(prefix, u.rel))
			if err != nil {
				t.Fatal(err)
			}
			// verify takes an instance's name for a template.
			path := filepath.Join(t.TempDir(), u.instance)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"verify", "--man=no", path}
			env := os.Environ()
			if u.user {
				args = append([]string{"--user"}, args...)
				env = append(env, "XDG_RUNTIME_DIR="+t.TempDir())
			}
			cmd := exec.Command(analyze, args...)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			// verify exits 0 on unknown keys and only warns: any output fails.
			if err != nil || len(out) > 0 {
				t.Errorf("memfs at %q: systemd-analyze %s: %v\n%s", bin, strings.Join(args, " "), err, out)
			}
		}
	}
}
