package memfs

import (
	"context"
	"encoding/json"

	"github.com/memfs/memfs/contextpack"
)

// SummaryLine is the line s takes in contextpack.SummariesKey: one JSON
// object and a newline.
func SummaryLine(s contextpack.Summary) ([]byte, error) {
	line, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// AddSummary appends the step summary s to contextpack.SummariesKey, on a
// line of its own after what the key holds.
func (f *FS) AddSummary(ctx context.Context, s contextpack.Summary) error {
	line, err := SummaryLine(s)
	if err != nil {
		return err
	}
	key := contextpack.SummariesKey
	c := f.Session()
	var v []byte
	if c.Has(key) {
		if err := c.Resolve(ctx, key); err != nil {
			return err
		}
		old, _ := c.Get(key)
		v = append(v, old...)
		if len(v) > 0 && v[len(v)-1] != '\n' {
			v = append(v, '\n')
		}
	}
	return c.Set(key, append(v, line...))
}
