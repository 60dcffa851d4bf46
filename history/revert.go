package history

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// RevertIndex returns which of a key's n versions that hold content
// (oldest first, its deletes and conflict records left out) a revert with
// no target goes back to: the one before the last while the key exists
// (the last is its present), the last when it is gone (the last before
// its delete); -1 for none. Every door's revert (the engine's, the mount
// client's) asks it through RevertTarget, so that they agree.
func RevertIndex(n int, gone bool) int {
	if gone {
		return n - 1
	}
	return max(n-2, -1)
}

// RevertTarget returns the version of vs (a key's versions, oldest
// first) a revert with no target goes back to (RevertIndex): a conflict
// record (another writer's value, which history never held) and a delete
// are no version to go back to. A redacted one is refused (its bytes are
// gone), with the error naming it (ErrRedacted); ok false for none.
func RevertTarget(key string, vs []Version, gone bool) (v Version, ok bool, err error) {
	vs = slices.DeleteFunc(slices.Clone(vs), func(v Version) bool { return v.Op == OpDelete || v.Op == OpConflict })
	i := RevertIndex(len(vs), gone)
	if i < 0 {
		return Version{}, false, nil
	}
	if vs[i].Redacted {
		return vs[i], true, fmt.Errorf("the version of %s to go back to, %d, was %w: its bytes are gone; name another with --to SEQ", key, vs[i].Seq, ErrRedacted)
	}
	return vs[i], true, nil
}

// ParseLogLine parses a line of LogLine: the version's seq, op, old key
// and whether it was redacted (what a reader of .memfs/history/KEY/log
// needs to choose a version); ok false for a line that is none.
func ParseLogLine(line string) (v Version, ok bool) {
	f := strings.Fields(line)
	if len(f) < 5 {
		return v, false
	}
	seq, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil || !validVersionOp(f[2]) {
		return v, false
	}
	v.Seq, v.Op = seq, f[2]
	v.Redacted = strings.HasSuffix(strings.TrimRight(line, "\n"), " (redacted)")
	return v, true
}
