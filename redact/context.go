package redact

import (
	"bytes"
	"regexp"
)

// ContextStart returns where the redaction context of bytes appended at
// offset off of value begins: the start of the line that holds off (the
// whole line, however long), or, if that line is inside a private-key
// block, the start of the block's BEGIN line. A block runs from a
// "-----BEGIN ... PRIVATE KEY-----" line to the first whole END line
// after it; one with no END yet before the line is open, and the
// appended bytes may close it.
//
// Its contract: with s = ContextStart(v, off), Redact(v) equals
// Redact(v[:s]) followed by Redact(v[s:]). Every rule but the private-key
// blocks matches within one line, so a secret never spans s. The session
// relies on it to journal an append by itself.
func (r *Redactor) ContextStart(value []byte, off int) int {
	off = min(max(off, 0), len(value))
	s := bytes.LastIndexByte(value[:off], '\n') + 1
	// A block open before the line holding off spans it: off may be on
	// the block's END line (a line start there split the key in two).
	if b := openBlock(value[:s]); b >= 0 {
		s = b
	}
	return s
}

// maxBlock bounds how far back an open private-key block is looked for:
// the largest real key (RSA 16384 bits) is some 12 KiB of PEM, and an
// append to a long file must not scan all of it.
const maxBlock = 64 << 10

// The armour lines of the private-key rule (rules.go), as it matches
// them: a block runs from a BEGIN line to the first whole END line after.
var (
	pemBegin = regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----`)
	pemEnd   = regexp.MustCompile(`-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----`)
)

// openBlock returns the start of the line of the private-key BEGIN in v
// (within maxBlock of its end) whose block has no whole END line in v, or
// -1. An END line cut short by the end of v leaves its block open: the
// append may finish it.
func openBlock(v []byte) int {
	w0 := max(0, len(v)-maxBlock)
	w := v[w0:]
	if !bytes.Contains(w, []byte("-----BEGIN")) { // vectorised: the common case
		return -1
	}
	for pos := 0; ; {
		b := pemBegin.FindIndex(w[pos:])
		if b == nil {
			return -1
		}
		begin, body := pos+b[0], pos+b[1]+1 // the rule needs a byte between the lines
		if body > len(w) {
			return w0 + bytes.LastIndexByte(w[:begin], '\n') + 1
		}
		e := pemEnd.FindIndex(w[body:])
		if e == nil {
			return w0 + bytes.LastIndexByte(w[:begin], '\n') + 1
		}
		pos = body + e[1]
	}
}
