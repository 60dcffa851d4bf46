package search

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/memfs/memfs/meta"
)

// ErrQuery is wrapped by ParseQuery's errors.
var ErrQuery = errors.New("invalid search query")

// ParseQuery parses a query written as a file name (see the package
// documentation), with durations counted back from now.
func ParseQuery(s string) (Query, error) { return ParseQueryAt(s, time.Now()) }

// ParseQueryAt is ParseQuery with durations ("since:24h") counted back
// from now.
func ParseQueryAt(s string, now time.Time) (Query, error) {
	var q Query
	u, err := url.PathUnescape(s)
	if err != nil {
		return q, fmt.Errorf("%w: %v", ErrQuery, err) // not s: a query may be a paragraph
	}
	var text []string
	seen := make(map[string]bool)
	for _, w := range splitWords(u) {
		key, val, ok := filterWord(w)
		if !ok {
			text = append(text, unquote(w))
			continue
		}
		if val == "" {
			return q, fmt.Errorf("%w: %q: no value", ErrQuery, w)
		}
		if key != "tag" {
			if seen[key] {
				return q, fmt.Errorf("%w: %s given twice", ErrQuery, key)
			}
			seen[key] = true
		}
		switch key {
		case "prefix":
			q.Prefix = val
		case "tag":
			q.Tags = append(q.Tags, val)
		case "source":
			q.Source = val
		case "agent":
			q.Agent = val
		case "importance":
			f, err := meta.ParseImportance(val)
			if err != nil {
				return q, fmt.Errorf("%w: %q: want a number from 0.0 to 1.0", ErrQuery, w)
			}
			q.ImportanceMin, q.HasImportanceMin = f, true
		case "since", "until":
			t, err := parseWhen(val, now)
			if err != nil {
				return q, fmt.Errorf("%w: %q: %v", ErrQuery, w, err)
			}
			if key == "since" {
				q.Since = t
			} else {
				q.Until = t
			}
		case "top":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return q, fmt.Errorf("%w: %q: want a positive number", ErrQuery, w)
			}
			q.TopK = n
		case "mode":
			m, ok := parseMode(val)
			if !ok {
				return q, fmt.Errorf("%w: %q: want keyword, semantic or hybrid", ErrQuery, w)
			}
			q.Mode = m
		case "min":
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return q, fmt.Errorf("%w: %q: want a number", ErrQuery, w)
			}
			q.MinScore = f
		}
	}
	q.Text = strings.Join(text, " ")
	return q, nil
}

// filterWord splits a filter word into its key and value; ok is false for
// a word of text.
func filterWord(w string) (key, val string, ok bool) {
	if v, ok := strings.CutPrefix(w, "importance>="); ok {
		return "importance", unquote(v), true
	}
	k, v, ok := strings.Cut(w, ":")
	if !ok {
		return "", "", false
	}
	switch k {
	case "prefix", "tag", "source", "agent", "importance", "since", "until", "top", "min", "mode":
		return k, unquote(v), true
	}
	return "", "", false
}

// splitWords splits s at white space outside double quotes; the quotes
// stay in the words.
func splitWords(s string) []string {
	var words []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			inWord = true
			cur.WriteRune(r)
		case unicode.IsSpace(r) && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			inWord = true
			cur.WriteRune(r)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func unquote(s string) string { return strings.ReplaceAll(s, `"`, "") }

// parseWhen reads a time: RFC 3339, a date (UTC midnight), or a duration
// before now ("24h", or days: "7d").
func parseWhen(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 && n <= 1<<16 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, errors.New("want RFC 3339 (2026-11-23T10:00:00Z), a date (2026-11-23) or a duration ago (24h, 7d)")
}
