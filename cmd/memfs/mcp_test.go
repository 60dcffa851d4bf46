package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memfs/memfs/internal/mcptest"
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

// TestMCPRefusesAMountedStore: memfs mcp does not go through a mount
// yet, and does not open a store a mount serves; it says so.
func TestMCPRefusesAMountedStore(t *testing.T) {
	store, mnt := "dir:"+t.TempDir(), t.TempDir()
	startMount(t, store, mnt, nil)
	_, _, err := run(t, "", "mcp", "--store", store)
	if err == nil || !strings.Contains(err.Error(), "the mount at "+mnt) {
		t.Errorf("memfs mcp on a mounted store: got %v, want a refusal naming the mount", err)
	}
}
