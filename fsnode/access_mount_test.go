package fsnode_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/session"
	"github.com/memfs/memfs/status"
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
// and stat shows every caller the size of its own answer.
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
			answer := name + " for " + c.want + "\n"
			want := fmt.Sprintf("%d\n%s", len(answer), answer) // the caller's own size, as .memfs/status's
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

// The query file of .memfs/search/ and .memfs/context/ takes a query of
// any length (a file name holds at most 255 bytes on many kernels): opened
// read-write, the query is written and its answer read back from offset
// 0, for the opener's credential. Each open is its own exchange; a read
// before any write, a write after the answer, an open that is not
// read-write and a query past 64 KiB are refused.
func TestMountQueryFile(t *testing.T) {
	m := mount(t, newDirStore(t, t.TempDir()), mountConfig{
		fopts: fsnode.Options{Search: callerAnswer, ContextPack: callerAnswer},
	})
	long := strings.Repeat("kernel%20cache%20", 1000)
	for _, dir := range []string{"search", "context"} {
		p := filepath.Join(m.dir, ".memfs", dir, status.QueryFile)
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatalf("open %s read-write: %v", p, err)
		}
		if _, err := f.Write([]byte(long[:5000])); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(long[5000:] + "\n")); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<40))
		if want := long + " for 0:0\n"; err != nil || string(b) != want {
			t.Errorf("%s: read back %d bytes (%v), want the answer to the %d-byte query", dir, len(b), err, len(long))
		}
		_, err = f.Write([]byte("more"))
		wantErrno(t, "a write after the answer", err, syscall.EINVAL)
		f.Close()

		f2, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f2.ReadAt(make([]byte, 10), 0)
		wantErrno(t, "a read before any query", err, syscall.EINVAL)
		f2.Close()

		f3, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f3.Write(make([]byte, 64<<10+1))
		wantErrno(t, "a query past 64 KiB", err, syscall.EFBIG)
		f3.Close()

		_, err = os.ReadFile(p)
		wantErrno(t, "a read-only open", err, syscall.EINVAL)
	}
	// The query ".query" itself is still asked, percent-encoded.
	if got := readFile(t, filepath.Join(m.dir, ".memfs", "search", "%2Equery")); got != "%2Equery for 0:0\n" {
		t.Errorf("the query %%2Equery = %q", got)
	}
}
