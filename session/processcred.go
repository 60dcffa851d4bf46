package session

import "os"

// ProcessCred is the credential of this process: what a program that
// opens the store itself (a command without a mount) may read, by the
// rules a mount applies to its callers.
func ProcessCred() Cred {
	cr := Cred{UID: uint32(os.Geteuid()), GIDs: []uint32{uint32(os.Getegid())}}
	groups, _ := os.Getgroups() // none known: the primary group alone, which only denies more
	for _, g := range groups {
		cr.GIDs = append(cr.GIDs, uint32(g))
	}
	return cr
}
