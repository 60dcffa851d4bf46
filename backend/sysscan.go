package backend

import (
	"context"
	"errors"
)

// ScanSys returns the system records of s under prefix with their data,
// as SysScanner.ScanSys does: in one pass where s is a SysScanner, else by
// ListSys and a LoadSys per record (a record removed between the two is
// left out).
func ScanSys(ctx context.Context, s SysStore, prefix string) ([]Entry, error) {
	if sc, ok := s.(SysScanner); ok {
		return sc.ScanSys(ctx, prefix)
	}
	ents, err := s.ListSys(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := ents[:0]
	for _, e := range ents {
		b, err := s.LoadSys(ctx, e.Key)
		if errors.Is(err, ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		e.Value = b
		e.Info.Size = int64(len(b))
		out = append(out, e)
	}
	return out, nil
}
