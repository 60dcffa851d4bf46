package memorytool_test

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/memorytool"
)

// step is one change of the conformance script: as the memory tool
// makes it, and as a shell makes it on the mount (run in the mount's
// root, with the mount's memory/ as /memories).
type step struct {
	in    memorytool.Input
	shell string
}

var script = []step{
	{memorytool.Input{Command: "create", Path: "/memories/a.md", FileText: str("alpha\nbeta\n")}, `printf 'alpha\nbeta\n' > memory/a.md`},
	{memorytool.Input{Command: "create", Path: "/memories/d/b.md", FileText: str("one\n")}, `mkdir -p memory/d && printf 'one\n' > memory/d/b.md`},
	{memorytool.Input{Command: "str_replace", Path: "/memories/a.md", OldStr: str("alpha"), NewStr: str("gamma")}, `sed -i 's/alpha/gamma/' memory/a.md`},
	{memorytool.Input{Command: "insert", Path: "/memories/a.md", InsertLine: num(1), InsertText: str("mid")}, `sed -i '1a mid' memory/a.md`},
	{memorytool.Input{Command: "create", Path: "/memories/d/x/y.md", FileText: str("deep\n")}, `mkdir -p memory/d/x && printf 'deep\n' > memory/d/x/y.md`},
	{memorytool.Input{Command: "rename", OldPath: "/memories/d/b.md", NewPath: "/memories/e/c.md"}, `mkdir -p memory/e && mv memory/d/b.md memory/e/c.md`},
	{memorytool.Input{Command: "str_replace", Path: "/memories/e/c.md", OldStr: str("one\n"), NewStr: str("")}, `: > memory/e/c.md`},
	{memorytool.Input{Command: "rename", OldPath: "/memories/d/x", NewPath: "/memories/x"}, `mv memory/d/x memory/x`},
	{memorytool.Input{Command: "delete", Path: "/memories/d"}, `rm -r memory/d`},
	{memorytool.Input{Command: "create", Path: "/memories/gone.md", FileText: str("tmp\n")}, `printf 'tmp\n' > memory/gone.md`},
	{memorytool.Input{Command: "delete", Path: "/memories/gone.md"}, `rm memory/gone.md`},
}

// TestConformanceWithMount runs the script through the handler and,
// with shell tools, through a real mount: the two stores hold the same
// tree under memory/.
func TestConformanceWithMount(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("MEMFS_SKIP_MOUNT_TESTS") != "" {
			t.Skip("MEMFS_SKIP_MOUNT_TESTS is set")
		}
		t.Fatalf("the conformance test mounts: it needs /dev/fuse (%v); set MEMFS_SKIP_MOUNT_TESTS=1 to skip it", err)
	}
	f, toolDir := open(t)
	h := memorytool.New(f, memorytool.Options{})
	for _, s := range script {
		run(t, h, s.in)
	}
	if err := f.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}

	mountDir := filepath.Join(t.TempDir(), "store")
	mnt := t.TempDir()
	st, err := dirstore.Open(mountDir)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := memfs.Open(t.Context(), st, memfs.Options{JournalPath: filepath.Join(mountDir, dirstore.JournalName),
		Namespace: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mf.Mount(mnt, memfs.MountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- m.Serve(ctx) }()
	unmount := func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
		if err := mf.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}
	for _, s := range script {
		cmd := exec.Command("sh", "-c", s.shell)
		cmd.Dir = mnt
		if out, err := cmd.CombinedOutput(); err != nil {
			unmount()
			t.Fatalf("%s: %v\n%s", s.shell, err, out)
		}
	}
	unmount()

	got, want := tree(t, filepath.Join(toolDir, "memory")), tree(t, filepath.Join(mountDir, "memory"))
	if got != want {
		t.Errorf("the handler's tree:\n%s\nthe mount's:\n%s", got, want)
	}
	if !strings.Contains(want, "memory/a.md\tgamma\\nmid\\nbeta\\n") {
		t.Errorf("the script did not run as written:\n%s", want)
	}
}

// tree lists the files and directories under dir as the store holds
// them, with each file's content.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(dir), p)
		if d.IsDir() {
			b.WriteString(rel + "/\n")
			return nil
		}
		v, err := os.ReadFile(p)
		b.WriteString(rel + "\t" + strings.ReplaceAll(string(v), "\n", `\n`) + "\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
