package install

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runInstall installs under prefix, the helper links in prefix/sbin, and
// returns what Install said.
func runInstall(t *testing.T, prefix string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Install(Options{
		Prefix:    prefix,
		HelperDir: filepath.Join(prefix, "sbin"),
		Helpers:   []string{"mount.fuse.memfs", "umount.fuse.memfs"},
		Self:      "/usr/local/bin/memfs",
		ManPage:   ".TH memfs 1\n",
	}, &out, io.Discard)
	return out.String(), err
}

// TestNeverWritesThroughSymlinks: a symlink placed where install
// writes a file (completions, man page) is refused, and its target (here
// a stand-in for /etc/shadow) is left as it was; a symlink at a helper
// link's place is replaced, never followed, and install says what it
// pointed to.
func TestNeverWritesThroughSymlinks(t *testing.T) {
	for _, rel := range []string{
		"share/bash-completion/completions/memfs",
		"share/zsh/site-functions/_memfs",
		"share/man/man1/memfs.1",
		"lib/systemd/system/memfs@.service",
		"lib/systemd/user/memfs@.service",
	} {
		t.Run(rel, func(t *testing.T) {
			prefix := t.TempDir()
			victim := filepath.Join(t.TempDir(), "shadow")
			if err := os.WriteFile(victim, []byte("root:secret\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(prefix, rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, dst); err != nil {
				t.Fatal(err)
			}
			out, err := runInstall(t, prefix)
			if err == nil || !strings.Contains(err.Error(), dst+" is a symlink") {
				t.Errorf("install with a symlink at %s: %v, want a refusal naming it", rel, err)
			}
			if data, _ := os.ReadFile(victim); string(data) != "root:secret\n" {
				t.Errorf("install wrote through the symlink at %s into its target (now %d bytes)", rel, len(data))
			}
			if target, err := os.Readlink(dst); err != nil || target != victim {
				t.Errorf("the symlink at %s is now %q (%v), want it left alone", rel, target, err)
			}
			if strings.Contains(out, "->") {
				t.Errorf("install refused but made the helper links first:\n%s", out)
			}
		})
	}

	t.Run("helper link", func(t *testing.T) {
		prefix := t.TempDir()
		victim := filepath.Join(t.TempDir(), "other-helper")
		if err := os.WriteFile(victim, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(prefix, "sbin", "mount.fuse.memfs")
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
		out, err := runInstall(t, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(victim); string(data) != "#!/bin/sh\n" {
			t.Errorf("install changed the old link's target: %q", data)
		}
		if want := "replaced " + link + " -> " + victim; !strings.Contains(out, want) {
			t.Errorf("install output does not say %q:\n%s", want, out)
		}
	})
}
