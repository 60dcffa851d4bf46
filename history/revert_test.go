package history_test

import (
	"testing"

	"github.com/memfs/memfs/history"
)

func TestRevertIndex(t *testing.T) {
	for _, c := range []struct {
		n    int
		gone bool
		want int
	}{
		{0, false, -1}, {1, false, -1}, {2, false, 0}, {5, false, 3},
		{0, true, -1}, {1, true, 0}, {5, true, 4},
	} {
		if got := history.RevertIndex(c.n, c.gone); got != c.want {
			t.Errorf("RevertIndex(%d, gone %v) = %d, want %d", c.n, c.gone, got, c.want)
		}
	}
}
