package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// LoadConfig reads a JSON config file:
//
//	{
//	  "rules":   [{"id": "ticket-token", "pattern": "TKT-[0-9a-f]{32}", "keywords": ["TKT-"]}],
//	  "allow":   ["AKIAIOSFODNN7EXAMPLE"],
//	  "disable": [{"prefix": "skills/security-training/", "rules": ["jwt", "private-key"]}],
//	  "env_names": ["*TOKEN*", "MY_APP_SECRET"],
//	  "min_env_len": 12
//	}
//
// Every field is optional; unknown fields are an error, so that a typo
// does not silently switch a rule off.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	var cfg Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, fmt.Errorf("redact: config %s: %w", path, err)
	}
	return cfg, nil
}
