// Package mcptest drives a memfs MCP server with the SDK's own client
// through every tool and every refusal, whatever the transport: the
// tests of package mcpserver (HTTP) and of the command (stdio, the real
// binary) call Exercise. It imports testing: tests only.
package mcptest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Client is the name the tests' client gives the server.
const Client = "memfs-test"

// Tools are the server's tools.
var Tools = []string{"context_pack", "create", "delete", "history", "insert", "log", "rename", "revert", "search", "snapshot", "str_replace", "summary_add", "tag", "view"}

// Secret is a token the redaction rules find (a GitHub token's shape).
const Secret = "ghp_" + "Q7wErT9yUi0pAs1dFg2hJk3lZx4cVb5nM6qW"

// Call calls tool with args and returns its text and whether it is a
// tool error; a protocol error fails the test.
func Call(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) (string, map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	var structured map[string]any
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(raw, &structured)
	}
	return b.String(), structured, res.IsError
}

// Ok calls tool and fails the test on a tool error.
func Ok(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) (string, map[string]any) {
	t.Helper()
	text, st, isErr := Call(t, cs, tool, args)
	if isErr {
		t.Fatalf("%s %v: tool error %q", tool, args, text)
	}
	return text, st
}

// Refused calls tool, wants a tool error, and returns its text.
func Refused(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	text, _, isErr := Call(t, cs, tool, args)
	if !isErr {
		t.Fatalf("%s %v: got %q, want a tool error", tool, args, text)
	}
	return text
}

func wantIn(t testing.TB, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s: %q does not hold %q", what, got, w)
		}
	}
}

// Exercise calls every tool of the server cs is connected to, on an
// empty store, and checks each answer and each refusal. writer is the
// agent the events of its changes must name ("": not checked, as through
// a mount, which names the server's process).
func Exercise(t *testing.T, cs *mcp.ClientSession, writer string) {
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ann := map[string]*mcp.ToolAnnotations{}
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		ann[tool.Name] = tool.Annotations
	}
	slices.Sort(names)
	if !slices.Equal(names, Tools) {
		t.Errorf("tools: got %v, want %v", names, Tools)
	}
	for _, ro := range []string{"view", "search", "context_pack", "log", "history"} {
		if a := ann[ro]; a == nil || !a.ReadOnlyHint {
			t.Errorf("%s is not annotated read-only: %+v", ro, a)
		}
	}
	for _, w := range []string{"revert", "snapshot", "summary_add"} {
		if a := ann[w]; a == nil || a.ReadOnlyHint {
			t.Errorf("%s is annotated read-only: %+v", w, a)
		}
	}
	for _, d := range []string{"delete", "str_replace", "rename", "insert"} {
		if a := ann[d]; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
			t.Errorf("%s is not annotated destructive: %+v", d, a)
		}
	}
	if a := ann["create"]; a == nil || !a.IdempotentHint {
		t.Errorf("create is not annotated idempotent: %+v", a)
	}

	text, st := Ok(t, cs, "create", map[string]any{"path": "/memories/notes/a.md", "file_text": "alpha beta\nbeta\n"})
	wantIn(t, "create", text, "File created successfully at: /memories/notes/a.md")
	sum, _ := st["sha256"].(string)
	if len(sum) != 64 {
		t.Errorf("create: structured sha256 %v", st)
	}
	text, _ = Ok(t, cs, "view", map[string]any{"path": "/memories"})
	wantIn(t, "view /memories", text, "up to 2 levels deep in /memories", "\t/memories/notes\n", "\t/memories/notes/a.md\n")
	text, _ = Ok(t, cs, "view", map[string]any{"path": "/memories/notes/a.md", "view_range": []int{2, -1}})
	if want := "Here's the content of /memories/notes/a.md with line numbers:\n     2\tbeta\n"; text != want {
		t.Errorf("view with view_range: got %q, want %q", text, want)
	}
	wantIn(t, "non-unique str_replace", Refused(t, cs, "str_replace", map[string]any{"path": "/memories/notes/a.md", "old_str": "beta", "new_str": "x"}),
		"Multiple occurrences of old_str `beta` in lines: 1, 2")
	wantIn(t, "stale sha256", Refused(t, cs, "str_replace", map[string]any{"path": "/memories/notes/a.md", "old_str": "alpha", "new_str": "gamma",
		"expected_sha256": strings.Repeat("0", 64)}), sum)
	text, st = Ok(t, cs, "str_replace", map[string]any{"path": "/memories/notes/a.md", "old_str": "alpha", "new_str": "gamma", "expected_sha256": sum})
	wantIn(t, "str_replace", text, "The memory file has been edited.", "     1\tgamma beta\n")
	if st["sha256"] == sum {
		t.Error("str_replace: the sha256 did not change")
	}
	text, _ = Ok(t, cs, "insert", map[string]any{"path": "/memories/notes/a.md", "insert_line": 0, "insert_text": "# notes"})
	wantIn(t, "insert", text, "The file /memories/notes/a.md has been edited.")
	text, _ = Ok(t, cs, "view", map[string]any{"path": "/memories/notes/a.md"})
	wantIn(t, "view after insert", text, "     1\t# notes\n     2\tgamma beta\n     3\tbeta\n")
	Refused(t, cs, "insert", map[string]any{"path": "/memories/notes/a.md", "insert_line": 9, "insert_text": "x"})

	for _, p := range []string{"/memories/../etc/passwd", "/etc/passwd", "/memories/a\x00b", "/memories/./a"} {
		wantIn(t, "traversal "+p, Refused(t, cs, "create", map[string]any{"path": p, "file_text": "x"}), "Error: the path")
		Refused(t, cs, "view", map[string]any{"path": p})
	}
	msg := Refused(t, cs, "create", map[string]any{"path": "/memories/" + Secret + ".md", "file_text": "x"})
	if strings.Contains(msg, Secret) {
		t.Errorf("the refusal of a secret name shows the secret: %q", msg)
	}
	wantIn(t, "secret name", msg, "secret")

	text, _ = Ok(t, cs, "rename", map[string]any{"old_path": "/memories/notes/a.md", "new_path": "/memories/notes/b.md"})
	wantIn(t, "rename", text, "Successfully renamed /memories/notes/a.md to /memories/notes/b.md")
	Refused(t, cs, "view", map[string]any{"path": "/memories/notes/a.md"})
	text, _ = Ok(t, cs, "tag", map[string]any{"key": "memory/notes/b.md", "tags": []string{"project", "todo"}})
	wantIn(t, "tag", text, "project,todo")
	Refused(t, cs, "tag", map[string]any{"key": "memory/../x", "tags": []string{"a"}})
	Refused(t, cs, "tag", map[string]any{"key": "memory/none.md", "tags": []string{"a"}})

	text, _ = Ok(t, cs, "search", map[string]any{"query": "gamma", "mode": "keyword", "top_k": 5})
	wantIn(t, "search", text, `"memory/notes/b.md"`)
	text, _ = Ok(t, cs, "search", map[string]any{"query": "gamma", "mode": "keyword", "tags": []string{"todo"}})
	wantIn(t, "search by tag", text, `"memory/notes/b.md"`)
	text, _ = Ok(t, cs, "context_pack", map[string]any{"query": "gamma", "max_chars": 4000})
	wantIn(t, "context_pack", text, "gamma beta")
	text, _ = Ok(t, cs, "context_pack", map[string]any{"manifest": true})
	wantIn(t, "context_pack manifest", text, "memory/notes/b.md")
	text, _ = Ok(t, cs, "history", map[string]any{"key": "memory/notes/b.md"})
	wantIn(t, "history", text, `"memory/notes/b.md"`)
	Refused(t, cs, "history", map[string]any{"key": "/etc/passwd"})

	text, _ = Ok(t, cs, "snapshot", map[string]any{"name": "before-revert"})
	wantIn(t, "snapshot", text, "before-revert")
	Refused(t, cs, "snapshot", map[string]any{"name": "a/b/c"})
	// Outside memory/notes/, whose events the log check below holds to
	// the client's writer: the engine's revert writes as the server.
	Ok(t, cs, "create", map[string]any{"path": "/memories/r.md", "file_text": "first\n"})
	Ok(t, cs, "str_replace", map[string]any{"path": "/memories/r.md", "old_str": "first", "new_str": "second"})
	text, _ = Ok(t, cs, "revert", map[string]any{"key": "memory/r.md"})
	wantIn(t, "revert", text, "memory/r.md")
	text, _ = Ok(t, cs, "view", map[string]any{"path": "/memories/r.md"})
	wantIn(t, "view after revert", text, "     1\tfirst\n")
	Refused(t, cs, "revert", map[string]any{"key": "memory/none.md"})
	text, _ = Ok(t, cs, "summary_add", map[string]any{"run": "r1", "step": "s1", "text": "learned gamma"})
	wantIn(t, "summary_add", text, "r1/s1")
	text, _ = Ok(t, cs, "context_pack", map[string]any{"max_chars": 4000})
	wantIn(t, "context_pack after summary_add", text, "learned gamma")
	Refused(t, cs, "summary_add", map[string]any{"run": "r1", "step": "s2", "text": " "})

	text, _ = Ok(t, cs, "delete", map[string]any{"path": "/memories/notes"})
	wantIn(t, "delete", text, "Successfully deleted /memories/notes")
	wantIn(t, "view after delete", Refused(t, cs, "view", map[string]any{"path": "/memories/notes/b.md"}), "does not exist")
	Refused(t, cs, "delete", map[string]any{"path": "/memories"})

	text, _ = Ok(t, cs, "log", map[string]any{"prefix": "memory/notes/", "limit": 50})
	var page struct {
		Events []struct {
			Op, Key string
			Writer  struct{ Agent string }
		}
	}
	if err := json.Unmarshal([]byte(text), &page); err != nil {
		t.Fatalf("log: %v\n%s", err, text)
	}
	var ops []string
	for _, ev := range page.Events {
		ops = append(ops, ev.Op+" "+ev.Key)
		if writer != "" && ev.Writer.Agent != writer {
			t.Errorf("log: %s %s by %q, want %q", ev.Op, ev.Key, ev.Writer.Agent, writer)
		}
	}
	wantIn(t, "log", strings.Join(ops, "\n"), "write memory/notes/a.md", "rename memory/notes/b.md", "delete memory/notes/b.md")
	if strings.Contains(text, Secret) {
		t.Error("the log shows the secret")
	}
}
