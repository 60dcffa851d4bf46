package redact

import "bytes"

// binarySniff is how much of a value IsBinary looks at.
const binarySniff = 8 << 10

// IsBinary reports whether memfs treats value as binary: a NUL byte in its
// first 8 KiB (as git and grep decide). Callers mask binary values (Mask)
// and redact text (Redact).
func IsBinary(value []byte) bool {
	return bytes.IndexByte(value[:min(len(value), binarySniff)], 0) >= 0
}

// MaskByte is what Mask writes over each byte of a secret.
const MaskByte = '*'

// Mask is Redact for binary values: each secret is overwritten in place,
// byte for byte, with MaskByte, so that the value keeps its size and every
// offset in it (a database page, an archive, an image's metadata). It
// finds what Redact finds, with the same findings. Text in UTF-16 or
// UTF-32 (a byte-order mark, or the NUL pattern of ASCII text) is also
// scanned as text, and its secrets are masked code unit by code unit, in
// its own encoding (see wide.go). It returns a copy and never changes
// value; a value without secrets is returned as is.
//
// A masked value is masked again as it is: a run of one byte is no
// secret to the built-in rules (gitleaks' global allowlist).
func (r *Redactor) Mask(key string, value []byte) ([]byte, []Finding) {
	findings, apply := r.findMasks(key, value)
	if len(findings) == 0 {
		return value, nil
	}
	out := bytes.Clone(value)
	apply(out)
	return out, findings
}
