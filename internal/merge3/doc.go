// Package merge3 is the three-way merge of text that memfs uses when two
// mounts on one shared store write the same file concurrently: agents
// appending to one JSONL log, or editing different sections of one
// Markdown note. Merge takes the common base and the two new values,
// ours and theirs; MergeXAttrs and MergeMode merge the metadata the same
// way.
//
// # Rules
//
// Merge works on lines, each keeping its "\n"; a last line without one is
// a line. A change made on one side only is taken, and the same change on
// both sides is taken once. Changes separated by at least one unchanged
// base line merge cleanly; changes that overlap or touch (no unchanged
// line between them) conflict unless identical, as in diff3. The one
// exception is the main case of concurrent appends: when both sides only
// inserted lines at the same place (both appended to the end, or both
// created the file from an empty base), the merge holds theirs' lines,
// then ours'. If base's last line had no newline, a side that appended
// after it added one; the merge keeps the lines separate the same way.
//
// A line-based merge cannot know which copy of a repeated line a side
// deleted, nor where in a run of equal lines it inserted. Where that
// choice decides between a conflict and a clean merge (a paragraph added
// above a heading the other side edited: its blank line can go first or
// last), an insertion or deletion is moved to an equivalent place that
// merges. Two deletions from one run of equal lines, one on each side,
// may merge as one, as in diff3.
//
// Text that is not text (a NUL byte in the first 8000 bytes, or invalid
// UTF-8) is never merged: Merge reports ok=false and the caller keeps
// both values, as it does for a conflict.
//
// # Cost
//
// The diff is Myers' O(ND) algorithm in linear space, after the common
// prefix and suffix are trimmed, so a 1 MiB file with a few edits merges
// in a few milliseconds. A diff that needs more than 10,000 inserted plus
// deleted lines outside a pure insertion or deletion (or too much work on
// repetitive input) is given up, and Merge reports a conflict rather than
// spend more than about half a second.
//
// # Concurrency
//
// The functions are stateless and safe for concurrent use. They never
// retain or modify their arguments.
//
// # Example
//
//	merged, ok := merge3.Merge(base, ours, theirs)
//	if !ok {
//		// keep both: a conflict, or binary data
//	}
package merge3
