package redact_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/redact"
)

// TestNewFromFile: "" takes the default config file when it exists; a
// named file that does not load is an error that names it.
func TestNewFromFile(t *testing.T) {
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	if got, want := redact.DefaultConfigPath(), filepath.Join(cfgHome, "memfs", "redact.json"); got != want {
		t.Errorf("DefaultConfigPath = %q, want %q", got, want)
	}
	if _, err := redact.NewFromFile(""); err != nil {
		t.Fatalf("no config file: %v", err)
	}
	os.MkdirAll(filepath.Dir(redact.DefaultConfigPath()), 0o755)
	rule := `{"rules": [{"id": "ticket-token", "pattern": "TKT-[0-9a-f]{8}", "keywords": ["TKT-"]}]}`
	if err := os.WriteFile(redact.DefaultConfigPath(), []byte(rule), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := redact.NewFromFile("")
	if err != nil {
		t.Fatal(err)
	}
	if _, findings := r.Redact("k", []byte("token TKT-0123abcd here")); len(findings) != 1 || findings[0].RuleID != "ticket-token" {
		t.Errorf("the default config's rule found %v, want one ticket-token", findings)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("{"), 0o600)
	if _, err := redact.NewFromFile(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a bad config: %v, want an error naming %s", err, bad)
	}
}
