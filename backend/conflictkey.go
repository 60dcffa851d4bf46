package backend

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// conflictTime is the layout of a conflict copy's time.
const conflictTime = "20060102T150405.000000000Z"

// maxShortExt is the longest extension a shortened conflict copy keeps:
// a longer one is cut with the rest of the name.
const maxShortExt = 32

// ConflictKey is the name under which another writer's version of key is
// kept when it conflicts with memfs's: the name with ".conflict-<UTC time>"
// before its extension, in the same directory
// ("notes.md" -> "notes.conflict-20261122T232400.000000000Z.md"). The
// name is always a valid segment: see ConflictKeyWithin for a long one.
func ConflictKey(key string, t time.Time) string {
	return ConflictKeyWithin(key, "", t, 0)
}

// ConflictKeyBy is the name under which a mount keeps its own version of
// key when another writer's version keeps the name (the keep-both
// policy): "NAME.conflict-AGENT-UTC.EXT" in the same directory
// ("notes.md" by agent "planner" ->
// "notes.conflict-planner-20261122T232400.000000000Z.md"). The agent name
// is reduced to letters, digits, '-' and '_' (at most 32 of them); an empty
// one gives ConflictKey's name.
func ConflictKeyBy(key, agent string, t time.Time) string {
	return ConflictKeyWithin(key, agent, t, 0)
}

// ConflictKeyWithin is ConflictKeyBy for a store whose keys are at most
// max bytes (KeyLimit.Max; 0: no limit). When the name ConflictKeyBy
// would make is longer than a segment may be (MaxSegmentLen) or makes the
// key longer than max, the part of the name before its extension is cut
// (on a rune boundary) and the mark says so with a hash of the whole name:
// "PREFIX.conflict~HASH-AGENT-UTC.EXT", HASH the first 16 hex digits of
// the SHA-256 of the name (an older memfs wrote 8: read too), so that two
// long names that share their first bytes get different copies. An extension longer than 32 bytes is cut
// with the rest. ParseConflictKey cannot read such a copy's original back
// from the name alone; ConflictOrigin finds it among the keys.
func ConflictKeyWithin(key, agent string, t time.Time, max int) string {
	dir, name := Split(key)
	ext := path.Ext(name)
	if ext == name { // ".bashrc"-like names have no extension
		ext = ""
	}
	base := strings.TrimSuffix(name, ext)
	rest := t.UTC().Format(conflictTime)
	if a := conflictAgent(agent); a != "" {
		rest = a + "-" + rest
	}
	room := MaxSegmentLen
	if max > 0 {
		r := max - len(dir)
		if dir != "" {
			r-- // the slash
		}
		room = min(room, r)
	}
	if len(base)+len(".conflict-")+len(rest)+len(ext) <= room {
		return Join(dir, base+".conflict-"+rest+ext)
	}
	mark := ".conflict~" + conflictHash(name) + "-"
	if len(ext) > maxShortExt || len(mark)+len(rest)+len(ext) > room {
		base, ext = name, ""
	}
	return Join(dir, cutRunes(base, room-len(mark)-len(rest)-len(ext))+mark+rest+ext)
}

// conflictAgent reduces an agent name to what a conflict copy's name
// holds: letters, digits, '-' and '_', at most 32 of them.
func conflictAgent(agent string) string {
	var b strings.Builder
	for _, r := range agent {
		if b.Len() >= 32 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// conflictHash is the hash a shortened conflict copy's name holds of the
// name it is a copy of.
func conflictHash(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:8])
}

// cutRunes returns the longest prefix of s of at most n bytes that does
// not cut a rune in two.
func cutRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// conflictName matches the name of a conflict copy (ConflictKeyWithin):
// the base (a shortened copy's: its first bytes, maybe none), the hash of
// a shortened copy's original name (16 hex digits, or an older memfs's 8), the agent (may be empty), the time,
// the extension.
var conflictName = regexp.MustCompile(`^(.*)\.conflict(?:~([0-9a-f]{16}|[0-9a-f]{8}))?-(?:([A-Za-z0-9_-]+)-)?([0-9]{8}T[0-9]{6}\.[0-9]{9}Z)(\.[^.]*)?$`)

// conflictParts is what a conflict copy's name says.
type conflictParts struct {
	dir, base, hash, agent, ext string
	t                           time.Time
}

func parseConflictName(key string) (conflictParts, bool) {
	dir, name := Split(key)
	m := conflictName.FindStringSubmatch(name)
	if m == nil || m[1] == "" && m[2] == "" {
		return conflictParts{}, false
	}
	t, err := time.Parse(conflictTime, m[4])
	if err != nil {
		return conflictParts{}, false
	}
	return conflictParts{dir: dir, base: m[1], hash: m[2], agent: m[3], ext: m[5], t: t}, true
}

// ParseConflictKey reads a key ConflictKey or ConflictKeyBy made: the key
// it is a copy of, the agent it names ("" for none) and its time; ok is
// false for a key that is no conflict copy. A copy of a copy's name (made
// when the first name was taken) is read back to the first key. The
// original of a shortened copy (ConflictKeyWithin) is not in its name:
// orig is "" (ConflictOrigin finds it).
func ParseConflictKey(key string) (orig, agent string, t time.Time, ok bool) {
	return ConflictOrigin(key, nil)
}

// maxConflictDepth bounds the copies of copies ConflictOrigin reads back
// to the first key: memfs makes a copy of a copy only when the first
// copy's name was taken, and a longer chain is made by hand (a thousand
// names, each naming the next by its hash, made Conflicts cubic).
const maxConflictDepth = 8

// ConflictOrigin is ParseConflictKey that finds a shortened copy's
// original among keys (any order): the key in the copy's directory,
// other than the copy, whose name starts with the copy's prefix, ends
// with its extension and has its hash. orig is "" when keys holds none,
// more than one (no original rather than a wrong one: conflicts resolve
// writes to it), or when the copies of copies are more than
// maxConflictDepth deep. To read many keys' origins among the same keys,
// use a ConflictIndex.
func ConflictOrigin(key string, keys []string) (orig, agent string, t time.Time, ok bool) {
	return NewConflictIndex(keys).Origin(key)
}

// ConflictIndex is ConflictOrigin among the same keys for many keys: it
// hashes each key's name once, when the first shortened copy needs it
// (so it is for one goroutine), and keeps keys: not to be changed meanwhile.
type ConflictIndex struct {
	keys []string
	hash func(string) string
	by   map[string][]hashedKey // dir + "/" + the hash's first 8 hex digits
}

type hashedKey struct{ key, hash string }

// NewConflictIndex returns the index of keys.
func NewConflictIndex(keys []string) *ConflictIndex {
	return newConflictIndex(keys, conflictHash)
}

func newConflictIndex(keys []string, hash func(string) string) *ConflictIndex {
	return &ConflictIndex{keys: keys, hash: hash}
}

// Origin is ConflictOrigin(key, the index's keys).
func (x *ConflictIndex) Origin(key string) (orig, agent string, t time.Time, ok bool) {
	p, ok := parseConflictName(key)
	if !ok {
		return "", "", time.Time{}, false
	}
	t, orig = p.t, key
	for range maxConflictDepth {
		if agent == "" {
			agent = p.agent
		}
		if p.hash == "" {
			orig = Join(p.dir, p.base+p.ext)
		} else if orig = x.find(p, orig); orig == "" {
			return "", agent, t, true
		}
		if p, ok = parseConflictName(orig); !ok {
			return orig, agent, t, true
		}
	}
	return "", agent, t, true
}

// find returns the one key other than self that a shortened copy named
// p is a copy of, or "".
func (x *ConflictIndex) find(p conflictParts, self string) string {
	if x.by == nil {
		x.by = make(map[string][]hashedKey, len(x.keys))
		for _, k := range x.keys {
			dir, name := Split(k)
			h := x.hash(name)
			x.by[dir+"/"+h[:8]] = append(x.by[dir+"/"+h[:8]], hashedKey{k, h})
		}
	}
	prefix := p.base
	if p.dir != "" {
		prefix = p.dir + "/" + p.base
	}
	found := ""
	for _, c := range x.by[p.dir+"/"+p.hash[:8]] {
		if c.key == self || c.key == found || !strings.HasPrefix(c.hash, p.hash) ||
			!strings.HasPrefix(c.key, prefix) || !strings.HasSuffix(c.key, p.ext) {
			continue
		}
		if found != "" {
			return "" // two originals: neither
		}
		found = c.key
	}
	return found
}
