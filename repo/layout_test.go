package repo_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/repo"
)

func TestValidateHash(t *testing.T) {
	for _, h := range []string{"0123456789abcdef", "ffffffffffffffff"} {
		if err := repo.ValidateHash(h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	for _, h := range []string{"", "0123456789abcde", "0123456789abcdef0", "0123456789ABCDEF", "0123456789abcdeg", "../../etc/passwd"} {
		if err := repo.ValidateHash(h); err == nil {
			t.Errorf("%q: no error", h)
		}
	}
}

func TestKeys(t *testing.T) {
	const h = testHash
	tests := []struct{ got, want string }{
		{repo.Prefix(h), "repos/0123456789abcdef/"},
		{repo.RecordKey(h, repo.Convention, "errors"), "repos/0123456789abcdef/conventions/errors.md"},
		{repo.RecordKey(h, repo.Decision, "etcd"), "repos/0123456789abcdef/decisions/etcd.md"},
		{repo.RecordKey(h, repo.Note, "flaky"), "repos/0123456789abcdef/notes/flaky.md"},
		{strings.Join(repo.RulePrefixes(h), " "), "repos/0123456789abcdef/conventions/ repos/0123456789abcdef/decisions/"},
		{repo.NotesPrefix(h), "repos/0123456789abcdef/notes/"},
		{repo.SummariesKey(h), "repos/0123456789abcdef/summaries.jsonl"},
		{repo.InfoKey(h), "repos/0123456789abcdef/repo.json"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
	if k, err := repo.IndexKey(h, "map.md"); err != nil || k != "repos/0123456789abcdef/indexes/map.md" {
		t.Errorf("IndexKey: %s, %v", k, err)
	}
	for _, name := range []string{"", ".map", "a/b", "..", "a b", strings.Repeat("x", 129), "é"} {
		if _, err := repo.IndexKey(h, name); err == nil {
			t.Errorf("IndexKey(%q): no error", name)
		}
	}
	if _, err := repo.IndexKey("nothash", "map.md"); err == nil {
		t.Error("IndexKey of no hash: no error")
	}
	for _, k := range repo.Kinds {
		if got, err := repo.ParseKind(string(k)); got != k || err != nil {
			t.Errorf("ParseKind(%s): %s, %v", k, got, err)
		}
	}
	if _, err := repo.ParseKind("conventions"); err == nil {
		t.Error("ParseKind(conventions): no error")
	}
}

func TestParseKey(t *testing.T) {
	const h = testHash
	tests := []struct {
		key  string
		kind repo.Kind
		id   string // "" for no record
	}{
		{"repos/" + h + "/conventions/errors.md", repo.Convention, "errors"},
		{"repos/" + h + "/decisions/etcd-2.v1.md", repo.Decision, "etcd-2.v1"},
		{"repos/" + h + "/notes/0note_x.md", repo.Note, "0note_x"},
		{"repos/" + h + "/notes/.errors.md", "", ""},
		{"repos/" + h + "/notes/.errors.md.swp", "", ""},
		{"repos/" + h + "/notes/errors.md~", "", ""},
		{"repos/" + h + "/notes/errors.md.tmp", "", ""},
		{"repos/" + h + "/notes/errors", "", ""},
		{"repos/" + h + "/notes/Errors.md", "", ""},
		{"repos/" + h + "/notes/-x.md", "", ""},
		{"repos/" + h + "/notes/.md", "", ""},
		{"repos/" + h + "/notes/a/b.md", "", ""},
		{"repos/" + h + "/notes/", "", ""},
		{"repos/" + h + "/note/x.md", "", ""},
		{"repos/" + h + "/indexes/x.md", "", ""},
		{"repos/" + h + "/x.md", "", ""},
		{"repos/0123/notes/x.md", "", ""},
		{"memory/notes/x.md", "", ""},
		{"/repos/" + h + "/notes/x.md", "", ""},
	}
	for _, tt := range tests {
		hash, k, id, ok := repo.ParseKey(tt.key)
		if ok != (tt.id != "") || id != tt.id || k != tt.kind || ok && hash != h {
			t.Errorf("ParseKey(%s) = %s, %s, %s, %v; want %s, %s", tt.key, hash, k, id, ok, tt.kind, tt.id)
		}
		if ok && repo.RecordKey(hash, k, id) != tt.key {
			t.Errorf("RecordKey of ParseKey(%s) = %s", tt.key, repo.RecordKey(hash, k, id))
		}
	}
}

func TestValidateID(t *testing.T) {
	for _, id := range []string{"a", "0", "wrap-errors", "a.b_c-d", strings.Repeat("a", 64)} {
		if err := repo.ValidateID(id); err != nil {
			t.Errorf("%q: %v", id, err)
		}
	}
	for _, id := range []string{"", ".a", "-a", "_a", "A", "a b", "a/b", "é", strings.Repeat("a", 65), "a\x00"} {
		if err := repo.ValidateID(id); err == nil {
			t.Errorf("%q: no error", id)
		}
	}
}

func TestNewID(t *testing.T) {
	at := time.Date(2026, 12, 6, 20, 15, 0, 0, time.FixedZone("CET", 3600))
	tests := []struct{ text, want string }{
		{"Wrap errors with %w!", "wrap-errors-with-w-20261206-191500"},
		{"  --The FLAKY test__x  ", "the-flaky-test-x-20261206-191500"},
		{"", "note-20261206-191500"},
		{"!!! ??? ///", "note-20261206-191500"},
		{"日本語", "note-20261206-191500"},
		{"2026 plans", "2026-plans-20261206-191500"},
		{"one two three four five six seven eight nine ten", "one-two-three-four-five-six-seven-eight-20261206-191500"},
		{strings.Repeat("x", 50) + " y", strings.Repeat("x", 40) + "-20261206-191500"},
		{strings.Repeat("a", 40) + " b", strings.Repeat("a", 40) + "-20261206-191500"},
	}
	for _, tt := range tests {
		got := repo.NewID(tt.text, at)
		if got != tt.want {
			t.Errorf("NewID(%q) = %s, want %s", tt.text, got, tt.want)
		}
		if err := repo.ValidateID(got); err != nil {
			t.Errorf("NewID(%q): %v", tt.text, err)
		}
		if again := repo.NewID(tt.text, at); again != got {
			t.Errorf("NewID(%q): %s, then %s", tt.text, got, again)
		}
	}
}

// A pack's check: a file of a kind's directory that is no record fails
// (misnamed, a backup, in a subdirectory), a record fails when it breaks
// its schema, and anything else passes.
func TestCheckPackFile(t *testing.T) {
	const p = "repos/0123456789abcdef/"
	good := "---\nid: errors\ntitle: Wrap errors\ncreatedAt: 2026-12-01T10:00:00Z\nupdatedAt: 2026-12-01T10:00:00Z\n---\n"
	for key, ok := range map[string]bool{
		p + "conventions/errors.md":      true,
		p + "conventions/Flaky Rule.md":  false,
		p + "conventions/errors.md~":     false,
		p + "conventions/x.md.orig":      false,
		p + "conventions/sub/errors.md":  false,
		p + "decisions/errors.md":        false, // a convention's fields in a decision
		p + "notes/.errors.md.swp":       false,
		p + "summaries.jsonl":            true,
		p + "indexes/map.md":             true,
		"memory/errors.md~":              true,
		"repos/not-a-hash/conventions/x": true,
	} {
		if err := repo.CheckPackFile(key, []byte(good)); (err == nil) != ok {
			t.Errorf("CheckPackFile(%s) = %v, want ok %v", key, err, ok)
		}
	}
}

// The keys of a repository's repo.json and derived artifacts, and no
// other.
func TestParseInfoAndIndexKeys(t *testing.T) {
	const h = "0123456789abcdef"
	if got, ok := repo.ParseInfoKey("repos/" + h + "/repo.json"); !ok || got != h {
		t.Errorf("ParseInfoKey(repo.json) = %q, %v", got, ok)
	}
	for _, k := range []string{"repos/" + h + "/notes/repo.json", "repos/x/repo.json", "memory/repo.json", "repos/" + h + "/repo.json.bak"} {
		if _, ok := repo.ParseInfoKey(k); ok {
			t.Errorf("ParseInfoKey(%s) is a repo.json", k)
		}
	}
	if got, name, ok := repo.ParseIndexKey("repos/" + h + "/indexes/map.md"); !ok || got != h || name != "map.md" {
		t.Errorf("ParseIndexKey(map.md) = %q, %q, %v", got, name, ok)
	}
	for _, k := range []string{"repos/" + h + "/indexes/.tmp", "repos/" + h + "/indexes/a/b", "repos/" + h + "/indexes/", "repos/" + h + "/notes/map.md"} {
		if _, _, ok := repo.ParseIndexKey(k); ok {
			t.Errorf("ParseIndexKey(%s) is an artifact", k)
		}
	}
}

// Choose: the repository's own memory, else its first parent with one,
// else its own.
func TestChoose(t *testing.T) {
	has := func(hs ...string) func(string) bool { return func(h string) bool { return slices.Contains(hs, h) } }
	for _, c := range []struct {
		has  func(string) bool
		want string
	}{{has("b", "p1"), "b"}, {has("p1", "p2"), "p1"}, {has("p2"), "p2"}, {has(), "b"}} {
		if got := repo.Choose("b", []string{"p1", "p2"}, c.has); got != c.want {
			t.Errorf("Choose = %s, want %s", got, c.want)
		}
	}
}
