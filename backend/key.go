package backend

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

const (
	// MaxKeyLen is the longest key, in bytes (Linux's PATH_MAX).
	MaxKeyLen = 4096
	// MaxSegmentLen is the longest key segment, in bytes (Linux's NAME_MAX).
	MaxSegmentLen = 255
)

// ValidateKey reports whether key is a valid key: relative, slash-separated,
// clean (no empty, "." or ".." segment, no leading or trailing slash), valid
// UTF-8 without a control character (see IsControl; NUL included), each
// segment at most MaxSegmentLen bytes and the whole at most MaxKeyLen bytes.
// The error wraps ErrInvalidKey (and ErrKeyTooLong for length) and quotes
// the key.
func ValidateKey(key string) error {
	if key == "" {
		return invalid(key, "empty key", false)
	}
	if len(key) > MaxKeyLen {
		return invalid(key[:64]+"...", fmt.Sprintf("longer than %d bytes", MaxKeyLen), true)
	}
	if !utf8.ValidString(key) {
		return invalid(key, "not valid UTF-8", false)
	}
	if i := strings.IndexFunc(key, IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(key[i:])
		return invalid(key, fmt.Sprintf("contains the control character %U", r), false)
	}
	if key[0] == '/' {
		return invalid(key, "absolute path", false)
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch {
		case seg == "":
			return invalid(key, "empty segment", false)
		case seg == "." || seg == "..":
			return invalid(key, "segment "+seg, false)
		case len(seg) > MaxSegmentLen:
			return invalid(key, fmt.Sprintf("segment longer than %d bytes", MaxSegmentLen), true)
		}
	}
	return nil
}

// IsControl reports whether r is a control character no key may hold: C0
// (U+0000 to U+001F: NUL, newline, tab, ESC, BEL ...), DEL (U+007F) and C1
// (U+0080 to U+009F, which some terminals take as ESC sequences: U+009B is
// CSI). A name that holds one would make a line that memfs or ls prints
// ambiguous (a newline starts a fake entry) or drive the terminal that shows
// it (an escape sequence); no real notes or skills need one.
func IsControl(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f
}

// ValidateName checks one path segment (a file name in a directory) by the
// same rules as a key segment.
func ValidateName(name string) error {
	if strings.IndexByte(name, '/') >= 0 {
		return invalid(name, "contains /", false)
	}
	return ValidateKey(name)
}

func invalid(key, why string, tooLong bool) error {
	if tooLong {
		return fmt.Errorf("%w: %w: %q: %s", ErrInvalidKey, ErrKeyTooLong, key, why)
	}
	return fmt.Errorf("%w: %q: %s", ErrInvalidKey, key, why)
}

// Join joins a directory key and a name; dir "" is the root.
func Join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// Split splits key into its directory ("" at the root) and its last segment.
func Split(key string) (dir, name string) {
	i := strings.LastIndexByte(key, '/')
	if i < 0 {
		return "", key
	}
	return key[:i], key[i+1:]
}

// Limits on extended attributes, the same in every store (the directory
// store keeps them as real xattrs, and ext4 keeps all of a file's attributes
// in one 4 KiB block).
const (
	// MaxXAttrNameLen is the longest attribute name, "user." included
	// (Linux's XATTR_NAME_MAX).
	MaxXAttrNameLen = 255
	// MaxXAttrSize bounds the names and values of one entry's attributes
	// together.
	MaxXAttrSize = 3072
)

// XAttrPrefix is the only namespace a store persists.
const XAttrPrefix = "user."

// ValidateXAttrs reports whether attrs may be persisted: every name in the
// "user." namespace, non-empty after it, valid UTF-8 without NUL, at most
// MaxXAttrNameLen bytes, and all names and values together at most
// MaxXAttrSize bytes. The error wraps ErrInvalidXAttr.
func ValidateXAttrs(attrs map[string][]byte) error {
	total := 0
	for name, v := range attrs {
		if err := ValidateXAttrName(name); err != nil {
			return err
		}
		total += len(name) + len(v)
	}
	if total > MaxXAttrSize {
		return fmt.Errorf("%w: %d bytes of names and values, over the limit of %d", ErrInvalidXAttr, total, MaxXAttrSize)
	}
	return nil
}

// ValidateXAttrName checks one attribute name as ValidateXAttrs does.
func ValidateXAttrName(name string) error {
	switch {
	case !strings.HasPrefix(name, XAttrPrefix) || len(name) == len(XAttrPrefix):
		return fmt.Errorf("%w: %q: not a user.* name", ErrInvalidXAttr, name)
	case len(name) > MaxXAttrNameLen:
		return fmt.Errorf("%w: name longer than %d bytes", ErrInvalidXAttr, MaxXAttrNameLen)
	case !utf8.ValidString(name) || strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("%w: %q: not valid UTF-8 or contains NUL", ErrInvalidXAttr, name)
	}
	return nil
}

// CloneXAttrs returns a deep copy of attrs (nil for none).
func CloneXAttrs(attrs map[string][]byte) map[string][]byte {
	if len(attrs) == 0 {
		return nil
	}
	out := make(map[string][]byte, len(attrs))
	for k, v := range attrs {
		out[k] = append([]byte(nil), v...)
	}
	return out
}
