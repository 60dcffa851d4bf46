package history

// RevertIndex returns which of a key's n versions that hold content
// (oldest first, its deletes left out) a revert with no target goes back
// to: the one before the last while the key exists (the last is its
// present), the last when it is gone (the last before its delete); -1
// for none. Every door's revert (the engine's, the mount client's) asks
// it, so that they agree.
func RevertIndex(n int, gone bool) int {
	if gone {
		return n - 1
	}
	return max(n-2, -1)
}
