package repo

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Dir is the directory of the store that holds every repository's memory,
// one directory per repository: Dir + Identity.Hash + "/".
const Dir = "repos/"

// Prefix is the directory of the repository hash's memory, "repos/HASH/".
func Prefix(hash string) string { return Dir + hash + "/" }

// ValidateHash checks a repository's id as Identify makes it: exactly 16
// lowercase hexadecimal digits.
func ValidateHash(s string) error {
	if len(s) != 16 || strings.IndexFunc(s, func(r rune) bool { return !isHex(r) }) >= 0 {
		return fmt.Errorf("repo: %s is not a repository id: want 16 lowercase hex digits, as memfs repo id prints", quote(s))
	}
	return nil
}

func isHex(r rune) bool { return '0' <= r && r <= '9' || 'a' <= r && r <= 'f' }

// Kind is the kind of a record: what a repository's memory holds.
type Kind string

// The kinds of record.
const (
	// Convention is a rule of the repository that an agent follows
	// (errors are wrapped with %w; tests are table-driven).
	Convention Kind = "convention"
	// Decision is a choice made and why, with the paths it bears on.
	Decision Kind = "decision"
	// Note is anything else worth remembering about the repository.
	Note Kind = "note"
)

// Kinds is every kind, in the order records are listed.
var Kinds = []Kind{Convention, Decision, Note}

// Dir is the directory of the kind's records in a repository's memory:
// conventions, decisions or notes; "" for no kind.
func (k Kind) Dir() string {
	switch k {
	case Convention:
		return "conventions"
	case Decision:
		return "decisions"
	case Note:
		return "notes"
	}
	return ""
}

// ParseKind is the kind named s: convention, decision or note.
func ParseKind(s string) (Kind, error) {
	if k := Kind(s); k.Dir() != "" {
		return k, nil
	}
	return "", fmt.Errorf("repo: %s is not a kind of record: want convention, decision or note", quote(s))
}

// kindOfDir is the kind whose records dir holds; "" for none.
func kindOfDir(dir string) Kind {
	for _, k := range Kinds {
		if k.Dir() == dir {
			return k
		}
	}
	return ""
}

// RecordKey is the key of the record id of kind k in repository hash's
// memory: "repos/HASH/conventions/ID.md".
func RecordKey(hash string, k Kind, id string) string {
	return Prefix(hash) + k.Dir() + "/" + id + ".md"
}

// ParseKey splits a record's key into its parts. It is ok only for
// exactly repos/HASH/{conventions,decisions,notes}/ID.md with a valid
// hash and id: no deeper path, and no name that starts with '.' or does
// not end in .md, so that an editor's temporary files are not records.
func ParseKey(key string) (hash string, k Kind, id string, ok bool) {
	hash, dir, name, ok := splitKey(key)
	if !ok {
		return "", "", "", false
	}
	id, isMD := strings.CutSuffix(name, ".md")
	if !isMD || ValidateID(id) != nil {
		return "", "", "", false
	}
	return hash, kindOfDir(dir), id, true
}

// splitKey splits key of the form repos/HASH/KINDDIR/NAME, with a valid
// hash and a kind's directory.
func splitKey(key string) (hash, dir, name string, ok bool) {
	rest, ok := strings.CutPrefix(key, Dir)
	if !ok {
		return "", "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || ValidateHash(parts[0]) != nil || kindOfDir(parts[1]) == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// RulePrefixes are the directories of the repository's rules, which a
// context pack always includes: its conventions and its decisions.
func RulePrefixes(hash string) []string {
	return []string{Prefix(hash) + Convention.Dir() + "/", Prefix(hash) + Decision.Dir() + "/"}
}

// NotesPrefix is the directory of the repository's notes.
func NotesPrefix(hash string) string { return Prefix(hash) + Note.Dir() + "/" }

// SummariesKey is the repository's step summaries, one JSON object a line.
func SummariesKey(hash string) string { return Prefix(hash) + "summaries.jsonl" }

// InfoKey is the repository's Info, as JSON.
func InfoKey(hash string) string { return Prefix(hash) + infoFile }

// infoFile is the name of a repository's repo.json.
const infoFile = "repo.json"

// indexesDir is the directory of the repository's derived artifacts.
const indexesDir = "indexes"

// IndexKey is the key of the derived artifact name of the repository (its
// map, its symbols): "repos/HASH/indexes/NAME". It fails for an invalid
// hash or name (ValidateIndexName).
func IndexKey(hash, name string) (string, error) {
	if err := ValidateHash(hash); err != nil {
		return "", err
	}
	if err := ValidateIndexName(name); err != nil {
		return "", err
	}
	return Prefix(hash) + indexesDir + "/" + name, nil
}

// MaxIndexName is the longest name of a derived artifact.
const MaxIndexName = 128

// ValidateIndexName checks the name of a derived artifact: one path
// segment of 1 to MaxIndexName ASCII letters, digits, '.', '_' and '-',
// not starting with '.'.
func ValidateIndexName(name string) error {
	if name == "" || len(name) > MaxIndexName || name[0] == '.' || !allOf(name, func(c byte) bool { return isAlnum(c) || c >= 'A' && c <= 'Z' || c == '.' || c == '_' || c == '-' }) {
		return fmt.Errorf("repo: %s is not an index name: want 1 to %d letters, digits, '.', '_' or '-', not starting with '.', such as map.md", quote(name), MaxIndexName)
	}
	return nil
}

// MaxID is the longest record id.
const MaxID = 64

// errID is ValidateID's error.
var errID = errors.New("not an id")

// idWant says what an id is.
const idWant = "want 1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit, such as wrap-errors"

// ValidateID checks a record's id, the name of its file without .md: 1 to
// MaxID bytes of lowercase ASCII letters, digits, '.', '_' and '-',
// starting with a letter or digit.
func ValidateID(id string) error {
	if id == "" || len(id) > MaxID || !isAlnum(id[0]) || !allOf(id, func(c byte) bool { return isAlnum(c) || c == '.' || c == '_' || c == '-' }) {
		return fmt.Errorf("repo: %s is %w: %s", quote(id), errID, idWant)
	}
	return nil
}

// isAlnum reports whether c is a lowercase ASCII letter or a digit.
func isAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func allOf(s string, ok func(byte) bool) bool {
	for i := range len(s) {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// maxSlug is the longest text part of an id NewID makes.
const maxSlug = 40

// NewID makes an id for a new record from its text and time: a slug of
// the text's first words (lowercase, each run of other characters than
// ASCII letters and digits a '-', at most 40 bytes), '-' and t in UTC as
// 20060102-150405. A text with no ASCII letter or digit gives "note-" and
// the time. The same text and time give the same id.
func NewID(text string, t time.Time) string {
	var b strings.Builder
	dash := false
	for i := 0; i < len(text) && b.Len() < maxSlug+1; i++ {
		c := text[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if !isAlnum(c) {
			dash = b.Len() > 0
			continue
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteByte(c)
	}
	slug := b.String()
	if len(slug) > maxSlug {
		// Cut at the last word boundary that fits; a first word longer
		// than the limit is cut inside.
		cut := slug[:maxSlug+1]
		if i := strings.LastIndexByte(cut, '-'); i > 0 {
			slug = cut[:i]
		} else {
			slug = slug[:maxSlug]
		}
	}
	if slug == "" {
		slug = "note"
	}
	return slug + "-" + t.UTC().Format("20060102-150405")
}

// maxQuoted is the most of a value an error quotes: a value may hold
// anything, a secret included.
const maxQuoted = 80

// quote is s quoted for an error, at most maxQuoted bytes of it.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return fmt.Sprintf("%q", s)
	}
	cut := maxQuoted
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Path is where the memory of the repository hash is, or a file of it
// (parts, joined by '/'): in the mount at mnt, else ("" mnt) its key.
func Path(mnt, hash string, parts ...string) string {
	p := strings.Join(append([]string{strings.TrimSuffix(Prefix(hash), "/")}, parts...), "/")
	if mnt != "" {
		p = mnt + "/" + p
	}
	return p
}

// CheckPackFile is the check a pack asks of each of its rules and notes
// (contextpack.Options.Check): CheckKey, and a file of a repository's
// conventions/, decisions/ or notes/ that is no record (another name, an
// editor's backup, a file of a subdirectory) fails: it is no rule.
func CheckPackFile(key string, v []byte) error {
	rest, ok := strings.CutPrefix(key, Dir)
	hash, rest, ok2 := strings.Cut(rest, "/")
	dir, _, ok3 := strings.Cut(rest, "/")
	if ok && ok2 && ok3 && ValidateHash(hash) == nil && kindOfDir(dir) != "" {
		if _, _, _, ok := ParseKey(key); !ok {
			return &RecordError{Key: key, Problem: "not a record: a record is KIND/ID.md, its ID " + idWant}
		}
	}
	return CheckKey(key, v)
}

// ParseInfoKey reports whether key is a repository's repo.json, and whose.
func ParseInfoKey(key string) (hash string, ok bool) {
	hash, rest, ok := cutHash(key)
	return hash, ok && rest == infoFile
}

// ParseIndexKey reports whether key is a repository's derived artifact,
// repos/HASH/indexes/NAME, and whose and which.
func ParseIndexKey(key string) (hash, name string, ok bool) {
	hash, rest, ok := cutHash(key)
	name, isIndex := strings.CutPrefix(rest, indexesDir+"/")
	return hash, name, ok && isIndex && ValidateIndexName(name) == nil
}

// cutHash splits repos/HASH/REST.
func cutHash(key string) (hash, rest string, ok bool) {
	in, ok := strings.CutPrefix(key, Dir)
	hash, rest, ok2 := strings.Cut(in, "/")
	return hash, rest, ok && ok2 && ValidateHash(hash) == nil
}

// Choose is the repository whose memory stands for id's: id's own when
// has says it has memory, else the first of parents that has (a new
// branch reads its parent's memory until its first write starts its
// own), else id. has may answer for a caller: a memory it may not read is
// none, so that which one is read says nothing of what it may not see.
func Choose(id string, parents []string, has func(hash string) bool) string {
	if len(parents) == 0 || has(id) {
		return id
	}
	if i := slices.IndexFunc(parents, has); i >= 0 {
		return parents[i]
	}
	return id
}
