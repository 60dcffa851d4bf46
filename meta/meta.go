// Package meta defines memfs's own metadata on a memory entry: the
// extended attributes under "user.memfs." that memfs validates (tags,
// importance, source, agent, run, session, type) or maintains (created,
// writer), and the Writer that says who changed an entry. The session, the
// mount, the event log and the command line all read them through this
// package.
//
// user.memfs.type takes one of a set of memory types: DefaultTypes, plus
// those a mount or command adds (--types, MEMFS_TYPES), held in a [Types]
// value that ValidateWith takes; Validate checks against the defaults.
//
// # Concurrency
//
// The package keeps no state (its variables are the two sentinel errors
// and the table of default types, never written), so every function may
// be called from any number of goroutines at once.
// Parse only reads the map it is given, which must not be written
// meanwhile; no result aliases a byte slice or map it was given.
package meta

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The attributes memfs gives a meaning to.
const (
	Prefix     = "user.memfs."
	Tags       = Prefix + "tags"       // comma-separated tags
	Importance = Prefix + "importance" // a number from 0.0 to 1.0
	Source     = Prefix + "source"     // agent, user or system
	Agent      = Prefix + "agent"      // an agent id
	// Run is the run (an id of ValidateRun's form) a write belongs to:
	// set on a file, it names the run of the events of its next writes
	// (WriterInfo.Run), unless the writer named one.
	Run = Prefix + "run"
	// Session is the agent session an entry belongs to: an id of
	// ValidateSession's form.
	Session = Prefix + "session"
	// Type is the kind of memory an entry holds: one of a Types set
	// (DefaultTypes unless a mount or command adds some).
	Type = Prefix + "type"
	// Derived is what a derived artifact (a repository's map, symbol
	// summaries: repos/HASH/indexes/) was computed from: a state of the
	// working tree (repo.State) or a key its caller gave, 1 to MaxDerivedLen
	// printable bytes. The artifact is fresh while that still holds.
	Derived = Prefix + "derived"
	// TTL is a file's time to live, a positive duration ("90s", "24h"):
	// it is removed that long after its last change (package expire).
	TTL = Prefix + "ttl"
	// Expires is when a file is removed, an RFC 3339 time (package
	// expire); it wins over TTL.
	Expires = Prefix + "expires"
	Created = Prefix + "created" // read-only: RFC 3339 time the key was created
	Writer  = Prefix + "writer"  // read-only: JSON of the Writer who last wrote the value
	// Skill is read-only, on skills/NAME/SKILL.md: the JSON {"name",
	// "description"} of its front matter, kept at each flush so that an
	// index of skills needs no skill's value.
	Skill = Prefix + "skill"
	// Rev is read-only and never stored: the decimal store revision of a
	// clean file's content on a store that numbers its writes
	// (backend.Info.Rev); absent while the file has unflushed changes.
	Rev = Prefix + "rev"
)

// MaxAgentLen is the longest agent id (in user.memfs.agent and --agent).
const MaxAgentLen = 128

// ErrInvalid is wrapped by every validation error of this package.
var ErrInvalid = errors.New("invalid memfs attribute")

// ErrReadOnly is returned for a write to an attribute memfs maintains.
var ErrReadOnly = errors.New("attribute is maintained by memfs")

// ReadOnly reports whether name is an attribute only memfs may write.
func ReadOnly(name string) bool {
	return name == Created || name == Writer || name == Skill || name == Rev
}

// Validate checks a value written to name by a user, with the default
// memory types: ValidateWith(Types{}, name, value).
func Validate(name string, value []byte) error { return ValidateWith(Types{}, name, value) }

// ValidateWith checks a value written to name by a user, user.memfs.type
// against types. Names outside user.memfs. are not memfs's business and
// always pass; unknown names under user.memfs. are refused, so that a typo
// ("user.memfs.tag") is caught.
func ValidateWith(types Types, name string, value []byte) error {
	if !strings.HasPrefix(name, Prefix) {
		return nil
	}
	v := string(value)
	switch name {
	case Created, Writer, Skill, Rev:
		return fmt.Errorf("%w: %s", ErrReadOnly, name)
	case Tags:
		_, err := ParseTags(v)
		return err
	case Importance:
		_, err := ParseImportance(v)
		return err
	case Source:
		switch v {
		case "agent", "user", "system":
			return nil
		}
		return fmt.Errorf("%w: %s: %q: want agent, user or system", ErrInvalid, name, v)
	case Agent:
		return ValidateAgent(v)
	case Run:
		return ValidateRun(v)
	case Session:
		return ValidateSession(v)
	case Type:
		return types.Check(v)
	case Derived:
		return ValidateDerived(v)
	case TTL:
		_, err := ParseTTL(v)
		return err
	case Expires:
		_, err := ParseExpires(v)
		return err
	}
	return fmt.Errorf("%w: unknown attribute %s (known: tags, importance, source, agent, run, session, type, derived, ttl, expires; created, writer, skill and rev are read-only)", ErrInvalid, name)
}

// ParseTTL reads a time to live (TTL): a positive duration ("90s",
// "1h30m", "24h").
func ParseTTL(v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: %s: %q: want a positive duration (90s, 1h30m, 24h)", ErrInvalid, TTL, v)
	}
	return d, nil
}

// ParseExpires reads a time of removal (Expires): RFC 3339.
func ParseExpires(v string) (time.Time, error) {
	at, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s: %q: want an RFC 3339 time (2026-12-31T23:00:00Z)", ErrInvalid, Expires, v)
	}
	return at, nil
}

// MaxDerivedLen is the longest user.memfs.derived value.
const MaxDerivedLen = 256

// ValidateDerived checks a user.memfs.derived value: 1 to MaxDerivedLen
// bytes of printable UTF-8.
func ValidateDerived(v string) error {
	if v == "" || len(v) > MaxDerivedLen || !printable(v) {
		return fmt.Errorf("%w: %s: want 1 to %d bytes of printable text", ErrInvalid, Derived, MaxDerivedLen)
	}
	return nil
}

// ParseTags splits a tags value: comma-separated, spaces around a tag
// trimmed, no empty tag, no control characters, each at most 64 bytes.
// The empty value is no tags.
func ParseTags(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var tags []string
	for t := range strings.SplitSeq(v, ",") {
		t = strings.TrimSpace(t)
		switch {
		case t == "":
			return nil, fmt.Errorf("%w: %s: empty tag in %q", ErrInvalid, Tags, v)
		case len(t) > 64:
			return nil, fmt.Errorf("%w: %s: tag longer than 64 bytes", ErrInvalid, Tags)
		case !printable(t):
			return nil, fmt.Errorf("%w: %s: tag %q has control characters or invalid UTF-8", ErrInvalid, Tags, t)
		}
		tags = append(tags, t)
	}
	return tags, nil
}

// ParseImportance parses an importance value: a decimal number from 0 to 1.
func ParseImportance(v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
		return 0, fmt.Errorf("%w: %s: %q: want a number from 0.0 to 1.0", ErrInvalid, Importance, v)
	}
	return f, nil
}

// ValidateAgent checks an agent id: 1 to MaxAgentLen bytes of letters,
// digits and . _ - : @ /.
func ValidateAgent(v string) error { return validateID(Agent, v, "._-:@/") }

// ValidateRun checks a run id (user.memfs.run, --run, MEMFS_RUN): 1 to
// MaxAgentLen bytes of ASCII letters, digits and . _ -, not starting
// with '.': it names a directory of .memfs/runs/ and the first part of a
// checkpoint's name (RUN/STEP), whose characters are those.
func ValidateRun(v string) error {
	if v == "" || len(v) > MaxAgentLen || v[0] == '.' {
		return fmt.Errorf("%w: %s: %q: want 1 to %d bytes, not starting with '.'", ErrInvalid, Run, v, MaxAgentLen)
	}
	for _, c := range []byte(v) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w: %s: %q: ASCII letters, digits and . _ - only (as a checkpoint's name)", ErrInvalid, Run, v)
		}
	}
	return nil
}

// ValidateSession checks a session id (user.memfs.session): 1 to
// MaxAgentLen bytes of letters, digits and . _ - : @, as a run id.
func ValidateSession(v string) error { return validateID(Session, v, "._-:@") }

// defaultTypes is DefaultTypes, in the order error messages list them.
var defaultTypes = [...]string{"fact", "decision", "convention", "preference", "profile",
	"procedure", "activity", "event", "conversation", "summary", "note"}

// DefaultTypes returns the memory types user.memfs.type takes everywhere:
// fact, decision, convention, preference, profile, procedure, activity,
// event, conversation, summary and note.
func DefaultTypes() []string { return slices.Clone(defaultTypes[:]) }

// Types is a set of memory types, the values user.memfs.type may be set
// to: DefaultTypes and the types added to them (ParseTypes). The zero
// value is the default set. A Types is never changed once made, so it may
// be shared.
type Types struct {
	added []string // distinct, none a default, in the order given
}

// ParseTypes returns the default set plus the types of v (--types,
// MEMFS_TYPES): comma-separated, spaces around a type trimmed, each of
// ValidateTypeName's form; "" adds none.
func ParseTypes(v string) (Types, error) {
	var t Types
	if strings.TrimSpace(v) == "" {
		return t, nil
	}
	for name := range strings.SplitSeq(v, ",") {
		name = strings.TrimSpace(name)
		if err := ValidateTypeName(name); err != nil {
			return Types{}, err
		}
		if !t.Has(name) {
			t.added = append(t.added, name)
		}
	}
	return t, nil
}

// ValidateTypeName checks the form of a memory type: 1 to MaxAgentLen
// bytes of letters, digits and _ -.
func ValidateTypeName(v string) error { return validateID(Type, v, "_-") }

// List returns the types of t: the defaults, then the added ones.
func (t Types) List() []string { return append(DefaultTypes(), t.added...) }

// Has reports whether v is one of t's types.
func (t Types) Has(v string) bool {
	return slices.Contains(defaultTypes[:], v) || slices.Contains(t.added, v)
}

// Check returns nil if v is one of t's types, else an error wrapping
// ErrInvalid that lists them.
func (t Types) Check(v string) error {
	if t.Has(v) {
		return nil
	}
	return fmt.Errorf("%w: %s: %q: want one of %s (--types adds others)", ErrInvalid, Type, v, strings.Join(t.List(), ", "))
}

// CheckFilter checks what a filter by session and type asks for (memfs
// ls --session --type): a session id, and one of t's types, so that a
// misspelt type is an error that lists them, not an empty answer. ""
// passes.
func (t Types) CheckFilter(session, typ string) error {
	if session != "" {
		if err := ValidateSession(session); err != nil {
			return err
		}
	}
	if typ != "" {
		return t.Check(typ)
	}
	return nil
}

// validateID checks an id for the attribute name: 1 to MaxAgentLen bytes
// of letters, digits and the runes of extra.
func validateID(name, v, extra string) error {
	if v == "" || len(v) > MaxAgentLen {
		return fmt.Errorf("%w: %s: %q: want 1 to %d bytes", ErrInvalid, name, v, MaxAgentLen)
	}
	for _, r := range v {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(extra, r) {
			return fmt.Errorf("%w: %s: %q: letters, digits and %s only", ErrInvalid, name, v, strings.Join(strings.Split(extra, ""), " "))
		}
	}
	return nil
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// WriterInfo says who made a change: the calling process as FUSE reports it
// (or the memfs process itself for its own commands), and the mount's
// --agent label.
type WriterInfo struct {
	UID   uint32 `json:"uid"`
	PID   uint32 `json:"pid"`
	Comm  string `json:"comm,omitempty"`  // process name, from /proc/PID/comm
	Agent string `json:"agent,omitempty"` // the mount's --agent label
	// Run is the run the change belongs to: the writer's MEMFS_RUN,
	// the mount's or command's --run, or the file's user.memfs.run.
	Run string `json:"run,omitempty"`
}

// Encode returns the JSON form stored in user.memfs.writer.
func (w WriterInfo) Encode() []byte {
	b, _ := json.Marshal(w) // cannot fail: plain fields
	return b
}

// DecodeWriter parses a user.memfs.writer value.
func DecodeWriter(b []byte) (WriterInfo, error) {
	var w WriterInfo
	if err := json.Unmarshal(b, &w); err != nil {
		return WriterInfo{}, fmt.Errorf("%w: %s: %v", ErrInvalid, Writer, err)
	}
	return w, nil
}

// FormatTime is the form of user.memfs.created and of event times.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Attrs is the parsed view of an entry's memfs attributes, for filters.
type Attrs struct {
	Tags       []string
	Importance float64 // 0 when unset
	HasImp     bool
	Source     string
	Agent      string
	Session    string // "" when unset
	Type       string // "" when unset; any of ValidateTypeName's form
}

// Parse reads the memfs attributes out of an attribute map; invalid values
// (written before validation, or by hand into a directory store) are
// ignored.
func Parse(x map[string][]byte) Attrs {
	var a Attrs
	if v, ok := x[Tags]; ok {
		a.Tags, _ = ParseTags(string(v))
	}
	if v, ok := x[Importance]; ok {
		if f, err := ParseImportance(string(v)); err == nil {
			a.Importance, a.HasImp = f, true
		}
	}
	a.Source = string(x[Source])
	a.Agent = string(x[Agent])
	// A type is read whatever set it was checked against: the mount that
	// set it may have added types this reader does not know.
	if v := string(x[Session]); ValidateSession(v) == nil {
		a.Session = v
	}
	if v := string(x[Type]); ValidateTypeName(v) == nil {
		a.Type = v
	}
	return a
}

// IsSkillFile reports whether key is a skill's SKILL.md: skills/NAME/SKILL.md.
func IsSkillFile(key string) bool {
	rest, ok := strings.CutPrefix(key, "skills/")
	name, file, ok2 := strings.Cut(rest, "/")
	return ok && ok2 && name != "" && file == "SKILL.md"
}

// SkillInfo is the front matter of a SKILL.md, as user.memfs.skill holds it.
type SkillInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// SkillAttr returns the user.memfs.skill value for a SKILL.md's content.
func SkillAttr(v []byte) []byte {
	name, desc := FrontMatter(v)
	b, _ := json.Marshal(SkillInfo{Name: name, Description: desc}) // plain strings
	return b
}

// FrontMatter returns the name and description of a SKILL.md's YAML front
// matter (the block between two "---" lines at its start). Only these two
// single-line keys are read; quotes around a value are removed.
func FrontMatter(v []byte) (name, desc string) {
	s := string(v)
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		if rest, ok = strings.CutPrefix(s, "---\r\n"); !ok {
			return "", ""
		}
	}
	for line := range strings.SplitSeq(rest, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "---" || line == "..." {
			break
		}
		k, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.Trim(strings.TrimSpace(val), `"'`)
		switch strings.TrimSpace(k) {
		case "name":
			name = val
		case "description":
			desc = val
		}
	}
	return name, desc
}
