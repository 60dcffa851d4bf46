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
	if err := lc.Print(&out, &notes); err != nil || out.String() != lc.Out || notes.String() != "warning: w\ndamage: d\n" {
		t.Errorf("Print wrote %q and notes %q, returned %v; want no error", out.String(), notes.String(), err)
	}
	lc.Failed = "event log broken at event 3"
	out.Reset()
	if err := lc.Print(&out, &notes); err == nil || err.Error() != lc.Failed || out.String() != lc.Out {
		t.Errorf("Print of a failed check wrote %q, returned %v; want the verdicts and the failure", out.String(), err)
	}
}
