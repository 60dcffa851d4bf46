package backend

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxSegmentLen is the longest key segment, in bytes (Linux's NAME_MAX).
// A key as a whole has no limit of its own: a process makes paths of any
// depth (PATH_MAX bounds the path one syscall receives, and a working
// directory deep in the mount makes a relative path of 4,095 bytes a key
// longer still). A store that cannot hold every length says so
// (KeyLimiter).
const MaxSegmentLen = 255

// ValidateKey reports whether key is a valid key: relative, slash-separated,
// clean (no empty, "." or ".." segment, no leading or trailing slash), valid
// UTF-8 without a control character (see IsControl; NUL included), and each
// segment at most MaxSegmentLen bytes. The error wraps ErrInvalidKey (and
// ErrKeyTooLong for a segment's length) and quotes the key (a long one
// shortened, see QuoteKey).
func ValidateKey(key string) error {
	if key == "" {
		return invalid(key, "empty key", false)
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
		return fmt.Errorf("%w: %w: %s: %s", ErrInvalidKey, ErrKeyTooLong, QuoteKey(key), why)
	}
	return fmt.Errorf("%w: %s: %s", ErrInvalidKey, QuoteKey(key), why)
}

// quotedKeyMax is the longest key QuoteKey quotes whole.
const quotedKeyMax = 200

// QuoteKey quotes key for an error or a log line: whole up to 200 bytes,
// a longer one (a key may be tens of KiB) as its first and last 64 bytes
// and its length, so that one deep key does not flood a terminal.
func QuoteKey(key string) string {
	if len(key) <= quotedKeyMax {
		return fmt.Sprintf("%q", key)
	}
	head, tail := key[:64], key[len(key)-64:]
	for !utf8.ValidString(head) && len(head) > 0 { // never cut a rune in two
		head = head[:len(head)-1]
	}
	for !utf8.ValidString(tail) && len(tail) > 0 {
		tail = tail[1:]
	}
	return fmt.Sprintf("%q...%q (%d bytes)", head, tail, len(key))
}

// KeyLimiter is a Store that cannot hold a key of every length (badger: its
// key size limit; etcd: its request size). A store without it holds keys
// of any length. Callers use KeyLimitOf.
type KeyLimiter interface {
	KeyLimit() KeyLimit
}

// KeyLimit is the longest key a store holds. The zero value is no limit.
type KeyLimit struct {
	Max   int    // the longest key, in bytes; 0: no limit
	Store string // the store, for the error: "badger"
	Why   string // what sets the limit, for the error
}

// KeyLimitOf returns s's KeyLimit, the zero KeyLimit (no limit) for a
// store that is no KeyLimiter.
func KeyLimitOf(s Store) KeyLimit {
	if l, ok := s.(KeyLimiter); ok {
		return l.KeyLimit()
	}
	return KeyLimit{}
}

// Check refuses a key longer than the limit with an error that wraps
// ErrInvalidKey and ErrKeyTooLong (ENAMETOOLONG through a mount) and names
// the store's limit and its reason.
func (l KeyLimit) Check(key string) error {
	if l.Max <= 0 || len(key) <= l.Max {
		return nil
	}
	return invalid(key, fmt.Sprintf("%d bytes, over the %s store's limit of %d bytes for a key (%s)", len(key), l.Store, l.Max, l.Why), true)
}

// ValidateEntries is ValidateEntries (every entry valid) and Check of
// every entry's key: what a limited store's Save and SaveIf refuse.
func (l KeyLimit) ValidateEntries(entries []Entry) error {
	if err := ValidateEntries(entries); err != nil {
		return err
	}
	return l.checkKeys(entries)
}

// ValidateBatch is ValidateBatch and Check of every saved key: what a
// limited store's Apply refuses.
func (l KeyLimit) ValidateBatch(b Batch) error {
	if err := ValidateBatch(b); err != nil {
		return err
	}
	return l.checkKeys(b.Saves)
}

func (l KeyLimit) checkKeys(entries []Entry) error {
	for i := range entries {
		if err := l.Check(entries[i].Key); err != nil {
			return err
		}
	}
	return nil
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
