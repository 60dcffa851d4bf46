package mcpserver_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/memfs/memfs/internal/mcptest"
	"github.com/memfs/memfs/mcpserver"
	"github.com/memfs/memfs/meta"
)

// The search and context_pack tools take type and session, and keep only
// the notes of that memory type and session.
func TestSearchAndPackByTypeAndSession(t *testing.T) {
	f := open(t)
	by := meta.WriterInfo{Agent: "test"}
	for _, n := range []struct{ key, typ, session string }{
		{"memory/a.md", "decision", "s1"},
		{"memory/b.md", "fact", "s1"},
		{"memory/c.md", "decision", "s2"},
	} {
		if err := f.WriteFile(t.Context(), n.key, []byte("kiwi notes\n"), by); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]string{meta.Type: n.typ, meta.Session: n.session} {
			if err := f.SetAttr(t.Context(), n.key, name, []byte(v), by); err != nil {
				t.Fatal(err)
			}
		}
	}
	cs := connectInMemory(t, mcpserver.New(f, mcpserver.Options{Logger: slog.New(slog.DiscardHandler)}))
	has := func(text string) string {
		var got []string
		for _, k := range []string{"memory/a.md", "memory/b.md", "memory/c.md"} {
			if strings.Contains(text, k) {
				got = append(got, k)
			}
		}
		return strings.Join(got, " ")
	}
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"type": "decision"}, "memory/a.md memory/c.md"},
		{map[string]any{"session": "s1"}, "memory/a.md memory/b.md"},
		{map[string]any{"type": "decision", "session": "s1"}, "memory/a.md"},
	} {
		search := map[string]any{"query": "kiwi"}
		for k, v := range tt.args {
			search[k] = v
		}
		text, _ := mcptest.Ok(t, cs, "search", search)
		if got := has(text); got != tt.want {
			t.Errorf("search %v: got %q, want %q\n%s", tt.args, got, tt.want, text)
		}
		text, _ = mcptest.Ok(t, cs, "context_pack", tt.args)
		if got := has(text); got != tt.want {
			t.Errorf("context_pack %v: got %q, want %q\n%s", tt.args, got, tt.want, text)
		}
	}
	mcptest.Refused(t, cs, "search", map[string]any{"query": "kiwi", "type": "two words"})
	mcptest.Refused(t, cs, "context_pack", map[string]any{"session": "a/b"})
}
