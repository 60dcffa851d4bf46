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
//
// An "allow" entry keeps a secret when it matches the whole secret (the
// bytes a marker would replace): the secret equals the entry, or the
// entry, as a regular expression anchored at both ends, matches it. So
// "AKIAIOSFODNN7EXAMPLE" keeps that one key and "ghp_" keeps nothing (it
// used to keep every GitHub token); a family of test keys takes a
// pattern, "sk_test_4eC39H[A-Za-z0-9]+". An entry that does not compile
// is an error.
//
// A "disable" entry names rules by id: memfs's (github-token, ...; a
// gitleaks rule reported under a memfs id goes off with it), gitleaks'
// own (shopify-access-token; see the package doc), the config's own, "env"
// or "env-NAME" for environment values, or "*" for all. An id that names
// no rule is an error.
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
