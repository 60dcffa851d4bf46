package session

import "github.com/memfs/memfs/internal/merge3"

// mergeText is the three-way merge of the Merge policy (internal/merge3,
// line by line; concurrent appends give theirs' lines, then ours): ok
// false (an overlap, a binary value) keeps both.
func mergeText(base, ours, theirs []byte) (merged []byte, ok bool) {
	return merge3.Merge(base, ours, theirs)
}
