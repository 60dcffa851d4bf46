package backend

// CorruptError is the Err (inside a *fs.PathError naming the record) of a
// system record that a store holds but cannot decode: Raw is the record
// as stored, so that a caller can keep a copy of it before replacing it,
// and (on a backend.SysSwapper) state it as the old value of a swap
// (SwapSys compares a record that does not decode by its stored bytes).
// It satisfies errors.Is(err, ErrCorrupt).
type CorruptError struct {
	Raw    []byte // the record as stored; the caller must not modify it
	Reason string // what does not decode
}

func (e *CorruptError) Error() string { return ErrCorrupt.Error() + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }
