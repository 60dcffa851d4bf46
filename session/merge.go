package session

// mergeText is the three-way merge of the Merge policy: ok false keeps
// both. Until internal/merge3 lands it merges nothing.
func mergeText(base, ours, theirs []byte) (merged []byte, ok bool) {
	return nil, false
}
