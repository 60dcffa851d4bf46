package meta

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Filter selects entries by key prefix, modification time and the
// attributes of this package (memfs ls). The zero Filter selects every
// entry.
type Filter struct {
	Prefix           string
	Tags             []string // all of them in Tags
	Source, Agent    string
	Session, Type    string  // equal to user.memfs.session, user.memfs.type; "" for any
	MinImportance    float64 // with HasMinImportance: Importance at least this
	HasMinImportance bool
	Since, Until     time.Time // mtime in [Since, Until); zero: no bound
}

// Match reports whether an entry passes every filter, given its key,
// modification time and extended attributes. Attributes with invalid
// values count as unset.
func (f Filter) Match(key string, mtime time.Time, xattrs map[string][]byte) bool {
	if !strings.HasPrefix(key, f.Prefix) {
		return false
	}
	if !f.Since.IsZero() && mtime.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && !mtime.Before(f.Until) {
		return false
	}
	a := Parse(xattrs)
	for _, t := range f.Tags {
		if !slices.Contains(a.Tags, t) {
			return false
		}
	}
	if f.Source != "" && a.Source != f.Source {
		return false
	}
	if f.Agent != "" && a.Agent != f.Agent {
		return false
	}
	if f.Session != "" && a.Session != f.Session {
		return false
	}
	if f.Type != "" && a.Type != f.Type {
		return false
	}
	if f.HasMinImportance && (!a.HasImp || a.Importance < f.MinImportance) {
		return false
	}
	return true
}

// ParseWhen reads a time as filters take it: RFC 3339, a date (UTC
// midnight), or a duration before now; "" is the zero time (no bound).
func ParseWhen(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q: want RFC 3339 (2026-11-23T10:00:00Z), a date (2026-11-23) or a duration ago (24h)", v)
}
