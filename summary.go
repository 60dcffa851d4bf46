package memfs

import (
	"context"

	"github.com/memfs/memfs/contextpack"
)

// AddSummary appends the step summary s to contextpack.SummariesKey, on a
// line of its own after what the key holds.
func (f *FS) AddSummary(ctx context.Context, s contextpack.Summary) error {
	line, err := contextpack.SummaryLine(s)
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
