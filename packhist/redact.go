package packhist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// ErrRedacted is wrapped by the error of a rebuild that needs a value
// whose version was redacted (Redact).
var ErrRedacted = errors.New("redacted")

// Redact is memfs's redaction of the version of key at seq (a secret the
// rules missed) in the archive: the record is marked, so that a rebuild
// that needs it fails with ErrRedacted rather than serving the value
// (from the archive, or from the store's key while it still holds the
// bytes), and the archive's copy of the value is removed unless another
// record names the same bytes (their versions hold them too, and the
// caller redacts those). A seq without a record of key is no error.
func Redact(ctx context.Context, sys Sys, key string, seq uint64) error {
	name := recordName(seq)
	rec, err := loadRecord(ctx, sys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || rec.Key != key {
		return err
	}
	if !rec.Redacted {
		rec.Redacted = true
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		if err := sys.SaveSys(ctx, name, b); err != nil {
			return fmt.Errorf("packhist: redact %s at %d: %w", key, seq, err)
		}
	}
	es, err := sys.ListSys(ctx, recordPrefix)
	if err != nil {
		return fmt.Errorf("packhist: redact %s at %d: %w", key, seq, err)
	}
	for _, e := range es {
		if e.Key == name {
			continue
		}
		other, err := loadRecord(ctx, sys, e.Key)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err == nil && !other.Redacted && other.SHA256 == rec.SHA256 {
			return nil // its version holds the bytes too
		}
	}
	if err := sys.DeleteSys(ctx, valueName(rec.SHA256)); err != nil {
		return fmt.Errorf("packhist: redact %s at %d: %w", key, seq, err)
	}
	return nil
}

func loadRecord(ctx context.Context, sys Sys, name string) (*Record, error) {
	b, err := sys.LoadSys(ctx, name)
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("packhist: %s does not parse (%v): %w", name, err, ErrMismatch)
	}
	return &rec, nil
}
