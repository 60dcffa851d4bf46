package live

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/memfs/memfs/internal/names"
)

// NoMatch is the text answer of a search with no result the caller may read.
const NoMatch = "no match: no file you may read matches this query (words and filters)"

// FormatResults renders results: one block per hit (the key as names.Show
// prints it, and the score, then the snippet indented, then a blank line),
// or one JSON object per line. No result is NoMatch in text, which a
// reader cannot take for a search that did not run, and nothing in JSON
// (zero lines: still valid JSON lines).
func FormatResults(res []Result, asJSON bool) []byte {
	var b bytes.Buffer
	if asJSON {
		enc := json.NewEncoder(&b)
		for _, r := range res {
			enc.Encode(r)
		}
		return b.Bytes()
	}
	if len(res) == 0 {
		return []byte(NoMatch + "\n")
	}
	for _, r := range res {
		fmt.Fprintf(&b, "%s  score %.3f\n  %s\n\n", names.Show(r.Key), r.Score, r.Snippet)
	}
	return b.Bytes()
}
