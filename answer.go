package memfs

import (
	"context"
	"time"

	"github.com/memfs/memfs/search"
)

// Answer answers the search request r for the caller ctx carries
// (session.WithCred) from a store no mount serves. The notes without
// vectors yet are embedded first, for at most wait; when that cannot
// finish (the wait ends, the model fails), those notes rank by their
// words, and late says why. An index that does not open is an error
// that wraps search's (reindex rebuilds it).
func (f *FS) Answer(ctx context.Context, r search.Request, wait time.Duration) (answer []byte, late, err error) {
	s, err := f.Search(ctx)
	if err != nil {
		return nil, nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	late = s.WaitEmbedded(wctx)
	cancel()
	answer, err = s.Answer(ctx, r)
	return answer, late, err
}
