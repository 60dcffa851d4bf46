package backend_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
)

func TestValidateKey(t *testing.T) {
	tests := []struct {
		key     string
		ok      bool
		tooLong bool
	}{
		{"memory/global.md", true, false},
		{"a", true, false},
		{"skills/go-patterns/SKILL.md", true, false},
		{"日本/メモ.md", true, false},
		{".hidden", true, false},
		{"", false, false},
		{"/abs", false, false},
		{"trailing/", false, false},
		{"a//b", false, false},
		{"./a", false, false},
		{"a/./b", false, false},
		{"..", false, false},
		{"a/../b", false, false},
		{"../escape", false, false},
		{"nul\x00byte", false, false},
		{"bad\xffutf8", false, false},
		{"new\nline", false, false},
		{"esc\x1b[31mred", false, false},
		{"bel\a", false, false},
		{"tab\tname", false, false},
		{"cr\r", false, false},
		{"\x01", false, false},
		{"dir\x1f/a", false, false},
		{"del\x7f", false, false},
		{"c1-csi\u009b31m", false, false},
		{"c1-nel\u0085", false, false},
		{"c1-first\u0080", false, false},
		{"c1-last\u009f", false, false},
		{"after-c1\u00a0nbsp", true, false},
		{"café ü", true, false},
		{"space in name", true, false},
		{"tilde~", true, false},
		{strings.Repeat("x", 255), true, false},
		{strings.Repeat("x", 256), false, true},
		{strings.Repeat("abcdefgh/", 455) + "x", true, false},
		{strings.Repeat("abcdefgh/", 456) + "x", true, false}, // no limit on the whole (issue 36)
		{strings.Repeat(strings.Repeat("s", 255)+"/", 256) + "x", true, false},
		{strings.Repeat("s", 255) + "/" + strings.Repeat("s", 256) + "/x", false, true},
	}
	for _, tt := range tests {
		err := backend.ValidateKey(tt.key)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateKey(%.40q) = %v, want ok=%v", tt.key, err, tt.ok)
			continue
		}
		if err != nil && !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("ValidateKey(%.40q) = %v, not ErrInvalidKey", tt.key, err)
		}
		if got := errors.Is(err, backend.ErrKeyTooLong); got != tt.tooLong {
			t.Errorf("ValidateKey(%.40q): ErrKeyTooLong = %v, want %v", tt.key, got, tt.tooLong)
		}
	}
}

func TestNotFound(t *testing.T) {
	err := backend.NotFound("load", "memory/x.md")
	if !errors.Is(err, backend.ErrKeyNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("NotFound = %v: want ErrKeyNotFound and fs.ErrNotExist", err)
	}
	if !strings.Contains(err.Error(), "memory/x.md") {
		t.Fatalf("NotFound = %q does not name the key", err)
	}
}

func TestIsReserved(t *testing.T) {
	for key, want := range map[string]bool{
		".memfs": true, ".memfs/status": true, ".memfs-journal": true, ".memfs.lock": true,
		".memfs-sys/x": true, "a/.memfs-tmp-123": true, ".memfs-tmp-9": true,
		"a/.memfs": false, "a/.memfs-journal": false, ".memfsx": false, ".git/HEAD": false,
		"a/.b.swp": false, ".env": false, "memory/.hidden.md": false,
	} {
		if got := backend.IsReserved(key); got != want {
			t.Errorf("IsReserved(%q) = %v, want %v", key, got, want)
		}
		if err := backend.CheckStoreKey(key); (err != nil) != want || want && !errors.Is(err, backend.ErrReserved) {
			t.Errorf("CheckStoreKey(%q) = %v, want reserved %v", key, err, want)
		}
	}
}

func TestKeyLimit(t *testing.T) {
	l := backend.KeyLimit{Max: 300, Store: "test", Why: "a test's limit"}
	fits := strings.Repeat("s", 255) + "/" + strings.Repeat("f", 44)
	if err := l.Check(fits); err != nil {
		t.Fatalf("Check of %d bytes under a limit of 300: %v", len(fits), err)
	}
	over := fits + "x"
	err := l.Check(over)
	if !errors.Is(err, backend.ErrKeyTooLong) || !errors.Is(err, backend.ErrInvalidKey) {
		t.Fatalf("Check of 301 bytes = %v, want ErrKeyTooLong and ErrInvalidKey", err)
	}
	// The message names the store, its limit and why, and never holds the
	// whole key.
	for _, want := range []string{"test store", "300 bytes", "a test's limit", "301 bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want %q in it", err, want)
		}
	}
	if strings.Contains(err.Error(), over[:200]) {
		t.Errorf("the error quotes the whole key: %v", err)
	}
	if err := (backend.KeyLimit{}).Check(strings.Repeat("x/", 1<<16) + "x"); err != nil {
		t.Errorf("the zero KeyLimit refused a key: %v", err)
	}
}

func TestQuoteKey(t *testing.T) {
	if got := backend.QuoteKey("memory/a.md"); got != `"memory/a.md"` {
		t.Errorf("QuoteKey of a short key = %s", got)
	}
	long := "é" + strings.Repeat("é/", 2000) + "end"
	got := backend.QuoteKey(long)
	if len(got) > 200 || !strings.Contains(got, "(6005 bytes)") || strings.Contains(got, `\x`) {
		t.Errorf("QuoteKey of %d bytes = %s: want a short quote, whole runes, and the length", len(long), got)
	}
}
