package fsnode

import "testing"

// TestExpectCounts checks that each announcement is taken once: two
// removals announced for one key (queued for the helper) are both the
// helper's, a third request is a user's.
func TestExpectCounts(t *testing.T) {
	r := &Root{expect: make(map[expectKey]expected)}
	r.Expect("memory/a.md", "remove")
	r.Expect("memory/a.md", "remove")
	for i, want := range []bool{true, true, false} {
		if got := r.takeExpected("memory/a.md", "remove"); got != want {
			t.Errorf("take %d = %v, want %v", i+1, got, want)
		}
	}
	if r.takeExpected("memory/b.md", "remove") {
		t.Error("a key never announced was taken")
	}
}
