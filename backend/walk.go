package backend

import "context"

// Walker is a Store that can report its listing as it reads it, a batch at
// a time, so that a caller that indexes a large store never holds the whole
// listing (100,000 entries with their Info are ~17 MB, and a slice grown to
// hold them copies them again and again).
type Walker interface {
	// Walk calls fn with what List would return, in batches of at most
	// WalkBatch entries: every key once, Value nil, in an order the
	// store chooses (List sorts; Walk need not). fn may keep the
	// entries but not the slice, which Walk reuses. An error from fn
	// stops the walk and is returned as it is.
	Walk(ctx context.Context, fn func(batch []Entry) error) error
}

// WalkBatch is the most entries a Walker passes in one call.
const WalkBatch = 1024

// Lister is the part of a Store that Walk needs.
type Lister interface {
	List(ctx context.Context) ([]Entry, error)
}

// Walk reports st's listing to fn in batches: through st's Walk when st is
// a Walker, else from one List.
func Walk(ctx context.Context, st Lister, fn func(batch []Entry) error) error {
	if w, ok := st.(Walker); ok {
		return w.Walk(ctx, fn)
	}
	listed, err := st.List(ctx)
	if err != nil {
		return err
	}
	return WalkListed(ctx, listed, fn)
}

// WalkListed passes a listing already taken to fn, WalkBatch entries at a
// time, each batch capped so that an append by fn cannot reach into the
// next.
func WalkListed(ctx context.Context, listed []Entry, fn func(batch []Entry) error) error {
	for len(listed) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(listed), WalkBatch)
		if err := fn(listed[:n:n]); err != nil {
			return err
		}
		listed = listed[n:]
	}
	return nil
}

// WalkEach is a Walker's Walk over each, which reads the store and passes
// every entry to the add it is given (stopping at add's first error):
// the entries reach fn WalkBatch at a time, in one slice reused (and
// cleared, so that it keeps no reference to what fn was given).
func WalkEach(each func(add func(Entry) error) error, fn func(batch []Entry) error) error {
	buf := make([]Entry, 0, WalkBatch)
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		err := fn(buf)
		clear(buf)
		buf = buf[:0]
		return err
	}
	err := each(func(e Entry) error {
		if buf = append(buf, e); len(buf) < WalkBatch {
			return nil
		}
		return flush()
	})
	if err != nil {
		return err
	}
	return flush()
}
