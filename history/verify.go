package history

import (
	"context"
	"fmt"
	"strings"

	"github.com/memfs/memfs/backend"
)

// Verified is what Verify found.
type Verified struct {
	Versions int      // version records read
	Values   int      // distinct values read back and checked
	Damage   []string // one line per damaged record or value, with the versions it hurts
}

// Verify reads every version record and the value of each back, checking
// every object against its name and every value against its address
// (Get). It changes nothing: damage is reported, never removed or
// repaired, and one damaged record does not stop the check of the others.
// The error is for a store that cannot be read at all.
func (s *Store) Verify(ctx context.Context) (Verified, error) {
	var out Verified
	ents, err := backend.ScanSys(ctx, s.sys, versionPrefix)
	if err != nil {
		return out, fmt.Errorf("history: verify: %w", err)
	}
	users := map[Addr][]string{} // value -> the versions that name it
	for _, e := range ents {
		if _, seq, ok := strings.Cut(strings.TrimPrefix(e.Key, versionPrefix), "/"); !ok || len(seq) != seqDigits {
			continue
		}
		out.Versions++
		var v Version
		if err := decodeVersion(e.Key, e.Value, &v); err != nil {
			out.Damage = append(out.Damage, err.Error())
			continue
		}
		if !v.Addr.IsZero() {
			users[v.Addr] = append(users[v.Addr], fmt.Sprintf("%s@%d", v.Key, v.Seq))
		}
	}
	for a, vs := range users {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		out.Values++
		if _, err := s.Get(ctx, a); err != nil {
			out.Damage = append(out.Damage, fmt.Sprintf("%v (the value of %s)", err, strings.Join(vs, ", ")))
		}
	}
	return out, nil
}

// Summary is one line saying what Verify found.
func (v Verified) Summary() string {
	if len(v.Damage) == 0 {
		return fmt.Sprintf("history: %d versions, %d values: every value matches its address", v.Versions, v.Values)
	}
	return fmt.Sprintf("history: %d versions, %d values: %d damaged (kept as found)", v.Versions, v.Values, len(v.Damage))
}
