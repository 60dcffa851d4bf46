package packhist

import (
	"testing"

	"github.com/memfs/memfs/session"
)

func TestOutcomesAgree(t *testing.T) {
	for _, o := range []struct{ ours, session string }{
		{outcomeKeptBeside, session.OutcomeKeptBeside},
		{outcomeDeleted, session.OutcomeDeleted},
		{outcomeKeptBoth, session.OutcomeKeptBoth},
	} {
		if o.ours != o.session {
			t.Errorf("packhist's conflict outcome %q differs from the session's %q", o.ours, o.session)
		}
	}
}
