package live

import (
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/search"
)

// A shortened conflict copy (of a 255-byte name) ranks right below its
// original too: the original is found by the copy's hash.
func TestCopiesBelowOriginalsOfALongName(t *testing.T) {
	orig := "memory/" + strings.Repeat("é", 126) + ".md"
	ck := backend.ConflictKeyBy(orig, "coder", time.Unix(1000, 0))
	got := copiesBelowOriginals([]search.Hit{{Key: ck, Score: 3}, {Key: "memory/z.md", Score: 2}, {Key: orig, Score: 1}})
	if len(got) != 3 || got[0].Key != "memory/z.md" || got[1].Key != orig || got[2].Key != ck {
		t.Errorf("copiesBelowOriginals: %v; want z, the original, its copy", got)
	}
}
