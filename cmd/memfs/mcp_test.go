package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/hint"
	"github.com/memfs/memfs/internal/mcptest"
	"github.com/memfs/memfs/internal/syncbuf"
	"github.com/memfs/memfs/memorytool"
)

// TestMCPStdio runs memfs mcp (this binary as memfs, see TestMain) and
// drives it over stdio with the SDK's client through every tool; then
// the store, opened by another command, holds what the tools wrote, and
// no secret.
func TestMCPStdio(t *testing.T) {
	dir := t.TempDir()
	store := "dir:" + dir
	cmd := exec.Command(os.Args[0], "mcp", "--store", store, "--agent", "mcp")
	cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	c := mcp.NewClient(&mcp.Implementation{Name: mcptest.Client, Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	mcptest.Exercise(t, cs, "mcp:"+mcptest.Client)
	mcptest.Ok(t, cs, "create", map[string]any{"path": "/memories/kept.md", "file_text": "kept " + mcptest.Secret + "\n"})
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v\n%s", err, stderr.String())
	}
	if got := mustRun(t, "", "cat", "--store", store, "memory/kept.md"); !strings.HasPrefix(got, "kept [REDACTED") {
		t.Errorf("memory/kept.md holds %q, want the note with its secret redacted", got)
	}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), mcptest.Secret) {
			t.Errorf("%s holds the secret", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMCPRefusals: memfs mcp refuses, before it opens the store, to
// listen beyond loopback without a token, and a token file for stdio.
func TestMCPRefusals(t *testing.T) {
	t.Setenv("MEMFS_MCP_TOKEN", "")
	store := "dir:" + t.TempDir()
	for _, args := range [][]string{
		{"mcp", "--store", store, "--http", "0.0.0.0:0"},
		{"mcp", "--store", store, "--token-file", filepath.Join(t.TempDir(), "t")},
	} {
		if _, _, err := run(t, "", args...); err == nil {
			t.Errorf("memfs %s: no error", strings.Join(args, " "))
		}
	}
}

// TestMCPThroughTheMount: memfs mcp on a store a mount serves goes
// through the mount, as the server's user: root's change is at once in
// the mount; uid 65534, serving root's allow_other mount, reads what it
// may read and is refused what it could not do through the mount.
func TestMCPThroughTheMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root: it mounts with --allow-other and runs memfs mcp as uid %d", otherUID)
	}
	store, mnt := "dir:"+t.TempDir(), sharedDir(t)
	bin := sharedBinary(t)
	startMount(t, store, mnt, nil, "--allow-other", "--max-file-size", "65536")
	for name, mode := range map[string]os.FileMode{"shared.md": 0o644, "private.md": 0o600} {
		if err := os.WriteFile(filepath.Join(mnt, "memory", name), []byte(name+" alpha\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	connect := func(argv ...string) *mcp.ClientSession {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1", "HOME=/", "MEMFS_STORE=")
		var stderr syncbuf.Buffer
		cmd.Stderr = &stderr
		c := mcp.NewClient(&mcp.Implementation{Name: mcptest.Client, Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("%v: connect: %v\n%s", argv, err, stderr.String())
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}

	root := connect(bin, "mcp", "--store", store)
	mcptest.Exercise(t, root, "")
	mcptest.Ok(t, root, "create", map[string]any{"path": "/memories/by-mcp.md", "file_text": "through the mount\n"})
	if b, err := os.ReadFile(filepath.Join(mnt, "memory", "by-mcp.md")); err != nil || string(b) != "through the mount\n" {
		t.Errorf("the mount shows the MCP create as %q, %v", b, err)
	}
	// A value past the mount's --max-file-size is refused, and the file
	// keeps its value.
	mcptest.Refused(t, root, "create", map[string]any{"path": "/memories/by-mcp.md", "file_text": strings.Repeat("x", 70000),
		"expected_sha256": memorytool.Sum([]byte("through the mount\n"))})
	if b, err := os.ReadFile(filepath.Join(mnt, "memory", "by-mcp.md")); err != nil || string(b) != "through the mount\n" {
		t.Errorf("after a refused create past --max-file-size the mount shows %.40q, %v; want the old value", b, err)
	}
	text, _ := mcptest.Ok(t, root, "view", map[string]any{"path": "/memories/private.md"})
	if !strings.Contains(text, "private.md alpha") {
		t.Errorf("root's view of private.md: %q", text)
	}

	other := connect("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", bin, "mcp", "--mount", mnt)
	text, _ = mcptest.Ok(t, other, "view", map[string]any{"path": "/memories/shared.md"})
	if !strings.Contains(text, "shared.md alpha") {
		t.Errorf("uid 65534's view of shared.md: %q", text)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"view", map[string]any{"path": "/memories/private.md"}},
		{"str_replace", map[string]any{"path": "/memories/shared.md", "old_str": "alpha", "new_str": "beta"}},
		{"create", map[string]any{"path": "/memories/new.md", "file_text": "x"}},
		{"delete", map[string]any{"path": "/memories/shared.md"}},
		{"tag", map[string]any{"key": "memory/shared.md", "tags": []string{"x"}}},
	} {
		if msg := mcptest.Refused(t, other, c.tool, c.args); !strings.Contains(msg, "permission denied") {
			t.Errorf("uid 65534's %s %v: %q, want a permission denied", c.tool, c.args, msg)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(mnt, "memory", "shared.md")); string(b) != "shared.md alpha\n" {
		t.Errorf("shared.md holds %q after uid 65534's refused changes", b)
	}
	if _, err := os.Stat(filepath.Join(mnt, "memory", "new.md")); err == nil {
		t.Error("uid 65534 created memory/new.md in root's directory")
	}
}

// bearerTransport sends a bearer token with each request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPHTTP runs memfs mcp --http with a token file and drives it
// with the SDK's client through every tool; without the token it is
// refused.
func TestMCPHTTP(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("t0ken-for-the-test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, log := startMCPHTTP(t, "--store", "dir:"+t.TempDir(), "--token-file", tok)
	c := mcp.NewClient(&mcp.Implementation{Name: mcptest.Client, Version: "1"}, nil)
	if cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil); err == nil {
		cs.Close()
		t.Error("connected without the token")
	}
	hc := &http.Client{Transport: bearerTransport{"t0ken-for-the-test"}}
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, log)
	}
	defer cs.Close()
	mcptest.Exercise(t, cs, "mcp:"+mcptest.Client)
}

// startMCPHTTP runs memfs mcp --http on a free loopback port with args,
// stopped (and its exit checked) when the test ends; it returns the URL
// once it listens, and its output.
func startMCPHTTP(t *testing.T, args ...string) (string, *syncbuf.Buffer) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the port memfs mcp takes next
	cmd := exec.Command(os.Args[0], append([]string{"mcp", "--http", addr}, args...)...)
	cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1")
	log := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("memfs mcp --http: %v\n%s", err, log)
		}
	})
	url := "http://" + addr
	if !await.Cond(30*time.Second, 20*time.Millisecond, func() bool {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}) {
		t.Fatalf("memfs mcp --http did not listen at %s\n%s", addr, log)
	}
	return url, log
}

// TestMCPNotifiesAWriteThroughTheMount: a client subscribed over
// (stateless) HTTP to a note's resource, served through the mount, is
// told when a shell writes the note on the mount; the resources read
// what the mount holds.
func TestMCPNotifiesAWriteThroughTheMount(t *testing.T) {
	t.Parallel()
	store, mnt := "dir:"+t.TempDir(), t.TempDir()
	startMount(t, store, mnt, nil)
	note := filepath.Join(mnt, "memory", "watched.md")
	if err := os.WriteFile(note, []byte("v0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url, log := startMCPHTTP(t, "--store", store)
	updated := make(chan string, 64)
	c := mcp.NewClient(&mcp.Implementation{Name: mcptest.Client, Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, log)
	}
	defer cs.Close()
	uri := "memfs://memory/watched.md"
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "v0\n" {
		t.Fatalf("read %s: %v %+v", uri, err, res)
	}
	if res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "memfs://.memfs/context"}); err != nil || !strings.Contains(res.Contents[0].Text, "v0") {
		t.Errorf("read the context pack: %v %+v", err, res)
	}
	go cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}) // under the 2026-07-28 revision, a stream open until the session ends
	// The subscription is live when the server has it: write until a
	// write is notified.
	n := 0
	if !await.Cond(30*time.Second, time.Millisecond, func() bool {
		n++
		if err := os.WriteFile(note, fmt.Appendf(nil, "v%d\n", n), 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-updated:
			return got == uri
		case <-time.After(500 * time.Millisecond):
			return false
		}
	}) {
		t.Fatalf("no notifications/resources/updated of %s after %d writes through the mount\n%s", uri, n, log)
	}
	res, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil || !strings.HasPrefix(res.Contents[0].Text, "v") {
		t.Errorf("read %s after the update: %v %+v", uri, err, res)
	}
}

// TestHintRegistersMCP: memfs hint --write also registers memfs mcp
// where each agent reads its MCP servers (Claude Code's .mcp.json and
// Gemini CLI's .gemini/settings.json and Codex's .codex/config.toml
// beside the instructions file), keeping what else they hold; a second
// run changes nothing.
func TestHintRegistersMCP(t *testing.T) {
	dir := t.TempDir()
	codex := filepath.Join(dir, ".codex")
	if err := os.Mkdir(codex, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MEMFS_STORE", "")
	other := `{"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codex, "config.toml"), []byte("model = \"o3\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"claude": filepath.Join(dir, ".mcp.json"), "gemini": filepath.Join(dir, ".gemini", "settings.json"), "codex": filepath.Join(codex, "config.toml")}
	wants := map[string][]string{
		"claude": {`"other"`, `"theme": "dark"`, `"memfs": {`, `"command": "memfs"`, `"mcp",`, `"--mount",`, `"/home/u/memory"`},
		"gemini": {`"memfs": {`, `"command": "memfs"`, `"/home/u/memory"`},
		"codex":  {"model = \"o3\"\n", "[mcp_servers.memfs]\ncommand = \"memfs\"\nargs = [\"mcp\", \"--mount\", \"/home/u/memory\"]\n# memfs:end\n"},
	}
	for agent, file := range files {
		mustRun(t, "", "hint", "--mount", "/home/u/memory", "--write", agent, filepath.Join(dir, hint.Files[agent]))
		first, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("hint %s --write: %v", agent, err)
		}
		for _, w := range wants[agent] {
			if !strings.Contains(string(first), w) {
				t.Errorf("%s after hint %s --write lacks %q:\n%s", file, agent, w, first)
			}
		}
		out := mustRun(t, "", "hint", "--mount", "/home/u/memory", "--write", agent, filepath.Join(dir, hint.Files[agent]))
		if again, _ := os.ReadFile(file); string(again) != string(first) || !strings.Contains(out, "already registered") {
			t.Errorf("a second hint %s --write changed %s (or said so: %q):\n%s\nthen\n%s", agent, file, out, first, again)
		}
	}
}
