package memfs_test

import (
	"strings"
	"testing"

	"github.com/memfs/memfs"
)

// Print writes the verdicts to one writer, the warnings and damage to the
// other, a line each.
func TestLogCheckPrint(t *testing.T) {
	lc := memfs.LogCheck{Out: "history ok\nevent log ok\n", Notes: []string{"warning: w", "damage: d"}}
	var out, notes strings.Builder
	lc.Print(&out, &notes)
	if out.String() != lc.Out || notes.String() != "warning: w\ndamage: d\n" {
		t.Errorf("Print wrote %q and notes %q", out.String(), notes.String())
	}
}
