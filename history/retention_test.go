package history

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRetentionKeep: every version in the first 30 days, the last N
// whatever their age, then the last of each day, then of each month.
func TestRetentionKeep(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	ages := []time.Duration{
		800 * day, 799*day + time.Hour, // one month (Sep 2024): only the later
		700 * day, 699*day + 23*time.Hour, // one month: only the later
		100*day + 2*time.Hour, 100*day + time.Hour, // one day: only the later
		99 * day,    // its own day
		31 * day,    // its own day
		29 * day,    // within 30 days
		29 * day,    // within 30 days
		time.Hour,   // within 30 days
		time.Minute, // the latest
	}
	var vs []Version
	for i, a := range ages {
		vs = append(vs, Version{Seq: uint64(i + 1), CTime: now.Add(-a).UnixNano()})
	}
	got := Retention{Last: 2}.withDefaults().keep(vs, now)
	want := "-+-+-+++++++"
	var b strings.Builder
	for _, k := range got {
		b.WriteString(map[bool]string{true: "+", false: "-"}[k])
	}
	if b.String() != want {
		t.Errorf("keep = %s, want %s", b.String(), want)
	}
	// Last keeps the newest N even when all are old and of one day.
	old := []Version{{Seq: 1, CTime: now.Add(-400 * day).UnixNano()}, {Seq: 2, CTime: now.Add(-400*day + time.Minute).UnixNano()}, {Seq: 3, CTime: now.Add(-400*day + 2*time.Minute).UnixNano()}}
	if got := fmt.Sprint(Retention{Last: 2}.withDefaults().keep(old, now)); got != "[false true true]" {
		t.Errorf("keep of 3 old versions with Last 2 = %s", got)
	}
}

func TestParseRetention(t *testing.T) {
	o, err := ParseRetention("60d; memory/=90d:20:730d ;memory/scratch/=12h:3")
	if err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	for _, tt := range []struct {
		key  string
		want Retention
	}{
		{"skills/x", Retention{All: 60 * day, Last: DefaultKeepLast, Daily: DefaultKeepDaily}},
		{"memory/a.md", Retention{All: 90 * day, Last: 20, Daily: 730 * day}},
		{"memory/scratch/b", Retention{All: 12 * time.Hour, Last: 3, Daily: DefaultKeepDaily}},
	} {
		if got := o.For(tt.key); got != tt.want {
			t.Errorf("For(%s) = %+v, want %+v", tt.key, got, tt.want)
		}
	}
	if got := (RetentionOptions{}).For("a"); got != (Retention{All: DefaultKeepAll, Last: DefaultKeepLast, Daily: DefaultKeepDaily}) {
		t.Errorf("zero options: %+v", got)
	}
	for _, bad := range []string{"x", "30d:0", "30d:1:2:3", "-1d", "memory/=1y"} {
		if _, err := ParseRetention(bad); err == nil {
			t.Errorf("ParseRetention(%q) = nil error", bad)
		}
	}
}
