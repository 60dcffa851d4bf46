package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/memfs/memfs/internal/names"
)

// QueryName writes words as a query name, the form ParseQuery reads and
// .memfs/search/ (or its query file) takes: joined with spaces, then
// percent-encoded.
func QueryName(words ...string) string { return url.PathEscape(strings.Join(words, " ")) }

// CutFormat removes the word format:json from a query name (as
// ParseQuery reads it: percent-encoded) and reports whether it was there.
// Without it, name is returned as it is.
func CutFormat(name string) (string, bool) {
	dec, err := url.PathUnescape(name)
	if err != nil {
		return name, false
	}
	words := strings.Fields(dec)
	asJSON := false
	kept := words[:0]
	for _, w := range words {
		if w == "format:json" {
			asJSON = true
			continue
		}
		kept = append(kept, w)
	}
	if !asJSON {
		return name, false
	}
	return QueryName(kept...), true
}

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
