package redact

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultConfigPath is where memfs looks for a config file when none is
// named: $XDG_CONFIG_HOME/memfs/redact.json, else ~/.config/memfs/redact.json.
func DefaultConfigPath() string {
	base := os.Getenv("XDG_CONFIG_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "memfs", "redact.json")
}

// NewFromFile builds a Redactor with the config file at path; "" is
// DefaultConfigPath when that exists, else no config (the built-in rules).
func NewFromFile(path string) (*Redactor, error) {
	if path == "" {
		if _, err := os.Stat(DefaultConfigPath()); err == nil {
			path = DefaultConfigPath()
		}
	}
	var cfg Config
	if path != "" {
		var err error
		if cfg, err = LoadConfig(path); err != nil {
			return nil, fmt.Errorf("redaction config %s: %w", path, err)
		}
	}
	return New(cfg)
}
