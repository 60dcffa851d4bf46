package session

import (
	"os"
	"slices"
	"testing"
)

func TestProcessCred(t *testing.T) {
	cr := ProcessCred()
	if cr.UID != uint32(os.Geteuid()) || len(cr.GIDs) == 0 || cr.GIDs[0] != uint32(os.Getegid()) {
		t.Errorf("ProcessCred() = %+v, want uid %d, primary group %d first", cr, os.Geteuid(), os.Getegid())
	}
	groups, _ := os.Getgroups()
	for _, g := range groups {
		if !slices.Contains(cr.GIDs, uint32(g)) {
			t.Errorf("ProcessCred() = %+v lacks group %d", cr, g)
		}
	}
}
