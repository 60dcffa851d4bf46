package redact

import "bytes"

// ContextStart returns where the redaction context of bytes appended at
// offset off of value begins: the start of the line that holds off (the
// whole line, however long), or the start of a private-key block that is
// open at off (a "-----BEGIN ... PRIVATE KEY" line with no END line
// between it and off), whichever is earlier.
//
// Its contract: with s = ContextStart(v, off), Redact(v) equals
// Redact(v[:s]) followed by Redact(v[s:]). Every rule but the private-key
// blocks matches within one line, so a secret never spans s. The session
// relies on it to journal an append by itself.
func (r *Redactor) ContextStart(value []byte, off int) int {
	off = min(max(off, 0), len(value))
	s := bytes.LastIndexByte(value[:off], '\n') + 1
	if b := openBlock(value[:off]); b >= 0 && b < s {
		s = b
	}
	return s
}

// maxBlock bounds how far back an open private-key block is looked for:
// the largest real key (RSA 16384 bits) is some 12 KiB of PEM, and an
// append to a long file must not scan all of it.
const maxBlock = 64 << 10

// openBlock returns the start of the line of the last private-key BEGIN
// in v (within maxBlock of its end) that has no END after it, or -1.
func openBlock(v []byte) int {
	// The last BEGIN, found with forward searches: bytes.Index is
	// vectorised, bytes.LastIndex is not (it cost 90 µs per append of a
	// long file).
	b := -1
	for from := max(0, len(v)-maxBlock); ; {
		i := bytes.Index(v[from:], []byte("-----BEGIN"))
		if i < 0 {
			break
		}
		b = from + i
		from = b + 1
	}
	if b < 0 {
		return -1
	}
	rest := v[b:]
	if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
		if !bytes.Contains(rest[:nl], []byte("PRIVATE KEY")) {
			return -1
		}
	}
	if bytes.Contains(rest, []byte("-----END")) {
		return -1
	}
	return bytes.LastIndexByte(v[:b], '\n') + 1
}
