package redact

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check prints PATH:LINE:COLUMN: RULE per finding, never the secret, reads
// stdin as "-" without a path, and reads every file before it reports.
func TestCheck(t *testing.T) {
	const token = "ghp_Zq8mR2xL7bW4nT0vK5yJ1cH6dF3sP9gA2eU7"
	r := newT(t, Config{})
	dir := t.TempDir()
	clean, secret := filepath.Join(dir, "clean.md"), filepath.Join(dir, "note.md")
	os.WriteFile(clean, []byte("nothing to see\n"), 0o644)
	os.WriteFile(secret, []byte("line one\nthe token is "+token+"\n"), 0o644)

	tests := []struct {
		name      string
		paths     []string
		stdin     string
		want      string
		wantFound int
		wantErr   error
	}{
		{"clean file", []string{clean}, "", "", 0, nil},
		{"a secret", []string{clean, secret}, "", secret + ":2:14: github-token\n", 1, ErrFound},
		{"stdin", nil, "key AKIAQ3EGXP7ZLRK2MV5N", "-:1:5: aws-access-key-id\n", 1, ErrFound},
		{"a missing file reports nothing", []string{secret, filepath.Join(dir, "missing")}, "", "", 0, fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			found, err := r.Check(&out, tt.paths, strings.NewReader(tt.stdin))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Check: error %v, want %v", err, tt.wantErr)
			}
			if errors.Is(err, ErrFound) && err.Error() != "redact check: 1 secret(s) found" {
				t.Errorf("Check: error %q, want it to say how many were found", err)
			}
			if out.String() != tt.want || found != tt.wantFound {
				t.Errorf("Check printed %q and found %d, want %q and %d", out.String(), found, tt.want, tt.wantFound)
			}
			if strings.Contains(out.String(), token) {
				t.Error("Check printed the secret")
			}
		})
	}
}
