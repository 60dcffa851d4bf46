package search

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/repo"
)

// ErrQuery is wrapped by ParseQuery's errors.
var ErrQuery = errors.New("invalid search query")

// ErrNoEmbedder is wrapped (with ErrQuery) by the error of a query that
// asks for mode:semantic or mode:hybrid where there is no embedder.
var ErrNoEmbedder = errors.New("there is no embedder: search is keyword-only")

// Request is what a name under .memfs/search/ asks for: a query, and how
// its results are written.
type Request struct {
	Query Query
	// JSON is the word format:json: one JSON object per result, not text
	// blocks.
	JSON bool
}

// Name writes words as a name ParseName reads (and .memfs/search/, or its
// query file, takes): joined with spaces, then percent-encoded.
func Name(words ...string) string { return url.PathEscape(strings.Join(words, " ")) }

// ParseName reads a name under .memfs/search/: a query written as a file
// name (see the package documentation), in which the word format:json
// asks for JSON lines, with durations counted back from now.
func ParseName(name string) (Request, error) { return ParseNameAt(name, time.Now()) }

// ParseNameAt is ParseName with durations ("since:24h") counted back from
// now.
func ParseNameAt(name string, now time.Time) (Request, error) {
	q, asJSON, err := parseRequest(name, now)
	if err != nil {
		return Request{}, err
	}
	return Request{Query: q, JSON: asJSON}, nil
}

func parseRequest(name string, now time.Time) (q Query, asJSON bool, err error) {
	u, err := url.PathUnescape(name)
	if err != nil {
		return q, false, fmt.Errorf("%w: %v", ErrQuery, err) // not name: a query may be a paragraph
	}
	var text []string
	seen := make(map[string]bool)
	for _, w := range splitWords(u) {
		if w == "format:json" {
			asJSON = true
			continue
		}
		key, val, ok := filterWord(w)
		if !ok {
			text = append(text, unquote(w))
			continue
		}
		if val == "" {
			return q, false, fmt.Errorf("%w: %q: no value", ErrQuery, w)
		}
		if key != "tag" {
			if seen[key] {
				return q, false, fmt.Errorf("%w: %s given twice", ErrQuery, key)
			}
			seen[key] = true
		}
		if err := q.set(key, val, w, now); err != nil {
			return q, false, err
		}
	}
	q.Text = strings.Join(text, " ")
	return q, asJSON, nil
}

// set applies the filter word w, key:val, to q.
func (q *Query) set(key, val, w string, now time.Time) error {
	switch key {
	case "prefix":
		q.Prefix = val
	case "tier":
		if val != TierWorking && val != TierPersistent && val != TierIndexed {
			return fmt.Errorf("%w: %q: want tier:working, tier:persistent or tier:indexed", ErrQuery, w)
		}
		q.Tier = val
	case "route":
		if q.Route = val; val != "default" && !strings.HasSuffix(val, "/") {
			q.Route += "/" // a route's prefix, as --route gives it, with or without its "/"
		}
	case "tag":
		q.Tags = append(q.Tags, val)
	case "source", "agent", "session", "type":
		*map[string]*string{"source": &q.Source, "agent": &q.Agent, "session": &q.Session, "type": &q.Type}[key] = val
	case "repo":
		ids := strings.Split(val, ",")
		if slices.ContainsFunc(ids, func(id string) bool { return repo.ValidateHash(id) != nil }) {
			return fmt.Errorf("%w: %q: want a repository id (16 hex digits, as memfs repo id prints it), or ID,PARENT,... (its parents)", ErrQuery, w)
		}
		q.Repo = ids[0]
		if len(ids) > 1 {
			q.RepoParents = ids[1:]
		}
	case "importance":
		f, err := meta.ParseImportance(val)
		if err != nil {
			return fmt.Errorf("%w: %q: want a number from 0.0 to 1.0", ErrQuery, w)
		}
		q.ImportanceMin, q.HasImportanceMin = f, true
	case "since", "until":
		t, err := parseWhen(val, now)
		if err != nil {
			return fmt.Errorf("%w: %q: %v", ErrQuery, w, err)
		}
		if key == "since" {
			q.Since = t
		} else {
			q.Until = t
		}
	case "top":
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 {
			return fmt.Errorf("%w: %q: want a positive number", ErrQuery, w)
		}
		q.TopK = n
	case "mode":
		m, ok := parseMode(val)
		if !ok {
			return fmt.Errorf("%w: %q: want keyword, semantic or hybrid", ErrQuery, w)
		}
		q.Mode = m
	case "min":
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w: %q: want a number", ErrQuery, w)
		}
		q.MinScore = f
	}
	return nil
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
	case "prefix", "tag", "source", "agent", "session", "type", "repo", "importance", "since", "until", "top", "min", "mode", "tier", "route":
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
