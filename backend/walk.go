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
	for len(listed) > 0 {
		n := min(len(listed), WalkBatch)
		if err := fn(listed[:n:n]); err != nil {
			return err
		}
		listed = listed[n:]
	}
	return nil
}

// WalkBuffer collects a Walker's entries and hands them to its fn WalkBatch
// at a time, reusing one slice.
type WalkBuffer struct {
	fn  func([]Entry) error
	buf []Entry
}

// NewWalkBuffer returns a WalkBuffer that calls fn.
func NewWalkBuffer(fn func([]Entry) error) *WalkBuffer {
	return &WalkBuffer{fn: fn, buf: make([]Entry, 0, WalkBatch)}
}

// Add appends e, and passes the batch on when it is full.
func (b *WalkBuffer) Add(e Entry) error {
	b.buf = append(b.buf, e)
	if len(b.buf) < WalkBatch {
		return nil
	}
	return b.Flush()
}

// Flush passes on what was added since the last batch, if anything.
func (b *WalkBuffer) Flush() error {
	if len(b.buf) == 0 {
		return nil
	}
	err := b.fn(b.buf)
	clear(b.buf) // the entries are fn's now; the slice keeps no reference
	b.buf = b.buf[:0]
	return err
}
