package search

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

func TestParseName(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want Query
	}{
		{"deploy plan", Query{Text: "deploy plan"}},
		{"", Query{}},
		{"prefix:memory%2Fprojects kernel", Query{Text: "kernel", Prefix: "memory/projects"}},
		{"tag:go tag:infra", Query{Tags: []string{"go", "infra"}}},
		{"source:agent agent:planner x", Query{Text: "x", Source: "agent", Agent: "planner"}},
		{"type:decision session:s1 x", Query{Text: "x", Type: "decision", Session: "s1"}},
		{"repo:0123456789abcdef x", Query{Text: "x", Repo: "0123456789abcdef"}},
		{"route:skills x", Query{Text: "x", Route: "skills/"}},
		{"route:team%2Fskills%2F tier:indexed", Query{Route: "team/skills/", Tier: TierIndexed}},
		{"route:default tier:working", Query{Route: "default", Tier: TierWorking}},
		{"repo:0123456789abcdef,fedcba9876543210", Query{Repo: "0123456789abcdef", RepoParents: []string{"fedcba9876543210"}}},
		{"importance:0.5", Query{ImportanceMin: 0.5, HasImportanceMin: true}},
		{"importance>=0.7 y", Query{Text: "y", ImportanceMin: 0.7, HasImportanceMin: true}},
		{"since:2026-11-01", Query{Since: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}},
		{"since:24h", Query{Since: now.Add(-24 * time.Hour)}},
		{"since:7d until:2026-11-22T10:00:00Z", Query{Since: now.AddDate(0, 0, -7), Until: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}},
		{"top:5 min:0.5 q", Query{Text: "q", TopK: 5, MinScore: 0.5}},
		{`"exact phrase" tag:go`, Query{Text: "exact phrase", Tags: []string{"go"}}},
		{`%22deploy%20plan%22%20top%3A3`, Query{Text: "deploy plan", TopK: 3}},
		{`tag:"two words" rest`, Query{Text: "rest", Tags: []string{"two words"}}},
		{`"tag:go" note:this http://x`, Query{Text: "tag:go note:this http://x"}},
		{"  spaced   out  ", Query{Text: "spaced out"}},
		{"東京 会議 tag:日本", Query{Text: "東京 会議", Tags: []string{"日本"}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseNameAt(tt.in, now)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Query; !reflect.DeepEqual(got, tt.want) || r.JSON {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseNameErrors(t *testing.T) {
	for _, in := range []string{
		"100%", "bad%zz", "tag:", "importance:2", "importance:x", "since:yesterday", "until:-5h",
		"top:0", "top:x", "min:NaN", "prefix:a prefix:b", "source:a source:b",
		"type:", "session:", "type:fact type:note", "session:a session:b",
		"route:", "route:a route:b", "tier:archive", "tier:working tier:indexed",
		"repo:", "repo:0123", "repo:0123456789ABCDEF", "repo:0123456789abcdef repo:0123456789abcdef", "repo:0123456789abcdef,",
	} {
		t.Run(in, func(t *testing.T) {
			if _, err := ParseName(in); !errors.Is(err, ErrQuery) {
				t.Errorf("ParseName(%q) = %v, want ErrQuery", in, err)
			}
		})
	}
}

// TestParseNameSearch: a parsed query runs as written.
func TestParseNameSearch(t *testing.T) {
	ix := New(Options{})
	ix.Put("memory/projects/a.md", []byte("kernel notes"), DocMeta{Tags: []string{"go"}})
	ix.Put("memory/global.md", []byte("kernel notes"), DocMeta{Tags: []string{"go"}})
	r, err := ParseName("kernel prefix:memory%2Fprojects tag:go")
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(ix.Search(r.Query)); len(got) != 1 || got[0] != "memory/projects/a.md" {
		t.Errorf("got %v, want memory/projects/a.md", got)
	}
}

// The word repo: keeps that repository's memory and what is not any
// repository's; another repository's never passes, whatever the prefix.
func TestParseNameRepo(t *testing.T) {
	ix := New(Options{})
	for _, k := range []string{"memory/global.md", "repos/aaaaaaaaaaaaaaaa/notes/a.md", "repos/bbbbbbbbbbbbbbbb/notes/b.md", "reposx.md"} {
		ix.Put(k, []byte("kernel notes"), DocMeta{})
	}
	for name, want := range map[string][]string{
		"kernel repo:aaaaaaaaaaaaaaaa":                   {"memory/global.md", "repos/aaaaaaaaaaaaaaaa/notes/a.md", "reposx.md"},
		"kernel repo:aaaaaaaaaaaaaaaa prefix:repos%2Fbb": nil,
		"kernel": {"memory/global.md", "repos/aaaaaaaaaaaaaaaa/notes/a.md", "repos/bbbbbbbbbbbbbbbb/notes/b.md", "reposx.md"},
	} {
		r, err := ParseName(name)
		if err != nil {
			t.Fatal(err)
		}
		got := keys(ix.Search(r.Query))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
}

// repo:ID,PARENT reads the parent's memory while ID has none (no
// repo.json indexed), and ID's own from its first write.
func TestParseNameRepoParent(t *testing.T) {
	ix := New(Options{})
	const a, b = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"
	ix.Put("repos/"+a+"/repo.json", []byte(`{"hash":"a"}`), DocMeta{})
	ix.Put("repos/"+a+"/notes/a.md", []byte("kernel notes"), DocMeta{})
	r, err := ParseName("kernel repo:" + b + "," + a)
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(ix.Search(r.Query)); !slices.Equal(got, []string{"repos/" + a + "/notes/a.md"}) {
		t.Errorf("a branch without memory: got %v, want its parent's note", got)
	}
	if keep := ix.Matcher(r.Query); !keep("repos/" + a + "/notes/a.md") {
		t.Error("Matcher of a branch without memory leaves its parent's note out")
	}
	ix.Put("repos/"+b+"/repo.json", []byte(`{"hash":"b"}`), DocMeta{})
	ix.Put("repos/"+b+"/notes/b.md", []byte("kernel notes"), DocMeta{})
	if got := keys(ix.Search(r.Query)); !slices.Equal(got, []string{"repos/" + b + "/notes/b.md"}) {
		t.Errorf("a branch with memory: got %v, want its own note only", got)
	}
}

// The word format:json, written plain or percent-encoded, asks for JSON
// lines and is no word of the query; anything else like it is text.
func TestParseNameFormat(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		asJSON     bool
	}{
		{"kernel cache", "kernel cache", false},
		{"kernel%20cache", "kernel cache", false},
		{"kernel format:json cache", "kernel cache", true},
		{"format:json", "", true},
		{"format%3Ajson tag:x", "", true},
		{"format:jsonl", "format:jsonl", false},
		{`"format:json"`, "format:json", false},
	} {
		r, err := ParseName(tt.name)
		if err != nil || r.Query.Text != tt.text || r.JSON != tt.asJSON {
			t.Errorf("ParseName(%q) = %+v, %v; want text %q, JSON %v", tt.name, r, err, tt.text, tt.asJSON)
		}
	}
	if _, err := ParseName("bad%zz format:json"); !errors.Is(err, ErrQuery) {
		t.Errorf("a name that does not decode: got %v, want ErrQuery", err)
	}
}

// The words session: and type: keep the documents of that session and
// memory type, as MetaOf reads them from the attributes.
func TestParseNameSessionAndType(t *testing.T) {
	ix := New(Options{})
	put := func(key, session, typ string) {
		x := map[string][]byte{}
		if session != "" {
			x[meta.Session] = []byte(session)
		}
		if typ != "" {
			x[meta.Type] = []byte(typ)
		}
		ix.Put(key, []byte("kernel notes"), MetaOf(backend.Info{XAttrs: x}))
	}
	put("memory/a.md", "s1", "decision")
	put("memory/b.md", "s1", "fact")
	put("memory/c.md", "s2", "decision")
	put("memory/d.md", "", "")
	for _, tt := range []struct{ name, want string }{
		{"kernel type:decision", "memory/a.md memory/c.md"},
		{"kernel session:s1", "memory/a.md memory/b.md"},
		{"kernel session:s1 type:decision", "memory/a.md"},
		{"kernel type:summary", ""},
		{"kernel", "memory/a.md memory/b.md memory/c.md memory/d.md"},
	} {
		r, err := ParseName(Name(tt.name))
		if err != nil {
			t.Fatal(err)
		}
		got := keys(ix.Search(r.Query))
		slices.Sort(got)
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%q: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
