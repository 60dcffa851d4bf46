package fsnode

import (
	"context"
	"testing"

	"github.com/memfs/memfs/session"
)

// TestAnswerCacheDropsAnAnswerComputedAcrossAChange checks that an answer
// computed while memory changed (clear ran during the computation) is
// returned to its caller but not kept: the next caller gets a new one,
// not the one computed from what memory held before the change.
func TestAnswerCacheDropsAnAnswerComputedAcrossAChange(t *testing.T) {
	var c answerCache
	calls := 0
	var during func()
	fn := func(context.Context, string) ([]byte, error) {
		calls++
		if during != nil {
			during()
		}
		return []byte{byte('0' + calls)}, nil
	}
	cr := session.Cred{UID: 1000, GIDs: []uint32{1000}}
	during = c.clear // memory changes while the first answer is computed
	if b, err := c.get(t.Context(), fn, "search/q", "q", cr); err != nil || string(b) != "1" {
		t.Fatalf("first get = %q, %v", b, err)
	}
	during = nil
	if b, _ := c.get(t.Context(), fn, "search/q", "q", cr); string(b) != "2" || calls != 2 {
		t.Errorf("after a change during the first computation: got %q after %d computations; want a new answer (\"2\", 2)", b, calls)
	}
	if b, _ := c.get(t.Context(), fn, "search/q", "q", cr); string(b) != "2" || calls != 2 {
		t.Errorf("with no change since: got %q after %d computations; want the kept answer (\"2\", 2)", b, calls)
	}
}
