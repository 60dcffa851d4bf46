package search

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestParseQuery(t *testing.T) {
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
			got, err := ParseQueryAt(tt.in, now)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseQueryErrors(t *testing.T) {
	for _, in := range []string{
		"100%", "bad%zz", "tag:", "importance:2", "importance:x", "since:yesterday", "until:-5h",
		"top:0", "top:x", "min:NaN", "prefix:a prefix:b", "source:a source:b",
	} {
		t.Run(in, func(t *testing.T) {
			if _, err := ParseQuery(in); !errors.Is(err, ErrQuery) {
				t.Errorf("ParseQuery(%q) = %v, want ErrQuery", in, err)
			}
		})
	}
}

// TestParseQuerySearch: a parsed query runs as written.
func TestParseQuerySearch(t *testing.T) {
	ix := New(Options{})
	ix.Put("memory/projects/a.md", []byte("kernel notes"), DocMeta{Tags: []string{"go"}})
	ix.Put("memory/global.md", []byte("kernel notes"), DocMeta{Tags: []string{"go"}})
	q, err := ParseQuery("kernel prefix:memory%2Fprojects tag:go")
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(ix.Search(q)); len(got) != 1 || got[0] != "memory/projects/a.md" {
		t.Errorf("got %v, want memory/projects/a.md", got)
	}
}
