package search

import (
	"log/slog"
	"slices"
)

// Options configures an Index. The zero value indexes values as they are
// given and logs nothing.
type Options struct {
	// Redact, when set, is applied to everything the index takes in before
	// it keeps, persists or shows any of it: every value before it is
	// tokenized (Put: the live updates, and the repair and rebuild the
	// caller makes by Putting what the store holds), every value a snippet
	// is cut from (Index.Snippet), and the metadata strings it keeps (tags,
	// source, agent, session, type). It returns the value as the index may hold it and
	// the ids of the rules that changed it (none: the value unchanged). A
	// key whose name it changes (Redact(key, []byte(key)) reports a rule)
	// is not indexed at all, and Load drops such a document.
	//
	// The index is persisted in the store's system records, so a value
	// that reaches it raw reaches the disk: the index, not each of its
	// callers, applies Redact, on every path.
	Redact func(key string, value []byte) (redacted []byte, rules []string)
	// Logger receives one line per key not indexed for a secret in its
	// name, with the rule's id (never the name); nil discards.
	Logger *slog.Logger
}

// redactMargin is how far past MaxIndexBytes a value is redacted, so that
// a secret that straddles the cut is recognised whole (the longest ones,
// private key blocks, are a few KiB) and its start is not indexed as a
// harmless-looking fragment.
const redactMargin = 64 << 10

// secretName reports whether key's name holds a secret; it logs the rule.
func (ix *Index) secretName(key string) bool {
	if ix.opts.Redact == nil {
		return false
	}
	_, rules := ix.opts.Redact(key, []byte(key))
	if len(rules) == 0 {
		return false
	}
	ix.log.Warn("search index: a key is not indexed: its name contains a secret", "rule", rules[0])
	return true
}

// redactValue returns what the index may tokenize of value: the value
// redacted, up to MaxIndexBytes and a margin. A binary value gets no terms
// (analyze), so it is returned as is, without the redactor's cost.
func (ix *Index) RedactValue(key string, value []byte) []byte {
	if ix.opts.Redact == nil || IsBinary(value) {
		return value
	}
	v, _ := ix.opts.Redact(key, value[:min(len(value), MaxIndexBytes+redactMargin)])
	return v
}

// redactMeta returns m with its strings redacted and its tags cloned: they
// are persisted in the shard records.
func (ix *Index) redactMeta(key string, m DocMeta) DocMeta {
	m.Tags = slices.Clone(m.Tags)
	if ix.opts.Redact == nil {
		return m
	}
	s := func(v string) string {
		if v == "" {
			return v
		}
		r, _ := ix.opts.Redact(key, []byte(v))
		return string(r)
	}
	for i, t := range m.Tags {
		m.Tags[i] = s(t)
	}
	m.Source, m.Agent = s(m.Source), s(m.Agent)
	m.Session, m.Type = s(m.Session), s(m.Type)
	return m
}

// Snippet returns a one-line excerpt of value, the value of the document
// key, around q's words (see the package function snippet for its form).
// With Options.Redact the value is redacted first, so a snippet never shows
// a secret, and a key whose name holds one gets none.
func (ix *Index) Snippet(key string, value []byte, q Query, width int) string {
	if IsBinary(value) {
		return "" // bytes, not words: nothing a reader could use
	}
	if ix.opts.Redact != nil {
		if _, rules := ix.opts.Redact(key, []byte(key)); len(rules) > 0 {
			return ""
		}
		value, _ = ix.opts.Redact(key, value)
	}
	return snippet(value, q, width)
}
