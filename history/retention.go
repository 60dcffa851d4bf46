package history

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Retention says which versions of a key a collection ([Store.Collect])
// keeps. The zero value is the default: every version for 30 days; older
// ones thinned to the last version of each day for a year, and to the last
// of each month beyond; and whatever their age, the key's last 10
// versions. A version's age is its Time. Snapshots pin more (see Collect).
type Retention struct {
	// All keeps every version younger than this; 0: 30 days.
	All time.Duration
	// Last keeps the key's last versions, this many, whatever their
	// age; 0: 10. The latest is always kept.
	Last int
	// Daily keeps, of the versions older than All and younger than
	// this, the last of each day (UTC); older ones keep the last of each
	// month. 0: 365 days.
	Daily time.Duration
}

// The defaults of a zero Retention.
const (
	DefaultKeepAll   = 30 * 24 * time.Hour
	DefaultKeepLast  = 10
	DefaultKeepDaily = 365 * 24 * time.Hour
)

func (r Retention) withDefaults() Retention {
	if r.All <= 0 {
		r.All = DefaultKeepAll
	}
	if r.Last <= 0 {
		r.Last = DefaultKeepLast
	}
	if r.Daily <= 0 {
		r.Daily = DefaultKeepDaily
	}
	return r
}

// RetentionOptions is the retention of every key: the rule of the longest
// prefix in Prefixes that the key starts with, else Default. The zero
// value keeps the defaults of Retention for every key.
type RetentionOptions struct {
	Default  Retention
	Prefixes map[string]Retention // "memory/" -> its rule
}

// For returns the retention of key.
func (o RetentionOptions) For(key string) Retention {
	r, best := o.Default, -1
	for p, pr := range o.Prefixes {
		if strings.HasPrefix(key, p) && len(p) > best {
			r, best = pr, len(p)
		}
	}
	return r.withDefaults()
}

// ParseRetention parses a flag's retention rules: rules separated by
// ";", each "[PREFIX=]ALL[:LAST[:DAILY]]", a rule without a prefix the
// default. ALL and DAILY are Go durations or a number of days ("30d");
// an empty field keeps its default. Example: "60d;memory/=90d:20:730d;scratch/=1d:3".
func ParseRetention(s string) (RetentionOptions, error) {
	var o RetentionOptions
	for rule := range strings.SplitSeq(s, ";") {
		rule = strings.TrimSpace(rule)
		if rule == "" {
			continue
		}
		prefix, spec, ok := strings.Cut(rule, "=")
		if !ok {
			prefix, spec = "", rule
		}
		r, err := parseRule(spec)
		if err != nil {
			return RetentionOptions{}, fmt.Errorf("history: retention %q: %w", rule, err)
		}
		if prefix == "" {
			o.Default = r
			continue
		}
		if o.Prefixes == nil {
			o.Prefixes = map[string]Retention{}
		}
		o.Prefixes[prefix] = r
	}
	return o, nil
}

func parseRule(spec string) (Retention, error) {
	f := strings.Split(spec, ":")
	if len(f) > 3 {
		return Retention{}, fmt.Errorf("more than ALL:LAST:DAILY")
	}
	var r Retention
	var err error
	if r.All, err = parseAge(f[0]); err != nil {
		return r, err
	}
	if len(f) > 1 && f[1] != "" {
		if r.Last, err = strconv.Atoi(f[1]); err != nil || r.Last < 1 {
			return r, fmt.Errorf("LAST %q: want a count of at least 1", f[1])
		}
	}
	if len(f) > 2 {
		if r.Daily, err = parseAge(f[2]); err != nil {
			return r, err
		}
	}
	return r, nil
}

// parseAge parses "30d" (days) or a Go duration; "" is 0 (the default).
func parseAge(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("age %q: want days (30d) or a duration (12h)", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	a, err := time.ParseDuration(s)
	if err != nil || a <= 0 {
		return 0, fmt.Errorf("age %q: want days (30d) or a duration (12h)", s)
	}
	return a, nil
}

// Time is when the version was made, as far as its record says: the
// node's change time, which memfs sets at every change, else its
// modification time (which a process may set to the past).
func (v *Version) Time() time.Time {
	if v.CTime != 0 {
		return timeOf(v.CTime)
	}
	return timeOf(v.MTime)
}

// keep reports which of vs, one key's versions oldest first, r keeps at
// now (r with its defaults).
func (r Retention) keep(vs []Version, now time.Time) []bool {
	keep := make([]bool, len(vs))
	for i := range vs {
		t := vs[i].Time().UTC()
		age := now.Sub(t)
		switch {
		case i >= len(vs)-r.Last, age < r.All:
			keep[i] = true
		case age < r.Daily:
			keep[i] = !sameDay(t, vs[i+1].Time().UTC())
		default:
			keep[i] = !sameMonth(t, vs[i+1].Time().UTC())
		}
	}
	return keep
}

func sameDay(a, b time.Time) bool {
	return a.Year() == b.Year() && a.YearDay() == b.YearDay()
}

func sameMonth(a, b time.Time) bool {
	return a.Year() == b.Year() && a.Month() == b.Month()
}
