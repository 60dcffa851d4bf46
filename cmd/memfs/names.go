package main

import (
	"github.com/memfs/memfs/internal/names"
)

// showName is names.Show: how every name memfs prints on its output
// appears (as it is, or quoted).
func showName(name string) string { return names.Show(name) }
