package session

import (
	"strings"
	"testing"
)

func TestParseTransient(t *testing.T) {
	tests := []struct {
		values  []string
		want    []string
		wantErr string
	}{
		{[]string{"*.tmp"}, []string{"*.tmp"}, ""},
		{[]string{"*.tmp", ".*.sw?"}, []string{"*.tmp", ".*.sw?"}, ""},
		{[]string{""}, []string{}, ""},
		{[]string{"["}, nil, `transient pattern "["`},
		{[]string{"a/b"}, nil, "without /"},
		{[]string{"", "*.tmp"}, nil, "cannot go with patterns"},
	}
	for _, tt := range tests {
		got, err := ParseTransient(tt.values)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseTransient(%q) = %v, want an error saying %q", tt.values, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("ParseTransient(%q): %v", tt.values, err)
		case got == nil || strings.Join(got, "\x00") != strings.Join(tt.want, "\x00"):
			t.Errorf("ParseTransient(%q) = %#v, want %#v", tt.values, got, tt.want)
		}
	}
}
