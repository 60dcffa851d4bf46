package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/internal/mcptest"
	"github.com/memfs/memfs/mcpserver"
	"github.com/memfs/memfs/memorytool"
)

func str(s string) *string { return &s }
func num(n int) *int       { return &n }

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

// TestConformanceThreeDoors runs the script three times: through the
// memory tool's handler, through MCP (the SDK's client, the server's
// tools) and, with shell tools, through a real mount, each step made
// durable before the next (a flush; a tool's own; sync on the mount).
// The three stores hold the same tree under memory/, and their event
// logs the same sequence of ops and keys.
func TestConformanceThreeDoors(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("MEMFS_SKIP_MOUNT_TESTS") != "" {
			t.Skip("MEMFS_SKIP_MOUNT_TESTS is set")
		}
		t.Fatalf("the conformance test mounts: it needs /dev/fuse (%v); set MEMFS_SKIP_MOUNT_TESTS=1 to skip it", err)
	}
	type door struct{ tree, events string }
	doors := map[string]door{}

	f, dir := openDir(t)
	h := memorytool.New(f, memorytool.Options{})
	for _, s := range script {
		if _, err := h.Run(t.Context(), s.in); err != nil {
			t.Fatalf("%+v: %v", s.in, err)
		}
		if err := f.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	doors["handler"] = door{tree(t, filepath.Join(dir, "memory")), events(t, f)}

	f, dir = openDir(t)
	cs := connectInMemory(t, mcpserver.New(f, mcpserver.Options{Logger: slog.New(slog.DiscardHandler)}))
	for _, s := range script {
		name, args := toolCall(s.in)
		mcptest.Ok(t, cs, name, args)
	}
	doors["mcp"] = door{tree(t, filepath.Join(dir, "memory")), events(t, f)}

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
	}
	for _, s := range script {
		cmd := exec.Command("sh", "-c", s.shell+" && sync .")
		cmd.Dir = mnt
		if out, err := cmd.CombinedOutput(); err != nil {
			unmount()
			t.Fatalf("%s: %v\n%s", s.shell, err, out)
		}
	}
	unmount()
	doors["mount"] = door{tree(t, filepath.Join(mountDir, "memory")), events(t, mf)}
	if err := mf.Close(context.Background()); err != nil {
		t.Error(err)
	}

	want := doors["mount"]
	if !strings.Contains(want.tree, "memory/a.md\tgamma\\nmid\\nbeta\\n") {
		t.Errorf("the script did not run as written:\n%s", want.tree)
	}
	if !strings.Contains(want.events, "rename memory/e/c.md memory/d/b.md\n") || !strings.Contains(want.events, "delete memory/gone.md \n") {
		t.Errorf("the mount's events lack the script's rename and delete:\n%s", want.events)
	}
	t.Logf("the events of each door:\n%s", want.events)
	for _, name := range []string{"handler", "mcp"} {
		if got := doors[name]; got.tree != want.tree {
			t.Errorf("the %s's tree:\n%s\nthe mount's:\n%s", name, got.tree, want.tree)
		} else if got.events != want.events {
			t.Errorf("the %s's events:\n%s\nthe mount's:\n%s", name, got.events, want.events)
		}
	}
}

// events lists f's events under memory/, one "op key old_key" a line.
func events(t *testing.T, f *memfs.FS) string {
	t.Helper()
	page, err := f.Events().Query(t.Context(), eventlog.Query{KeyPrefix: "memory/", Forward: true, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ev := range page.Events {
		fmt.Fprintf(&b, "%s %s %s\n", ev.Op, ev.Key, ev.OldKey)
	}
	return b.String()
}

// toolCall is the MCP tool call of the memory tool's input in.
func toolCall(in memorytool.Input) (string, map[string]any) {
	args := map[string]any{}
	b, _ := json.Marshal(in)
	_ = json.Unmarshal(b, &args)
	delete(args, "command")
	return in.Command, args
}

// connectInMemory connects the SDK's client to s over its in-memory
// transport.
func connectInMemory(t *testing.T, s *mcpserver.Server) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: mcptest.Client, Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
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
