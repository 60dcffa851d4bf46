package live

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/memfs/memfs/internal/names"
)

// FormatResults renders results: one block per hit (the key as names.Show
// prints it, and the score, then the snippet indented, then a blank line),
// or one JSON object per line.
func FormatResults(res []Result, asJSON bool) []byte {
	var b bytes.Buffer
	if asJSON {
		enc := json.NewEncoder(&b)
		for _, r := range res {
			enc.Encode(r)
		}
		return b.Bytes()
	}
	for _, r := range res {
		fmt.Fprintf(&b, "%s  score %.3f\n  %s\n\n", names.Show(r.Key), r.Score, r.Snippet)
	}
	return b.Bytes()
}
