package fsnode_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/session"
)

// callerAnswer names the caller an answer was computed for.
func callerAnswer(ctx context.Context, name string) ([]byte, error) {
	cr, ok := session.CredFrom(ctx)
	if !ok {
		return []byte("for an unknown caller\n"), nil
	}
	return fmt.Appendf(nil, "%s for %s\n", name, cr), nil
}

// Through the kernel, each caller reads the answer computed for it, right
// after another caller read the same name (no page, size or entry of one
// caller's answer is served to the next), with its supplementary groups,
// and stat shows every caller the same size.
func TestMountAnswersPerCallerThroughTheKernel(t *testing.T) {
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("this test runs commands as another user with setpriv (util-linux): %v", err)
	}
	m := mount(t, newDirStore(t, t.TempDir()), mountConfig{
		fopts: fsnode.Options{Search: callerAnswer, ContextPack: callerAnswer},
		mopts: fsnode.MountOptions{AllowOther: true},
	})
	// t.TempDir's directories are 0700: let the other users reach the mount.
	if err := os.Chmod(filepath.Dir(m.dir), 0o755); err != nil {
		t.Fatal(err)
	}
	callers := []struct {
		name string
		priv []string
		want string
	}{
		{"root", nil, "0:0"},
		{"uid 65534", []string{"--reuid=65534", "--regid=65534", "--clear-groups"}, "65534:65534"},
		{"uid 65534 in groups 4242 and 7", []string{"--reuid=65534", "--regid=65534", "--groups=4242,7"}, "65534:7,4242,65534"},
		{"root again", nil, "0:0"},
	}
	for _, file := range []string{".memfs/search/who", ".memfs/context/who", ".memfs/context.md"} {
		for _, c := range callers {
			argv := []string{"sh", "-c", `stat -c %s "$1" && cat "$1"`, "sh", filepath.Join(m.dir, file)}
			if c.priv != nil {
				argv = append(append(append([]string{"setpriv"}, c.priv...), "--"), argv...)
			}
			out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
			name := filepath.Base(file)
			if file == ".memfs/context.md" {
				name = ""
			}
			want := "0\n" + name + " for " + c.want + "\n"
			if err != nil || string(out) != want {
				t.Errorf("stat and cat %s as %s = %q, %v; want %q", file, c.name, out, err, want)
			}
		}
	}
	// The same through one descriptor per caller opened in turn: each
	// open computes for its opener.
	if out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		"cat", filepath.Join(m.dir, ".memfs/search/who"), filepath.Join(m.dir, ".memfs/search/who")).CombinedOutput(); err != nil ||
		strings.Count(string(out), "for 65534:65534") != 2 {
		t.Errorf("cat twice as uid 65534 = %q, %v", out, err)
	}
}
