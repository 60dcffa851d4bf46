package errorstore

import (
	"testing"

	"github.com/memfs/memfs/backend/memstore"
)

// build has a type for every combination of capabilities a store can
// have, with exactly those capabilities (a SysSwapper is always a
// SysStore).
func TestBuildEveryCombination(t *testing.T) {
	w := &wrapper{Store: memstore.New()}
	defer w.Close()
	n := 0
	for c := range capAside << 1 {
		if c&capSwap != 0 && c&capSys == 0 {
			continue
		}
		n++
		if got := capsOf(build(w, c)); got != c {
			t.Errorf("build(%09b) has capabilities %09b", c, got)
		}
	}
	if n != 384 {
		t.Errorf("checked %d combinations, want 384", n)
	}
}
