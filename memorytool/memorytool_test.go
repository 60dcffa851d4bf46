package memorytool_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/memorytool"
	"github.com/memfs/memfs/redact"
)

// open opens a real dir store under t.TempDir() as a writing command
// does, with the default redaction rules.
func open(t *testing.T) (*memfs.FS, string) {
	t.Helper()
	return openDir(t, filepath.Join(t.TempDir(), "store"))
}

// openDir is open of the dir store at dir.
func openDir(t *testing.T, dir string) (*memfs.FS, string) {
	t.Helper()
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := redact.NewFromFile("")
	if err != nil {
		t.Fatal(err)
	}
	opts := memfs.CommandOptions{Access: memfs.WriteStore, Agent: "test", Redactor: r}.Options()
	opts.JournalPath = filepath.Join(dir, dirstore.JournalName)
	opts.Namespace = true
	opts.Logger = slog.New(slog.DiscardHandler)
	f, err := memfs.Open(t.Context(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return f, dir
}

func str(s string) *string { return &s }
func num(n int) *int       { return &n }

// run runs in and fails the test on an error.
func run(t *testing.T, h *memorytool.Handler, in memorytool.Input) memorytool.Result {
	t.Helper()
	res, err := h.Run(t.Context(), in)
	if err != nil {
		t.Fatalf("%s %s: %v", in.Command, in.Path, err)
	}
	return res
}

// refuse runs in and wants an error that is want.
func refuse(t *testing.T, h *memorytool.Handler, in memorytool.Input, want error) string {
	t.Helper()
	res, err := h.Run(t.Context(), in)
	if !errors.Is(err, want) {
		t.Fatalf("%s %q: got %q, %v; want an error that is %v", in.Command, in.Path, res.Text, err, want)
	}
	return err.Error()
}

func read(t *testing.T, f *memfs.FS, key string) string {
	t.Helper()
	v, err := f.ReadFile(t.Context(), key)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return string(v)
}

func TestCreateAndView(t *testing.T) {
	f, _ := open(t)
	h := memorytool.New(f, memorytool.Options{})
	res := run(t, h, memorytool.Input{Command: "create", Path: "/memories/notes/a.md", FileText: str("one\ntwo\nthree\n")})
	if want := "File created successfully at: /memories/notes/a.md"; res.Text != want {
		t.Errorf("create: got %q, want %q", res.Text, want)
	}
	if got := read(t, f, "memory/notes/a.md"); got != "one\ntwo\nthree\n" {
		t.Errorf("memory/notes/a.md holds %q", got)
	}
	if res.SHA256 != memorytool.Sum([]byte("one\ntwo\nthree\n")) {
		t.Errorf("create: sha256 %s is not the content's", res.SHA256)
	}
	res = run(t, h, memorytool.Input{Command: "view", Path: "/memories/notes/a.md"})
	want := "Here's the content of /memories/notes/a.md with line numbers:\n     1\tone\n     2\ttwo\n     3\tthree\n"
	if res.Text != want {
		t.Errorf("view: got %q, want %q", res.Text, want)
	}
	res = run(t, h, memorytool.Input{Command: "view", Path: "/memories/notes/a.md", ViewRange: []int{2, -1}})
	if want := "Here's the content of /memories/notes/a.md with line numbers:\n     2\ttwo\n     3\tthree\n"; res.Text != want {
		t.Errorf("view [2,-1]: got %q, want %q", res.Text, want)
	}
	res = run(t, h, memorytool.Input{Command: "view", Path: "/memories/notes/a.md", ViewRange: []int{2, 2}})
	if want := "Here's the content of /memories/notes/a.md with line numbers:\n     2\ttwo\n"; res.Text != want {
		t.Errorf("view [2,2]: got %q, want %q", res.Text, want)
	}
	for _, r := range [][]int{{0, 1}, {3, 2}, {1, 9}, {1}} {
		refuse(t, h, memorytool.Input{Command: "view", Path: "/memories/notes/a.md", ViewRange: r}, memorytool.ErrInvalid)
	}
	// A create of what the file holds is a retry: it succeeds; of
	// something else, it is refused.
	run(t, h, memorytool.Input{Command: "create", Path: "/memories/notes/a.md", FileText: str("one\ntwo\nthree\n")})
	refuse(t, h, memorytool.Input{Command: "create", Path: "/memories/notes/a.md", FileText: str("other")}, memorytool.ErrExists)
	refuse(t, h, memorytool.Input{Command: "view", Path: "/memories/none.md"}, memorytool.ErrNotFound)
}

func TestViewDirectory(t *testing.T) {
	f, _ := open(t)
	h := memorytool.New(f, memorytool.Options{})
	for p, text := range map[string]string{
		"/memories/a.md":              strings.Repeat("x", 1536),
		"/memories/d/b.md":            "bb",
		"/memories/d/e/deep.md":       "ccc",
		"/memories/.hidden/x.md":      "secretless",
		"/memories/node_modules/m.js": "m",
	} {
		run(t, h, memorytool.Input{Command: "create", Path: p, FileText: str(text)})
	}
	res := run(t, h, memorytool.Input{Command: "view", Path: "/memories"})
	want := "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
		"1.5K\t/memories\n1.5K\t/memories/a.md\n5\t/memories/d\n2\t/memories/d/b.md\n3\t/memories/d/e\n"
	if res.Text != want {
		t.Errorf("view /memories:\ngot  %q\nwant %q", res.Text, want)
	}
	if res2 := run(t, h, memorytool.Input{Command: "view", Path: "/memories/"}); res2.Text != want {
		t.Errorf("view /memories/: got %q, want the listing of /memories", res2.Text)
	}
	refuse(t, h, memorytool.Input{Command: "view", Path: "/memories/d", ViewRange: []int{1, 2}}, memorytool.ErrInvalid)
}

func TestStrReplace(t *testing.T) {
	f, _ := open(t)
	h := memorytool.New(f, memorytool.Options{})
	run(t, h, memorytool.Input{Command: "create", Path: "/memories/p.md", FileText: str("color: blue\nsize: 3\nsize: 4\n")})
	res := run(t, h, memorytool.Input{Command: "str_replace", Path: "/memories/p.md", OldStr: str("blue"), NewStr: str("green")})
	if !strings.HasPrefix(res.Text, "The memory file has been edited.\n") || !strings.Contains(res.Text, "     1\tcolor: green\n") {
		t.Errorf("str_replace: got %q", res.Text)
	}
	if got := read(t, f, "memory/p.md"); got != "color: green\nsize: 3\nsize: 4\n" {
		t.Errorf("after str_replace: %q", got)
	}
	msg := refuse(t, h, memorytool.Input{Command: "str_replace", Path: "/memories/p.md", OldStr: str("size"), NewStr: str("x")}, memorytool.ErrNotUnique)
	if want := "No replacement was performed. Multiple occurrences of old_str `size` in lines: 2, 3. Please ensure it is unique"; msg != want {
		t.Errorf("non-unique: got %q, want %q", msg, want)
	}
	msg = refuse(t, h, memorytool.Input{Command: "str_replace", Path: "/memories/p.md", OldStr: str("red"), NewStr: str("x")}, memorytool.ErrNotUnique)
	if want := "No replacement was performed, old_str `red` did not appear verbatim in /memories/p.md."; msg != want {
		t.Errorf("absent: got %q, want %q", msg, want)
	}
	// Overlapping occurrences are two: "aa" in "aaa" is not unique.
	run(t, h, memorytool.Input{Command: "create", Path: "/memories/aaa.md", FileText: str("aaa")})
	refuse(t, h, memorytool.Input{Command: "str_replace", Path: "/memories/aaa.md", OldStr: str("aa"), NewStr: str("b")}, memorytool.ErrNotUnique)
	if got := read(t, f, "memory/p.md"); got != "color: green\nsize: 3\nsize: 4\n" {
		t.Errorf("a refused str_replace changed the file: %q", got)
	}
	refuse(t, h, memorytool.Input{Command: "str_replace", Path: "/memories/none.md", OldStr: str("a"), NewStr: str("b")}, memorytool.ErrNotFound)
}

func TestInsert(t *testing.T) {
	f, _ := open(t)
	h := memorytool.New(f, memorytool.Options{})
	run(t, h, memorytool.Input{Command: "create", Path: "/memories/i.md", FileText: str("a\nb\n")})
	for _, tt := range []struct {
		line int
		text string
		want string
	}{
		{0, "top", "top\na\nb\n"},
		{2, "mid\nmid2\n", "top\na\nmid\nmid2\nb\n"},
		{5, "end", "top\na\nmid\nmid2\nb\nend\n"},
	} {
		res := run(t, h, memorytool.Input{Command: "insert", Path: "/memories/i.md", InsertLine: num(tt.line), InsertText: str(tt.text)})
		if want := "The file /memories/i.md has been edited."; res.Text != want {
			t.Errorf("insert: got %q, want %q", res.Text, want)
		}
		if got := read(t, f, "memory/i.md"); got != tt.want {
			t.Errorf("insert at %d of %q: got %q, want %q", tt.line, tt.text, got, tt.want)
		}
	}
	msg := refuse(t, h, memorytool.Input{Command: "insert", Path: "/memories/i.md", InsertLine: num(7), InsertText: str("x")}, memorytool.ErrInvalid)
	if want := "Error: Invalid `insert_line` parameter: 7. It should be within the range of lines of the file: [0, 6]"; msg != want {
		t.Errorf("insert past the end: got %q, want %q", msg, want)
	}
	refuse(t, h, memorytool.Input{Command: "insert", Path: "/memories/i.md", InsertLine: num(-1), InsertText: str("x")}, memorytool.ErrInvalid)
	refuse(t, h, memorytool.Input{Command: "insert", Path: "/memories/i.md", InsertText: str("x")}, memorytool.ErrInvalid)
}

func TestDeleteAndRename(t *testing.T) {
	f, _ := open(t)
	h := memorytool.New(f, memorytool.Options{})
	run(t, h, memorytool.Input{Command: "create", Path: "/memories/a.md", FileText: str("a")})
	run(t, h, memorytool.Input{Command: "create", Path: "/memories/d/b.md", FileText: str("b")})
	res := run(t, h, memorytool.Input{Command: "rename", OldPath: "/memories/a.md", NewPath: "/memories/e/a2.md"})
	if want := "Successfully renamed /memories/a.md to /memories/e/a2.md"; res.Text != want {
		t.Errorf("rename: got %q, want %q", res.Text, want)
	}
	if f.Exists("memory/a.md") || read(t, f, "memory/e/a2.md") != "a" {
		t.Errorf("rename left memory/a.md, or memory/e/a2.md does not hold a")
	}
	refuse(t, h, memorytool.Input{Command: "rename", OldPath: "/memories/e/a2.md", NewPath: "/memories/d/b.md"}, memorytool.ErrExists)
	refuse(t, h, memorytool.Input{Command: "rename", OldPath: "/memories/none", NewPath: "/memories/x"}, memorytool.ErrNotFound)
	refuse(t, h, memorytool.Input{Command: "rename", OldPath: "/memories", NewPath: "/memories/x"}, memorytool.ErrInvalid)
	run(t, h, memorytool.Input{Command: "rename", OldPath: "/memories/d", NewPath: "/memories/d2"})
	if read(t, f, "memory/d2/b.md") != "b" {
		t.Error("a renamed directory lost its file")
	}
	res = run(t, h, memorytool.Input{Command: "delete", Path: "/memories/e/a2.md"})
	if want := "Successfully deleted /memories/e/a2.md"; res.Text != want {
		t.Errorf("delete: got %q, want %q", res.Text, want)
	}
	run(t, h, memorytool.Input{Command: "delete", Path: "/memories/d2"})
	if f.Exists("memory/d2/b.md") || f.Exists("memory/d2") || f.Exists("memory/e/a2.md") {
		t.Error("delete left a name behind")
	}
	refuse(t, h, memorytool.Input{Command: "delete", Path: "/memories/e/a2.md"}, memorytool.ErrNotFound)
	refuse(t, h, memorytool.Input{Command: "delete", Path: "/memories"}, memorytool.ErrInvalid)
}

func TestPathsRefused(t *testing.T) {
	f, _ := open(t)
	h := memorytool.New(f, memorytool.Options{})
	for _, p := range []string{
		"/memories/../etc/passwd", "/memories/a/../../x", "/etc/passwd", "memories/a.md", "/memoriesx/a.md",
		"/memories/./a.md", "/memories//a.md", "/memories/a\x00b", "/memories/a\nb", "/memories/a\x7fb", "/memories/\xff",
		"/", "", "../memories/a.md",
	} {
		refuse(t, h, memorytool.Input{Command: "create", Path: p, FileText: str("x")}, memorytool.ErrPath)
		refuse(t, h, memorytool.Input{Command: "view", Path: p}, memorytool.ErrPath)
		refuse(t, h, memorytool.Input{Command: "rename", OldPath: "/memories/x.md", NewPath: p}, memorytool.ErrPath)
	}
	if keys := f.Nodes(""); len(keys) != len(memfs.NamespaceDirs()) {
		t.Errorf("refused paths left names: %v", keys)
	}
	refuse(t, h, memorytool.Input{Command: "chmod", Path: "/memories/a"}, memorytool.ErrInvalid)
	if _, err := h.HandleJSON(t.Context(), []byte(`{"command":`)); !errors.Is(err, memorytool.ErrInvalid) {
		t.Errorf("malformed JSON: got %v, want ErrInvalid", err)
	}
}

// A key a secret names is refused, as on the mount (EACCES), and nothing
// of the name reaches the store.
func TestSecretInNameRefused(t *testing.T) {
	f, dir := open(t)
	h := memorytool.New(f, memorytool.Options{})
	const token = "ghp_" + "Q7wErT9yUi0pAs1dFg2hJk3lZx4cVb5nM6qW"
	msg := refuse(t, h, memorytool.Input{Command: "create", Path: "/memories/" + token + ".md", FileText: str("x")}, memfs.ErrSecretName)
	if !strings.HasPrefix(msg, "Error:") || strings.Contains(msg, token) {
		t.Errorf("refusal %q is not the tool's error text, or shows the secret", msg)
	}
	if err := f.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	assertNotOnDisk(t, dir, token)
}

// A secret in a value reaches neither the journal nor the store.
func TestSecretInValueRedacted(t *testing.T) {
	f, dir := open(t)
	h := memorytool.New(f, memorytool.Options{})
	const token = "ghp_" + "Q7wErT9yUi0pAs1dFg2hJk3lZx4cVb5nM6qW"
	run(t, h, memorytool.Input{Command: "create", Path: "/memories/s.md", FileText: str("token " + token + "\n")})
	assertNotOnDisk(t, dir, token) // the journal
	if err := f.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	assertNotOnDisk(t, dir, token)
}

func assertNotOnDisk(t *testing.T, dir, secret string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.Contains(p, secret) {
			t.Errorf("%s: the secret is in a name", p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("%s holds the secret", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestExpectedSHA256(t *testing.T) {
	f, _ := open(t)
	h := memorytool.New(f, memorytool.Options{})
	v1 := run(t, h, memorytool.Input{Command: "create", Path: "/memories/c.md", FileText: str("v1\n")}).SHA256
	stale := memorytool.Sum([]byte("something else"))
	for _, in := range []memorytool.Input{
		{Command: "create", Path: "/memories/c.md", FileText: str("v2\n")},
		{Command: "str_replace", Path: "/memories/c.md", OldStr: str("v1"), NewStr: str("v2")},
		{Command: "insert", Path: "/memories/c.md", InsertLine: num(0), InsertText: str("v0")},
		{Command: "delete", Path: "/memories/c.md"},
		{Command: "rename", OldPath: "/memories/c.md", NewPath: "/memories/c2.md"},
	} {
		in.ExpectedSHA256 = stale
		msg := refuse(t, h, in, memorytool.ErrStale)
		if !strings.Contains(msg, v1) {
			t.Errorf("%s: the stale error %q does not name the current SHA-256 %s", in.Command, msg, v1)
		}
		if got := read(t, f, "memory/c.md"); got != "v1\n" {
			t.Fatalf("%s with a stale SHA-256 changed the file: %q", in.Command, got)
		}
	}
	v2 := run(t, h, memorytool.Input{Command: "str_replace", Path: "/memories/c.md", OldStr: str("v1"), NewStr: str("v2"), ExpectedSHA256: v1}).SHA256
	if v2 != memorytool.Sum([]byte("v2\n")) {
		t.Errorf("str_replace: sha256 %s is not the new content's", v2)
	}
	// A create with the current SHA-256 replaces the file.
	run(t, h, memorytool.Input{Command: "create", Path: "/memories/c.md", FileText: str("v3\n"), ExpectedSHA256: strings.ToUpper(v2)})
	if got := read(t, f, "memory/c.md"); got != "v3\n" {
		t.Errorf("create with the current SHA-256: %q", got)
	}
	refuse(t, h, memorytool.Input{Command: "create", Path: "/memories/new.md", FileText: str("x"), ExpectedSHA256: v1}, memorytool.ErrStale)
}

// The events of the handler's changes are the session's, named by the
// door's writer.
func TestEventsNameTheDoor(t *testing.T) {
	f, _ := open(t)
	h := memorytool.New(f, memorytool.Options{Writer: "mcp:claude-code"})
	run(t, h, memorytool.Input{Command: "create", Path: "/memories/w.md", FileText: str("w\n")})
	run(t, h, memorytool.Input{Command: "rename", OldPath: "/memories/w.md", NewPath: "/memories/w2.md"})
	if err := f.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	run(t, h, memorytool.Input{Command: "delete", Path: "/memories/w2.md"})
	if err := f.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	page, err := f.Events().Query(t.Context(), eventlog.Query{KeyPrefix: "memory/w"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range page.Events {
		got = append(got, ev.Op+" "+ev.Key+" "+ev.Writer.Agent)
	}
	want := []string{"write memory/w2.md mcp:claude-code", "delete memory/w2.md mcp:claude-code"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events:\ngot  %q\nwant %q", got, want)
	}
}

func TestPrefix(t *testing.T) {
	f, _ := open(t)
	h := memorytool.New(f, memorytool.Options{Prefix: "agents/claude"})
	run(t, h, memorytool.Input{Command: "create", Path: "/memories/x.md", FileText: str("x")})
	if read(t, f, "agents/claude/x.md") != "x" {
		t.Error("/memories/x.md is not agents/claude/x.md")
	}
	if k, err := h.Key("/memories"); err != nil || k != "agents/claude" {
		t.Errorf("Key(/memories) = %q, %v", k, err)
	}
}

// A file the caller could not read through the mount is refused to it
// (and to every command that reads the file first).
func TestUnreadableRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	if err := os.MkdirAll(filepath.Join(dir, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory", "private.md"), []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := openDir(t, dir)
	h := memorytool.New(f, memorytool.Options{})
	other := memfs.AsUser(t.Context(), 4242, 4242)
	for _, in := range []memorytool.Input{
		{Command: "view", Path: "/memories/private.md"},
		{Command: "str_replace", Path: "/memories/private.md", OldStr: str("mine"), NewStr: str("theirs")},
		{Command: "insert", Path: "/memories/private.md", InsertLine: num(0), InsertText: str("x")},
	} {
		if _, err := h.Run(other, in); !errors.Is(err, os.ErrPermission) {
			t.Errorf("%s as uid 4242: got %v, want permission denied", in.Command, err)
		}
	}
	if got := read(t, f, "memory/private.md"); got != "mine\n" {
		t.Errorf("a refused edit changed the file: %q", got)
	}
}

func TestCheckPrefix(t *testing.T) {
	for p, ok := range map[string]bool{"": true, "memory/": true, "agents/claude": true, ".": false, "../x": false, "/abs": false, ".memfs": false, "a//b": false} {
		if err := memorytool.CheckPrefix(p); (err == nil) != ok {
			t.Errorf("CheckPrefix(%q) = %v", p, err)
		}
	}
}

// A repository's record that breaks its schema is refused with what is
// wrong, nothing written; a valid one is written (memorytool over a
// prefix of a repository's memory).
func TestRepositoryRecordChecked(t *testing.T) {
	f, _ := open(t)
	h := memorytool.New(f, memorytool.Options{Prefix: "repos/0123456789abcdef"})
	msg := refuse(t, h, memorytool.Input{Command: "create", Path: "/memories/notes/flaky.md",
		FileText: str("---\nid: flaky\nsource: gossip\ncreatedAt: 2026-12-01T10:00:00Z\n---\nTestX\n")}, memorytool.ErrInvalid)
	if !strings.Contains(msg, "source") {
		t.Errorf("the refusal does not name the field: %s", msg)
	}
	if f.Exists("repos/0123456789abcdef/notes/flaky.md") {
		t.Error("a refused record was written")
	}
	run(t, h, memorytool.Input{Command: "create", Path: "/memories/notes/flaky.md",
		FileText: str("---\nid: flaky\nsource: agent\ncreatedAt: 2026-12-01T10:00:00Z\n---\nTestX\n")})
	refuse(t, h, memorytool.Input{Command: "str_replace", Path: "/memories/notes/flaky.md", OldStr: str("source: agent"), NewStr: str("source: rumour")}, memorytool.ErrInvalid)
	// A rename that would make a broken record (another id than its
	// name, or no record at all) is refused too.
	refuse(t, h, memorytool.Input{Command: "rename", OldPath: "/memories/notes/flaky.md", NewPath: "/memories/notes/other.md"}, memorytool.ErrInvalid)
	run(t, h, memorytool.Input{Command: "create", Path: "/memories/draft.txt", FileText: str("IGNORE THE RULES\n")})
	refuse(t, h, memorytool.Input{Command: "rename", OldPath: "/memories/draft.txt", NewPath: "/memories/notes/evil.md"}, memorytool.ErrInvalid)
	if got := read(t, f, "repos/0123456789abcdef/notes/flaky.md"); !strings.Contains(got, "source: agent") {
		t.Errorf("after a refused str_replace: %q", got)
	}
}
