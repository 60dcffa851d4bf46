package cliargs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadInput: a FILE is read; none, or "-", is stdin.
func TestReadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "v")
	if err := os.WriteFile(file, []byte("from the file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ file, want string }{{"", "stdin"}, {"-", "stdin"}, {file, "from the file"}} {
		if got, err := ReadInput(tt.file, strings.NewReader("stdin")); err != nil || string(got) != tt.want {
			t.Errorf("ReadInput(%q) = %q, %v; want %q", tt.file, got, err, tt.want)
		}
	}
	if _, err := ReadInput(file+".missing", strings.NewReader("stdin")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadInput of a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in   string
		want fs.FileMode
		err  bool
	}{
		{"0644", 0o644, false},
		{"600", 0o600, false},
		{"0", 0, false},
		{"0777", 0o777, false},
		{"1777", 0, true}, // beyond the permission bits
		{"rw-r--r--", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseMode(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && err.Error() != `"`+tt.in+`": want an octal mode such as 0644` {
			t.Errorf("ParseMode(%q): error %q does not quote the mode", tt.in, err)
		}
	}
}

// TestPrefix: PREFIX or --prefix, or both when they agree.
func TestPrefix(t *testing.T) {
	tests := []struct{ arg, flag, want, err string }{
		{"", "", "", ""},
		{"memory/", "", "memory/", ""},
		{"", "memory/", "memory/", ""},
		{"memory/", "memory/", "memory/", ""},
		{"memory/", "skills/", "", `PREFIX "memory/" and --prefix "skills/" disagree`},
	}
	for _, tt := range tests {
		got, err := Prefix(tt.arg, tt.flag)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && err.Error() != tt.err {
			t.Errorf("Prefix(%q, %q) = %q, %v; want %q, %q", tt.arg, tt.flag, got, err, tt.want, tt.err)
		}
	}
}
