package repo

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// MaxRecordSize is the largest record file: records are read whole, into
// every context pack.
const MaxRecordSize = 1 << 20

// ErrRecord is what every problem of a record's file wraps: a front matter
// that is missing, not YAML, or breaks its kind's schema (a RecordError
// says which field and why).
var ErrRecord = errors.New("invalid record")

// RecordError is one problem of a record, in words an agent can act on:
// the field, what is wrong and what is wanted. It wraps ErrRecord.
type RecordError struct {
	// Key is the record's key; "" when the record was checked without one
	// (Parse, Validate).
	Key string
	// Field is the front matter's field at fault; "" for the front matter
	// or the file as a whole.
	Field string
	// Problem is what is wrong and what is wanted. It quotes at most 80
	// bytes of any value.
	Problem string
	// frontMatter says the problem is in the front matter.
	frontMatter bool
}

func (e *RecordError) Error() string {
	var b strings.Builder
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	if e.frontMatter || e.Field != "" {
		b.WriteString("front matter: ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

// Unwrap is ErrRecord.
func (e *RecordError) Unwrap() error { return ErrRecord }

// problems collects a record's RecordErrors.
type problems []*RecordError

func (p *problems) add(field, format string, args ...any) {
	*p = append(*p, &RecordError{Field: field, Problem: fmt.Sprintf(format, args...), frontMatter: true})
}

// has reports whether a problem names field.
func (p problems) has(field string) bool {
	return slices.ContainsFunc(p, func(e *RecordError) bool { return e.Field == field })
}

// maxProblems is the most problems an error tells: a front matter of a
// megabyte can hold a hundred thousand.
const maxProblems = 20

// err is the problems as one error (nil for none), each with key: the
// first maxProblems, then a line that counts the others.
func (p problems) err(key string) error {
	errs := make([]error, 0, min(len(p), maxProblems+1))
	for i, e := range p {
		if i == maxProblems {
			errs = append(errs, &RecordError{Key: key, Problem: fmt.Sprintf("… and %d more problems", len(p)-i)})
			break
		}
		e.Key = key
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// Record is one record of a repository's memory: the fields of its front
// matter and its body. Which fields a record has depends on its Kind (see
// the package documentation); the others are zero.
type Record struct {
	Kind Kind
	// ID is the record's name: its file is ID.md.
	ID string
	// Title is a convention's rule, in one line.
	Title string
	// Tags are a convention's tags.
	Tags []string
	// Summary is a decision, in one line.
	Summary string
	// Rationale is why a decision was made, one or more lines.
	Rationale string
	// ImpactedPaths are the paths a decision bears on, relative to the
	// repository's top with '/' (a directory may end in '/').
	ImpactedPaths []string
	// Source is where a note comes from: manual, agent or tool.
	Source string
	// CreatedAt is when the record was made.
	CreatedAt time.Time
	// UpdatedAt is when a convention last changed.
	UpdatedAt time.Time
	// Body is the Markdown after the front matter, as it is.
	Body string
}

// timeWant says what a time is.
const timeWant = "want RFC 3339, such as 2026-12-06T19:15:00Z"

// field is one front matter field: how it is read from YAML, checked,
// and written.
type field struct {
	// decode sets the field of r from n; it returns what is wrong, or "".
	decode func(r *Record, n *yaml.Node) string
	// check says what is wrong with the field of r (p.add), if anything.
	check func(r *Record, p *problems)
	// set reports whether r has the field.
	set func(r *Record) bool
	// encode is the field's YAML value; with quoted, multi-line strings
	// are double-quoted too (which holds any text).
	encode func(r *Record, quoted bool) *yaml.Node
	// get is the field's value as it is written, to compare.
	get func(r *Record) any
}

// fieldOrder is each kind's fields, in the order Markdown writes them.
var fieldOrder = map[Kind][]string{
	Convention: {"id", "title", "tags", "createdAt", "updatedAt"},
	Decision:   {"id", "summary", "rationale", "impactedPaths", "createdAt"},
	Note:       {"id", "source", "createdAt"},
}

// allFields is every field's name, in the order problems are told.
var allFields = []string{"id", "title", "tags", "summary", "rationale", "impactedPaths", "source", "createdAt", "updatedAt"}

// fields is every field of every kind, by name.
var fields = map[string]field{
	"id": textField(func(r *Record) *string { return &r.ID }, checkID),
	"title": textField(func(r *Record) *string { return &r.Title }, func(r *Record, p *problems) {
		checkLine(p, "title", r.Title, "Wrap errors with %w")
	}),
	"tags": listField(func(r *Record) *[]string { return &r.Tags }, "[go, errors]", checkTags),
	"summary": textField(func(r *Record) *string { return &r.Summary }, func(r *Record, p *problems) {
		checkLine(p, "summary", r.Summary, "Keep the journal in etcd")
	}),
	"rationale":     textField(func(r *Record) *string { return &r.Rationale }, checkRationale),
	"impactedPaths": listField(func(r *Record) *[]string { return &r.ImpactedPaths }, "[journal/, cmd/memfs/main.go]", checkPaths),
	"source":        textField(func(r *Record) *string { return &r.Source }, checkSource),
	"createdAt":     timeField(func(r *Record) *time.Time { return &r.CreatedAt }, checkCreated),
	"updatedAt":     timeField(func(r *Record) *time.Time { return &r.UpdatedAt }, checkUpdated),
}

// textField is a field of one string.
func textField(of func(*Record) *string, check func(*Record, *problems)) field {
	return field{
		decode: func(r *Record, n *yaml.Node) string {
			s, problem := text(n)
			*of(r) = s
			return problem
		},
		check:  check,
		set:    func(r *Record) bool { return *of(r) != "" },
		encode: func(r *Record, quoted bool) *yaml.Node { return textNode(*of(r), quoted) },
		get:    func(r *Record) any { return *of(r) },
	}
}

// listField is a field of a list of strings, written in flow style.
func listField(of func(*Record) *[]string, example string, check func(*Record, *problems)) field {
	return field{
		decode: func(r *Record, n *yaml.Node) string {
			if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
				return "" // "tags:" alone: none
			}
			if n.Kind != yaml.SequenceNode {
				return "want a list, such as " + example
			}
			var list []string
			for i, item := range n.Content {
				s, problem := text(item)
				if problem != "" {
					return fmt.Sprintf("item %d: %s", i+1, problem)
				}
				list = append(list, s)
			}
			*of(r) = list
			return ""
		},
		check: check,
		set:   func(r *Record) bool { return len(*of(r)) > 0 },
		encode: func(r *Record, quoted bool) *yaml.Node {
			n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
			for _, s := range *of(r) {
				n.Content = append(n.Content, textNode(s, quoted))
			}
			return n
		},
		get: func(r *Record) any {
			if len(*of(r)) == 0 {
				return []string(nil)
			}
			return *of(r)
		},
	}
}

// timeField is a field of a time, written in UTC to the second.
func timeField(of func(*Record) *time.Time, check func(*Record, *problems)) field {
	return field{
		decode: func(r *Record, n *yaml.Node) string {
			s, problem := text(n)
			if problem != "" {
				return problem
			}
			if s == "" {
				return "" // missing: check says so
			}
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return fmt.Sprintf("%s is not a time: %s", quote(s), timeWant)
			}
			*of(r) = t.UTC()
			return ""
		},
		check: check,
		set:   func(r *Record) bool { return !of(r).IsZero() },
		encode: func(r *Record, _ bool) *yaml.Node {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: of(r).UTC().Format(time.RFC3339)}
		},
		get: func(r *Record) any { return of(r).Unix() },
	}
}

// text is the string a YAML scalar holds: a number or a boolean is taken
// as it is written; null is "".
func text(n *yaml.Node) (string, string) {
	if n.Kind != yaml.ScalarNode {
		return "", "want a line of text, not a list or a mapping"
	}
	switch n.Tag {
	case "!!null":
		return "", ""
	case "!!str", "!!int", "!!float", "!!bool", "!!timestamp", "!!merge":
		return n.Value, ""
	}
	return "", fmt.Sprintf("a value tagged %s: want plain text", quote(n.Tag))
}

// textNode is the YAML string s, double-quoted; multi-line text, unless
// quoted, as a literal block. Never plain: memfs's redactor replaces a
// secret in the stored bytes by "[REDACTED:rule-id]", which at the start
// of a plain scalar opens a flow sequence, and in a flow list ends it;
// inside quotes or a block it is text.
func textNode(s string, quoted bool) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
	if !quoted && strings.Contains(s, "\n") {
		// The emitter double-quotes what a block cannot hold.
		n.Style = yaml.LiteralStyle
	}
	return n
}

func checkID(r *Record, p *problems) {
	switch {
	case r.ID == "":
		p.add("id", "missing: want the file's name without .md, such as id: wrap-errors")
	case ValidateID(r.ID) != nil:
		p.add("id", "%s is not an id: %s", quote(r.ID), idWant)
	}
}

// maxLine is the longest one-line field (title, summary).
const maxLine = 200

// checkLine checks a field of one line of printable text.
func checkLine(p *problems, name, v, example string) {
	switch {
	case strings.TrimSpace(v) == "":
		p.add(name, "missing or empty: want one line of text, such as %s: %s", name, example)
	case strings.ContainsAny(v, "\n\r"):
		p.add(name, "has more than one line: want one line (put the details in the body)")
	case len(v) > maxLine:
		p.add(name, "is %d bytes long: want at most %d (put the details in the body)", len(v), maxLine)
	case !printable(v):
		p.add(name, "has control characters or invalid UTF-8: want one line of printable text")
	}
}

func checkRationale(r *Record, p *problems) {
	switch {
	case strings.TrimSpace(r.Rationale) == "":
		p.add("rationale", "missing or empty: want why the decision was made, one or more lines (rationale: | then indented lines)")
	case !utf8.ValidString(r.Rationale):
		p.add("rationale", "is not valid UTF-8: want text")
	}
}

// maxTag is the longest tag, as meta.ParseTags has it.
const maxTag = 64

func checkTags(r *Record, p *problems) {
	for i, t := range r.Tags {
		switch {
		case strings.TrimSpace(t) == "":
			p.add("tags", "tag %d is empty: want a word or two, such as [go, errors]", i+1)
		case len(t) > maxTag:
			p.add("tags", "tag %d is %d bytes long: want at most %d", i+1, len(t), maxTag)
		case !printable(t):
			p.add("tags", "tag %d has control characters or invalid UTF-8: want printable text", i+1)
		case strings.Contains(t, ","):
			p.add("tags", "tag %s has a comma: want one tag a list item, such as [go, errors]", quote(t))
		case strings.TrimSpace(t) != t:
			p.add("tags", "tag %s has spaces around it: want the tag alone", quote(t))
		default:
			continue
		}
		return
	}
}

func checkPaths(r *Record, p *problems) {
	const want = "want a path relative to the repository's top, with '/', such as internal/store/ or cmd/memfs/main.go"
	for i, s := range r.ImpactedPaths {
		segs := strings.Split(strings.TrimSuffix(s, "/"), "/")
		switch {
		case s == "":
			p.add("impactedPaths", "path %d is empty: %s", i+1, want)
		case strings.HasPrefix(s, "/"):
			p.add("impactedPaths", "%s is absolute: %s", quote(s), want)
		case slices.Contains(segs, ".."):
			p.add("impactedPaths", "%s has a '..': %s", quote(s), want)
		case slices.Contains(segs, ""):
			p.add("impactedPaths", "%s has an empty part (//): %s", quote(s), want)
		case !printable(s):
			p.add("impactedPaths", "path %d has control characters or invalid UTF-8: %s", i+1, want)
		default:
			continue
		}
		return
	}
}

func checkSource(r *Record, p *problems) {
	switch r.Source {
	case "manual", "agent", "tool":
	case "":
		p.add("source", "missing: want manual, agent or tool, such as source: agent")
	default:
		p.add("source", "%s is not a source: want manual, agent or tool", quote(r.Source))
	}
}

func checkCreated(r *Record, p *problems) {
	if r.CreatedAt.IsZero() {
		p.add("createdAt", "missing: %s", timeWant)
	}
}

func checkUpdated(r *Record, p *problems) {
	switch {
	case r.UpdatedAt.IsZero():
		p.add("updatedAt", "missing: %s", timeWant)
	case r.UpdatedAt.Before(r.CreatedAt) && !p.has("createdAt"):
		p.add("updatedAt", "%s is before createdAt %s: want a time at or after it",
			r.UpdatedAt.UTC().Format(time.RFC3339), r.CreatedAt.UTC().Format(time.RFC3339))
	}
}

// printable reports whether s is valid UTF-8 without control characters
// (meta's rule for attribute values).
func printable(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

// Validate checks r against its kind's schema: each problem a RecordError
// naming the field, joined.
func (r Record) Validate() error { return r.problems(nil).err("") }

// problems is what is wrong with r, after the problems decoding found
// (whose fields are not checked again).
func (r Record) problems(found problems) problems {
	order, ok := fieldOrder[r.Kind]
	if !ok {
		return problems{{Problem: fmt.Sprintf("%s is not a kind of record: want convention, decision or note", quote(string(r.Kind)))}}
	}
	p := found
	for _, name := range order {
		if !found.has(name) {
			fields[name].check(&r, &p)
		}
	}
	for _, name := range allFields {
		if !slices.Contains(order, name) && fields[name].set(&r) {
			p.add(name, "not a field of a %s (its fields: %s)", r.Kind, strings.Join(order, ", "))
		}
	}
	return p
}

// Markdown is r's file: its front matter, between lines "---", with the
// kind's fields in schema order (times in UTC to the second, lists in
// flow style, strings double-quoted, multi-line text as a literal block),
// then its body. A redaction's marker, "[REDACTED:rule-id]", may replace
// a part of a string in the file's bytes (not a part of an escape such as
// \n) and the file still reads, the marker in place of that part.
func (r Record) Markdown() []byte {
	front, ok := r.frontMatter(false)
	if !ok {
		// A literal block does not read back (YAML emitters have such
		// corners): every string double-quoted.
		front, _ = r.frontMatter(true)
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(front)
	b.WriteString("---\n")
	b.WriteString(r.Body)
	return b.Bytes()
}

// frontMatter is r's front matter without the lines "---", and whether it
// reads back as r.
func (r Record) frontMatter(quoted bool) ([]byte, bool) {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	for _, name := range fieldOrder[r.Kind] {
		if f := fields[name]; f.set(&r) {
			doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, f.encode(&r, quoted))
		}
	}
	if len(doc.Content) == 0 {
		return nil, true
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	err := enc.Encode(doc)
	if err == nil {
		err = enc.Close()
	}
	if err != nil {
		return nil, false
	}
	return b.Bytes(), r.readsBack(b.Bytes())
}

// readsBack reports whether front, a front matter, holds r's fields.
func (r Record) readsBack(front []byte) bool {
	var doc yaml.Node
	if yaml.Unmarshal(front, &doc) != nil || len(doc.Content) == 0 {
		return false
	}
	got := Record{Kind: r.Kind}
	if len(decodeFields(&got, doc.Content[0])) > 0 {
		return false
	}
	for _, name := range fieldOrder[r.Kind] {
		if f := fields[name]; !reflect.DeepEqual(f.get(&got), f.get(&r)) {
			return false
		}
	}
	return true
}

// Parse reads a record of kind k from its file's content v.
func Parse(k Kind, v []byte) (Record, error) {
	r, p := parse(k, v)
	return r, p.err("")
}

// CheckKey checks the value v of key: nil when key names no record
// (ParseKey); else Parse's problems and the id's, which must be the file's
// name without .md.
func CheckKey(key string, v []byte) error {
	_, k, id, ok := ParseKey(key)
	if !ok {
		return nil
	}
	r, p := parse(k, v)
	if len(p) == 0 && r.ID != id {
		p.add("id", "%s is not the file's name: want id: %s, or rename the file to %s.md", quote(r.ID), id, r.ID)
	}
	return p.err(key)
}

// misnamed reports whether key is a file of .md directly in a kind's
// directory, not starting with '.', whose name without .md (stem) is not
// an id: a record, but for its name.
func misnamed(key string) (stem string, bad bool) {
	_, _, name, inKindDir := splitKey(key)
	stem, isMD := strings.CutSuffix(name, ".md")
	return stem, inKindDir && isMD && !strings.HasPrefix(name, ".") && ValidateID(stem) != nil
}

// recordFile reports whether key is a record's file, misnamed or not.
func recordFile(key string) bool {
	_, _, _, ok := ParseKey(key)
	_, bad := misnamed(key)
	return ok || bad
}

// checkFile is CheckKey, and for a misnamed record its name's problem.
func checkFile(key string, v []byte) error {
	if stem, bad := misnamed(key); bad {
		return &RecordError{Key: key, Problem: fmt.Sprintf("the name %s is not an id: %s (then name the file ID.md)", quote(stem), idWant)}
	}
	return CheckKey(key, v)
}

// parse reads a record of kind k from v, with every problem found.
func parse(k Kind, v []byte) (Record, problems) {
	r := Record{Kind: k}
	if _, ok := fieldOrder[k]; !ok {
		return r, r.problems(nil)
	}
	if len(v) > MaxRecordSize {
		return r, problems{{Problem: fmt.Sprintf("the file is %d bytes: a record is at most 1 MiB (keep the details elsewhere and point to them)", len(v))}}
	}
	front, body, problem := split(v)
	if problem != "" {
		return r, problems{{Problem: problem + ": " + howToStart(k), frontMatter: true}}
	}
	r.Body = body
	var doc yaml.Node
	// The "---" line becomes an empty one, so that YAML's line numbers
	// are the file's.
	if err := yaml.Unmarshal(append([]byte("\n"), front...), &doc); err != nil {
		hint := howToStart(k)
		if strings.Contains(err.Error(), "mapping values are not allowed") {
			// title: Decision: use etcd, the commonest slip.
			hint = `a value that holds ": " or starts with [, {, ", ', #, &, * or ! is written in double quotes, such as title: "Decision: use etcd"`
		}
		return r, problems{{Problem: fmt.Sprintf("not YAML (%s): %s", cut(err.Error()), hint), frontMatter: true}}
	}
	var found problems
	if len(doc.Content) > 0 {
		m := doc.Content[0]
		if m.Kind != yaml.MappingNode {
			return r, problems{{Problem: "want fields, one a line as name: value: " + howToStart(k), frontMatter: true}}
		}
		found = decodeFields(&r, m)
	}
	return r, r.problems(found)
}

// decodeFields sets r's fields from the mapping m.
func decodeFields(r *Record, m *yaml.Node) problems {
	var p problems
	order := fieldOrder[r.Kind]
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		kn, vn := m.Content[i], m.Content[i+1]
		name := kn.Value
		switch {
		case kn.Kind != yaml.ScalarNode:
			p.add("", "line %d: want fields as name: value", kn.Line)
		case !slices.Contains(order, name):
			p.add(fieldName(name), "unknown field of a %s (its fields: %s)", r.Kind, strings.Join(order, ", "))
		case seen[name]:
			p.add(name, "given twice (line %d): want it once", kn.Line)
		default:
			seen[name] = true
			if problem := fields[name].decode(r, vn); problem != "" {
				p.add(name, "%s", problem)
			}
		}
	}
	return p
}

// split cuts a record's file into its front matter (without the lines
// "---") and its body, or says what is wrong. A UTF-8 byte order mark
// before the first "---", which some editors write, is skipped.
func split(v []byte) (front []byte, body, problem string) {
	v = bytes.TrimPrefix(v, []byte("\uFEFF"))
	first, rest, _ := bytes.Cut(v, []byte("\n"))
	if !isFence(first) {
		return nil, "", "missing"
	}
	for off := 0; off < len(rest); {
		line, _, _ := bytes.Cut(rest[off:], []byte("\n"))
		next := off + len(line) + 1
		if isFence(line) {
			return rest[:off], string(rest[min(next, len(rest)):]), ""
		}
		off = next
	}
	return nil, "", "no closing line ---"
}

// isFence reports whether line is a front matter's "---" (trailing blanks,
// and the '\r' of a CRLF file, allowed).
func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// howToStart says how a record of kind k starts.
func howToStart(k Kind) string {
	example := map[Kind]string{
		Convention: "id: wrap-errors, title: Wrap errors with %w, createdAt: 2026-12-06T19:15:00Z, updatedAt: 2026-12-06T19:15:00Z",
		Decision:   "id: etcd-journal, summary: Keep the journal in etcd, rationale: why, createdAt: 2026-12-06T19:15:00Z",
		Note:       "id: flaky-test, source: agent, createdAt: 2026-12-06T19:15:00Z",
	}[k]
	return "a record starts with a line ---, then its fields one a line (" + example + "), then a line ---, then its body"
}

// fieldName is an unknown field's name as an error shows it: quoted when
// it is long or not printable.
func fieldName(name string) string {
	if name != "" && len(name) <= maxQuoted && printable(name) && !strings.ContainsAny(name, ": ") {
		return name
	}
	return quote(name)
}

// cut is s, at most maxQuoted bytes of it, unquoted (YAML's messages
// quote a little of the value at fault).
func cut(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	n := maxQuoted
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
