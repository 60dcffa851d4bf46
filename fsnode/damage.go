package fsnode

import (
	"fmt"
	"strings"

	"github.com/memfs/memfs/session"
)

// damageText writes the status lines of the damaged keys (session
// Damaged): one "damaged: KEY" line per key the caller may see, and a
// count of the others (a name is data too: see statusText). The errors
// are in memfs's log and memfs fsck's report, not here.
func (r *Root) damageText(b *strings.Builder, cr session.Cred) {
	hidden := 0
	for _, d := range r.c.Stats().Damaged() {
		if cr.UID != 0 && !r.c.Access().CanSee(d.Key, cr) {
			hidden++
			continue
		}
		fmt.Fprintf(b, "damaged: %s\n", d.Key)
	}
	if hidden > 0 {
		fmt.Fprintf(b, "damaged_hidden: %d (keys you may not see; memfs fsck on the store lists them)\n", hidden)
	}
}
