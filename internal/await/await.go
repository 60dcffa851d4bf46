// Package await is the tests' one wait on a condition nothing announces
// (a file on a mount, a line in a log, a lease ending on etcd's clock).
// A test waits on a channel or an event where it can; where it cannot, it
// polls here, with a deadline, rather than sleeping a guessed time.
package await

import (
	"testing"
	"time"
)

// Cond calls cond every interval until it holds (true) or d has passed
// (false).
func Cond(d, every time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); !cond(); {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
	}
	return true
}

// True polls cond until it holds, and fails t, naming what it waited
// for, if d passes first.
func True(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	if !Cond(d, 10*time.Millisecond, cond) {
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}
