package memfs

import (
	"context"
	"fmt"
	"io"
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

// WriteAnswer writes the Answer to r on w, as memfs search does on a store
// no mount serves, and says on warn why notes rank by their words: those
// not embedded in time (late), or all of them, with no Embedder. Its
// error says that memfs reindex rebuilds the index.
func (f *FS) WriteAnswer(ctx context.Context, w, warn io.Writer, r search.Request, wait time.Duration) error {
	b, late, err := f.Answer(ctx, r, wait)
	if late != nil {
		fmt.Fprintf(warn, "memfs: %v; those notes rank by their words\n", late)
	}
	if err != nil {
		return fmt.Errorf("%w\n  memfs reindex rebuilds the search index", err)
	}
	if f.Embedder() == nil {
		fmt.Fprintln(warn, "memfs: keyword search only: no embedder (memfs models install puts the default in place; see --embedder)")
	}
	_, err = w.Write(b)
	return err
}

// WriteContext writes the context pack the query name asks for (or its
// manifest: ContextFile) on w, for this process's user (AsProcess), as
// memfs context does on a store no mount serves.
func (f *FS) WriteContext(ctx context.Context, w io.Writer, name string) error {
	b, err := f.ContextFile(AsProcess(ctx), name)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
