package meta_test

import (
	"testing"
	"time"

	"github.com/memfs/memfs/meta"
)

func TestFilterMatch(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	x := map[string][]byte{meta.Tags: []byte("go,fuse"), meta.Source: []byte("agent"), meta.Agent: []byte("a1"), meta.Importance: []byte("0.7"),
		meta.Session: []byte("s1"), meta.Type: []byte("decision")}
	tests := []struct {
		name string
		f    meta.Filter
		want bool
	}{
		{"zero filter", meta.Filter{}, true},
		{"prefix", meta.Filter{Prefix: "memory/"}, true},
		{"other prefix", meta.Filter{Prefix: "skills/"}, false},
		{"tags, all of them", meta.Filter{Tags: []string{"go", "fuse"}}, true},
		{"a tag it lacks", meta.Filter{Tags: []string{"go", "rust"}}, false},
		{"source", meta.Filter{Source: "agent"}, true},
		{"other source", meta.Filter{Source: "user"}, false},
		{"agent", meta.Filter{Agent: "a2"}, false},
		{"session", meta.Filter{Session: "s1"}, true},
		{"other session", meta.Filter{Session: "s2"}, false},
		{"type", meta.Filter{Type: "decision"}, true},
		{"other type", meta.Filter{Type: "fact"}, false},
		{"importance at least", meta.Filter{MinImportance: 0.7, HasMinImportance: true}, true},
		{"importance under", meta.Filter{MinImportance: 0.8, HasMinImportance: true}, false},
		{"since, inclusive", meta.Filter{Since: t0}, true},
		{"until, exclusive", meta.Filter{Until: t0}, false},
		{"until later", meta.Filter{Until: t0.Add(time.Second)}, true},
	}
	for _, tt := range tests {
		if got := tt.f.Match("memory/note.md", t0, x); got != tt.want {
			t.Errorf("%s: Match = %v, want %v", tt.name, got, tt.want)
		}
	}
	if (meta.Filter{MinImportance: 0, HasMinImportance: true}).Match("k", t0, nil) {
		t.Errorf("an entry without importance passed a minimum importance")
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Time{
		"":                     {},
		"2026-11-23T10:00:00Z": now,
		"2026-11-23":           time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC),
		"24h":                  now.Add(-24 * time.Hour),
	} {
		if got, err := meta.ParseWhen(v, now); err != nil || !got.Equal(want) {
			t.Errorf("ParseWhen(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"yesterday", "-1h"} {
		if _, err := meta.ParseWhen(v, now); err == nil {
			t.Errorf("ParseWhen(%q): no error", v)
		}
	}
}
