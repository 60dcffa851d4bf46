package main

import (
	"github.com/memfs/memfs/internal/names"
	"github.com/memfs/memfs/redact"
)

// showName is names.Show: how every name memfs prints on its output
// appears (as it is, or quoted).
func showName(name string) string { return names.Show(name) }

// redactName is names.Redact: name with a secret in it redacted, by red or
// by the default rules.
func redactName(name string, red *redact.Redactor) string { return names.Redact(name, red) }
