package fsnode

import "github.com/memfs/memfs/session"

// damaged lists for .memfs/status the damaged keys (session Damaged) the
// caller may see, and counts the others (a name is data too: see
// statusOf). The errors
// are in memfs's log and memfs fsck's report, not here.
func (r *Root) damaged(cr session.Cred) (shown []string, hidden int) {
	for _, d := range r.c.Stats().Damaged() {
		if cr.UID != 0 && !r.c.Access().CanSee(d.Key, cr) {
			hidden++
			continue
		}
		shown = append(shown, d.Key)
	}
	return shown, hidden
}
