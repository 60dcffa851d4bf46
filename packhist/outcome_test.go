package packhist

import (
	"testing"

	"github.com/memfs/memfs/session"
)

func TestOutcomesAgree(t *testing.T) {
	if outcomeKeptBeside != session.OutcomeKeptBeside || outcomeDeleted != session.OutcomeDeleted {
		t.Errorf("packhist's conflict outcomes %q, %q differ from the session's %q, %q",
			outcomeKeptBeside, outcomeDeleted, session.OutcomeKeptBeside, session.OutcomeDeleted)
	}
}
