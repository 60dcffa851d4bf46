package ignore_test

import (
	"bytes"
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/ignore"
)

func TestIgnored(t *testing.T) {
	r := ignore.New(map[string][]byte{
		".memfsignore":                []byte("# scratch files\n*.tmp\n/build/\n\nlogs/\n!keep.tmp\n"),
		"memory/.memfsignore":         []byte("drafts/\r\n"),
		"memory/project/.memfsignore": []byte("!*.tmp\n"),
		"memory/other.md":             []byte("*\n"), // not an ignore file
	})
	tests := []struct {
		key  string
		want bool
	}{
		{"memory/a.md", false},
		{".git/HEAD", true},
		{"memory/repo/.git/objects/ab/cdef", true},
		{"memory/repo/.git", true}, // a worktree's link file
		{"memory/.hg/store/data", true},
		{"x/.svn/entries", true},
		{"memory/.gitignore", false},
		{"memory/x.tmp", true},
		{"memory/keep.tmp", false},      // the file's later pattern includes again
		{"memory/project/x.tmp", false}, // a deeper file wins
		{"build/out.txt", true},         // anchored at the root
		{"memory/build/out.txt", false}, // anchored: not below the root
		{"memory/logs/today.md", true},  // a directory pattern takes what is under it
		{"memory/logs", false},          // a file named like the directory pattern
		{"memory/drafts/d.md", true},    // memory/.memfsignore's
		{"skills/drafts/d.md", false},   // ... only under memory/
		{"memory/.memfsignore", false},  // ignore files are searchable
		{"memory/other.md", false},
	}
	for _, tt := range tests {
		if got := r.Ignored(tt.key); got != tt.want {
			t.Errorf("Ignored(%q): got %v, want %v", tt.key, got, tt.want)
		}
	}
	// A .memfsignore can undo a default.
	if ignore.New(map[string][]byte{".memfsignore": []byte("!.git\n")}).Ignored(".git/config") {
		t.Error("!.git at the root: .git/config still ignored")
	}
	var none *ignore.Rules
	if !none.Ignored("a/.git/HEAD") || none.Ignored("a/b.md") {
		t.Error("nil Rules: want the defaults alone")
	}
}

func TestBinary(t *testing.T) {
	euro := "€" // 3 bytes
	cut := strings.Repeat("a", 1023) + euro + "tail"
	tests := []struct {
		name string
		v    string
		want bool
	}{
		{"empty", "", false},
		{"text", "# note\nplain text\n", false},
		{"utf-8", "naïve 東京 " + euro, false},
		{"NUL", "GIF89a\x00\x01", true},
		{"NUL after a KiB of text", strings.Repeat("a", 5000) + "\x00", true},
		{"NUL past 8000 bytes", strings.Repeat("a", 8000) + "\x00", false},
		{"zlib object, no NUL", "x\x9c\xcbH\xcd\xc9\xc9W(\xcf/\xcaI\x01", true},
		{"latin-1", "caf\xe9\n", true},
		{"a rune cut at the first KiB's end", cut, false},
		{"invalid past the first KiB", strings.Repeat("a", 1024) + "\xff", false},
	}
	for _, tt := range tests {
		if got := ignore.Binary([]byte(tt.v)); got != tt.want {
			t.Errorf("%s: Binary: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

type mapSource map[string][]byte

func (m mapSource) Keys() []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
func (m mapSource) Entry(k string) (backend.Entry, bool) {
	mode := fs.FileMode(0o644)
	if k == "skills/.memfsignore" {
		mode = fs.ModeSymlink | 0o777
	}
	_, ok := m[k]
	return backend.Entry{Key: k, Info: backend.Info{Mode: mode}}, ok
}
func (m mapSource) Resolve(context.Context, ...string) error { return nil }
func (m mapSource) Get(k string) ([]byte, bool)              { v, ok := m[k]; return v, ok }

func TestLoad(t *testing.T) {
	src := mapSource{"memory/.memfsignore": []byte("*.log\n"), "memory/a.log": bytes.Repeat([]byte("x"), 3),
		"skills/.memfsignore": []byte("a.md")} // a symlink: its target is no rule
	if r, err := ignore.Load(t.Context(), src); err != nil || r.Ignored("skills/a.md") {
		t.Errorf("a symlink named .memfsignore: got rules from its target (%v)", err)
	}
	r, err := ignore.Load(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Ignored("memory/a.log") || r.Ignored("a.log") || !r.Ignored(".git/x") {
		t.Error("Load: want memory/*.log and the defaults ignored, and nothing else")
	}
}
