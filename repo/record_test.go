package repo_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memfs/memfs/repo"
)

const testHash = "0123456789abcdef"

// baseFields are a valid front matter of each kind, a field a line.
var baseFields = map[repo.Kind][]string{
	repo.Convention: {"id: errors", "title: Wrap errors with %w", "tags: [go, errors]", "createdAt: 2026-12-06T19:15:00Z", "updatedAt: 2026-12-07T08:00:00Z"},
	repo.Decision:   {"id: errors", "summary: Keep the journal in etcd", "rationale: |\n  It is replicated.\n  It watches.", "impactedPaths: [journal/, cmd/memfs/main.go]", "createdAt: 2026-12-06T19:15:00Z"},
	repo.Note:       {"id: errors", "source: agent", "createdAt: 2026-12-06T19:15:00Z"},
}

// file is a record's file: the base fields of k, with the field of each
// change's name replaced by the change ("name:" alone removes it; a
// name not among them adds the line), then body.
func file(k repo.Kind, body string, changes ...string) []byte {
	lines := append([]string(nil), baseFields[k]...)
	for _, c := range changes {
		name, _, _ := strings.Cut(c, ":")
		found := false
		for i, l := range lines {
			if strings.HasPrefix(l, name+":") {
				lines[i], found = c, true
				if c == name+":" {
					lines[i] = ""
				}
			}
		}
		if !found {
			lines = append(lines, c)
		}
	}
	var b strings.Builder
	b.WriteString("---\n")
	for _, l := range lines {
		if l != "" {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("---\n" + body)
	return []byte(b.String())
}

func TestParseValid(t *testing.T) {
	created := time.Date(2026, 12, 6, 19, 15, 0, 0, time.UTC)
	tests := []struct {
		kind repo.Kind
		want repo.Record
	}{
		{repo.Convention, repo.Record{Kind: repo.Convention, ID: "errors", Title: "Wrap errors with %w", Tags: []string{"go", "errors"},
			CreatedAt: created, UpdatedAt: time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC), Body: "the body\n"}},
		{repo.Decision, repo.Record{Kind: repo.Decision, ID: "errors", Summary: "Keep the journal in etcd", Rationale: "It is replicated.\nIt watches.\n",
			ImpactedPaths: []string{"journal/", "cmd/memfs/main.go"}, CreatedAt: created, Body: "the body\n"}},
		{repo.Note, repo.Record{Kind: repo.Note, ID: "errors", Source: "agent", CreatedAt: created, Body: "the body\n"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			got, err := repo.Parse(tt.kind, file(tt.kind, "the body\n"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// Each field's problem is told: the error names the field, says what is
// wrong and what is wanted, and wraps ErrRecord.
func TestParseFieldErrors(t *testing.T) {
	C, D, N := repo.Convention, repo.Decision, repo.Note
	long := strings.Repeat("x", 201)
	tests := []struct {
		name   string
		kind   repo.Kind
		change string
		field  string
		want   string
	}{
		{"id missing", C, "id:", "id", "missing: want the file's name"},
		{"id not an id", C, "id: Wrap Errors", "id", `"Wrap Errors" is not an id: want 1 to 64 lowercase`},
		{"id a list", N, "id: [a]", "id", "want a line of text"},
		{"id too long", D, "id: " + strings.Repeat("a", 65), "id", "is not an id"},
		{"title missing", C, "title:", "title", "missing or empty: want one line of text"},
		{"title blank", C, `title: "  "`, "title", "missing or empty"},
		{"title a list", C, "title: [a, b]", "title", "want a line of text, not a list"},
		{"title two lines", C, `title: "a\nb"`, "title", "more than one line"},
		{"title too long", C, "title: " + long, "title", "is 201 bytes long: want at most 200"},
		{"title control", C, `title: "a\x01b"`, "title", "control characters"},
		{"title binary", C, "title: !!binary aGVsbG8=", "title", "want plain text"},
		{"tags a string", C, "tags: go", "tags", "want a list, such as [go, errors]"},
		{"tags a mapping", C, "tags: {a: b}", "tags", "want a list"},
		{"tags nested", C, "tags: [[a]]", "tags", "item 1: want a line of text"},
		{"tag empty", C, `tags: [go, ""]`, "tags", "tag 2 is empty"},
		{"tag too long", C, "tags: [" + strings.Repeat("t", 65) + "]", "tags", "tag 1 is 65 bytes long: want at most 64"},
		{"tag comma", C, `tags: ["a,b"]`, "tags", "has a comma"},
		{"tag control", C, `tags: ["a\tb"]`, "tags", "control characters"},
		{"createdAt missing", C, "createdAt:", "createdAt", "missing: want RFC 3339"},
		{"createdAt not a time", N, "createdAt: yesterday", "createdAt", `"yesterday" is not a time: want RFC 3339, such as 2026-12-06T19:15:00Z`},
		{"createdAt a date", D, "createdAt: 2026-12-06", "createdAt", "is not a time"},
		{"createdAt a list", C, "createdAt: [1]", "createdAt", "want a line of text"},
		{"updatedAt missing", C, "updatedAt:", "updatedAt", "missing: want RFC 3339"},
		{"updatedAt bad", C, "updatedAt: soon", "updatedAt", "is not a time"},
		{"updatedAt before createdAt", C, "updatedAt: 2026-12-05T00:00:00Z", "updatedAt", "is before createdAt 2026-12-06T19:15:00Z"},
		{"summary missing", D, "summary:", "summary", "missing or empty: want one line"},
		{"summary too long", D, "summary: " + long, "summary", "want at most 200"},
		{"summary a mapping", D, "summary: {a: b}", "summary", "want a line of text"},
		{"rationale missing", D, "rationale:", "rationale", "missing or empty: want why"},
		{"rationale a list", D, "rationale: [a]", "rationale", "want a line of text"},
		{"impactedPaths a string", D, "impactedPaths: cmd/", "impactedPaths", "want a list, such as [journal/, cmd/memfs/main.go]"},
		{"impactedPaths absolute", D, "impactedPaths: [/etc/passwd]", "impactedPaths", `"/etc/passwd" is absolute: want a path relative`},
		{"impactedPaths dotdot", D, "impactedPaths: [a/../../b]", "impactedPaths", "has a '..'"},
		{"impactedPaths empty part", D, "impactedPaths: [a//b]", "impactedPaths", "empty part"},
		{"impactedPaths empty", D, `impactedPaths: [""]`, "impactedPaths", "path 1 is empty"},
		{"source missing", N, "source:", "source", "missing: want manual, agent or tool"},
		{"source unknown", N, "source: human", "source", `"human" is not a source: want manual, agent or tool`},
		{"unknown field", C, "color: red", "color", "unknown field of a convention (its fields: id, title, tags, createdAt, updatedAt)"},
		{"another kind's field", N, "title: x", "title", "unknown field of a note (its fields: id, source, createdAt)"},
		{"twice", D, "summary: again\nsummary: twice", "summary", "given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := repo.Parse(tt.kind, file(tt.kind, "body\n", tt.change))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, repo.ErrRecord) {
				t.Errorf("%v: not an ErrRecord", err)
			}
			var re *repo.RecordError
			if !errors.As(err, &re) || re.Field != tt.field {
				t.Errorf("got field %q (%v), want %s", fieldOf(re), err, tt.field)
			}
			if msg := err.Error(); !strings.Contains(msg, "front matter: "+tt.field+": ") || !strings.Contains(msg, tt.want) {
				t.Errorf("got %q, want it to name %s and say %q", msg, tt.field, tt.want)
			}
		})
	}
}

// An optional list may be left empty.
func TestParseEmptyLists(t *testing.T) {
	for _, tt := range []struct {
		kind   repo.Kind
		change string
	}{{repo.Convention, "tags: ~"}, {repo.Convention, "tags: []"}, {repo.Decision, "impactedPaths: null"}, {repo.Decision, "impactedPaths: []"}} {
		r, err := repo.Parse(tt.kind, file(tt.kind, "", tt.change))
		if err != nil || r.Tags != nil || r.ImpactedPaths != nil {
			t.Errorf("%s: %+v, %v", tt.change, r, err)
		}
	}
}

func fieldOf(re *repo.RecordError) string {
	if re == nil {
		return "<none>"
	}
	return re.Field
}

// The message of the package's documentation, whole.
func TestCheckKeyMessage(t *testing.T) {
	key := repo.RecordKey(testHash, repo.Convention, "errors")
	err := repo.CheckKey(key, file(repo.Convention, "", "createdAt: yesterday"))
	want := `repos/0123456789abcdef/conventions/errors.md: front matter: createdAt: "yesterday" is not a time: want RFC 3339, such as 2026-12-06T19:15:00Z`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// Every problem is told at once, a line each, each with the key.
func TestCheckKeyEveryProblem(t *testing.T) {
	key := repo.RecordKey(testHash, repo.Convention, "errors")
	err := repo.CheckKey(key, file(repo.Convention, "", "title:", "createdAt: never", "color: red"))
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %q, want three problems", err)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, key+": front matter: ") {
			t.Errorf("got %q, want it to start with the key", l)
		}
	}
}

func TestCheckKey(t *testing.T) {
	good := file(repo.Note, "body\n")
	tests := []struct {
		name string
		key  string
		v    []byte
		want string // "" for no error
	}{
		{"a record", "repos/" + testHash + "/notes/errors.md", good, ""},
		{"id and name differ", "repos/" + testHash + "/notes/other.md", good, `front matter: id: "errors" is not the file's name: want id: other, or rename the file to errors.md`},
		{"another kind's schema", "repos/" + testHash + "/decisions/errors.md", good, "summary: missing"},
		{"no front matter", "repos/" + testHash + "/notes/errors.md", []byte("just text\n"), "front matter: missing: a record starts with a line ---, then its fields"},
		{"no closing line", "repos/" + testHash + "/notes/errors.md", []byte("---\nid: errors\n"), "front matter: no closing line ---"},
		{"not YAML", "repos/" + testHash + "/notes/errors.md", []byte("---\nid: [errors\n---\n"), "front matter: not YAML (yaml: line"},
		{"not a mapping", "repos/" + testHash + "/notes/errors.md", []byte("---\n- id\n---\n"), "front matter: want fields, one a line"},
		{"too large", "repos/" + testHash + "/notes/errors.md", append(good, make([]byte, repo.MaxRecordSize)...), "a record is at most 1 MiB"},
		{"a name that is no id", "repos/" + testHash + "/notes/Flaky Test.md", good, ""},
		{"an editor's swap file", "repos/" + testHash + "/notes/.errors.md.swp", []byte("\x00"), ""},
		{"a dot file", "repos/" + testHash + "/notes/.errors.md", []byte("\x00"), ""},
		{"not .md", "repos/" + testHash + "/notes/errors.txt", []byte("\x00"), ""},
		{"deeper", "repos/" + testHash + "/notes/a/errors.md", []byte("\x00"), ""},
		{"another directory", "repos/" + testHash + "/indexes/map.md", []byte("\x00"), ""},
		{"not a hash", "repos/0123/notes/errors.md", []byte("\x00"), ""},
		{"outside repos", "memory/errors.md", []byte("\x00"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := repo.CheckKey(tt.key, tt.v)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want none", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), tt.key+": ")):
				t.Errorf("got %v, want %q after the key", err, tt.want)
			case tt.want != "" && !errors.Is(err, repo.ErrRecord):
				t.Errorf("%v: not an ErrRecord", err)
			}
		})
	}
}

// An error quotes at most 80 bytes of a value, whatever it holds.
func TestErrorsQuoteLittle(t *testing.T) {
	secret := strings.Repeat("a", 90) + "SECRET" + strings.Repeat("b", 100)
	for _, change := range []string{
		"createdAt: " + secret,
		"source: " + secret,
		"id: " + secret,
		secret + ": x",
		"tags: [\"," + secret + "\"]",
	} {
		_, err := repo.Parse(repo.Note, file(repo.Note, "", change))
		if err == nil {
			_, err = repo.Parse(repo.Convention, file(repo.Convention, "", change))
		}
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%.20s...: got %v", change, err)
		}
	}
}

// Validate refuses a field of another kind, which Markdown would drop.
func TestValidateForeignField(t *testing.T) {
	r := repo.Record{Kind: repo.Note, ID: "x", Source: "tool", CreatedAt: time.Now(), Title: "a rule"}
	err := r.Validate()
	var re *repo.RecordError
	if !errors.As(err, &re) || re.Field != "title" || !strings.Contains(err.Error(), "not a field of a note") {
		t.Errorf("got %v", err)
	}
	if err := (repo.Record{Kind: "rule", ID: "x"}).Validate(); !errors.Is(err, repo.ErrRecord) {
		t.Errorf("an unknown kind: got %v", err)
	}
}

// Parse(Markdown()) is the record, for random records of every kind.
func TestMarkdownRoundTrip(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	for i := range 2000 {
		r := randomRecord(rng)
		if err := r.Validate(); err != nil {
			t.Fatalf("seed %d, record %d: a random record: %v\n%+v", seed, i, err, r)
		}
		md := r.Markdown()
		got, err := repo.Parse(r.Kind, md)
		if err != nil {
			t.Fatalf("seed %d, record %d: %v\n%s", seed, i, err, md)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("seed %d, record %d:\ngot  %#v\nwant %#v\n%s", seed, i, got, r, md)
		}
		if err := repo.CheckKey(repo.RecordKey(testHash, r.Kind, r.ID), md); err != nil {
			t.Fatalf("seed %d, record %d: %v", seed, i, err)
		}
	}
}

// The tricky pieces of YAML: indicators, words YAML reads as other
// types, quotes, leading and trailing blanks, unicode.
var pieces = []string{"a", "word", "Wrap", "errors", "with", "%w", ":", ": ", "#", " #", "- ", "-", "?", "'", `"`, "[", "]", "{", "}", ",", "&a", "*a", "!x", "|", ">", "@", "`",
	"yes", "no", "null", "~", "true", "123", "0x1F", "1e3", ".inf", "2026-12-06T19:15:00Z", "---", "...", " ", "é", "日本", "\u2028", "\\", "%"}

func randomText(rng *rand.Rand, n int, extra ...string) string {
	var b strings.Builder
	for range 1 + rng.IntN(n) {
		if len(extra) > 0 && rng.IntN(4) == 0 {
			b.WriteString(extra[rng.IntN(len(extra))])
		} else {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
	}
	return b.String()
}

// randomLine is one line of printable text, not blank, at most 200 bytes.
func randomLine(rng *rand.Rand) string {
	for {
		s := randomText(rng, 12)
		if strings.TrimSpace(s) != "" && !strings.Contains(s, "\u2028") && len(s) <= 200 {
			return s
		}
	}
}

func randomTime(rng *rand.Rand) time.Time {
	return time.Unix(946684800+rng.Int64N(100*365*86400), 0).UTC()
}

func randomRecord(rng *rand.Rand) repo.Record {
	const idChars = "abcdefghijklmnopqrstuvwxyz0123456789._-"
	id := []byte{idChars[rng.IntN(36)]}
	for range rng.IntN(20) {
		id = append(id, idChars[rng.IntN(len(idChars))])
	}
	r := repo.Record{Kind: repo.Kinds[rng.IntN(3)], ID: string(id), CreatedAt: randomTime(rng)}
	if rng.IntN(3) > 0 {
		r.Body = randomText(rng, 20, "\n", "\n---\n", "\r\n", "\t", "\x00")
	}
	switch r.Kind {
	case repo.Convention:
		r.Title = randomLine(rng)
		for range rng.IntN(4) {
			tag := strings.TrimSpace(strings.ReplaceAll(randomText(rng, 3), ",", ""))
			if tag != "" && len(tag) <= 64 && !strings.Contains(tag, "\u2028") {
				r.Tags = append(r.Tags, tag)
			}
		}
		r.UpdatedAt = r.CreatedAt.Add(time.Duration(rng.IntN(1000)) * time.Hour)
	case repo.Decision:
		r.Summary = randomLine(rng)
		for strings.TrimSpace(r.Rationale) == "" {
			r.Rationale = randomText(rng, 30, "\n", "\n\n", "  ", "\t", "\r", "\n ")
		}
		for range rng.IntN(4) {
			r.ImpactedPaths = append(r.ImpactedPaths, fmt.Sprintf("dir%d/%s", rng.IntN(9), []string{"", "a.go", "b c/", "[x]", "-y", "#z"}[rng.IntN(6)]))
		}
	case repo.Note:
		r.Source = []string{"manual", "agent", "tool"}[rng.IntN(3)]
	}
	return r
}

// Text YAML's emitter writes in a style that does not read back (a
// literal block whose first line starts with a tab) is written
// double-quoted instead.
func TestMarkdownTricky(t *testing.T) {
	for _, s := range []string{"\tindented\nsecond", "\t\tx\n", "\t:\n##a", " lead\nx\n\n", "a\r\nb", "trail  \nx", "<<"} {
		r := repo.Record{Kind: repo.Decision, ID: "d", Summary: "s", Rationale: s, CreatedAt: time.Unix(0, 0).UTC()}
		got, err := repo.Parse(repo.Decision, r.Markdown())
		if err != nil || got.Rationale != s {
			t.Errorf("%q: got %q, %v\n%s", s, got.Rationale, err, r.Markdown())
		}
	}
}

// A redaction's marker in place of a secret anywhere in a string of a
// record's file (memfs's redactor rewrites the stored bytes) leaves a
// file that reads, with the marker in place of the secret: even at a
// string's start, where a plain YAML scalar "[REDACTED:..." would be a
// flow sequence, or in a list's item, where "]" would end the list.
func TestMarkdownRedacted(t *testing.T) {
	const secret = "ghp_0123456789abcdefABCDEF0123456789abcd"
	const marker = "[REDACTED:github-token]"
	created := time.Date(2026, 12, 6, 19, 15, 0, 0, time.UTC)
	for _, tt := range []struct {
		field string
		r     repo.Record
	}{
		{"title", repo.Record{Kind: repo.Convention, ID: "c", Title: secret + " is the token", CreatedAt: created, UpdatedAt: created}},
		{"title", repo.Record{Kind: repo.Convention, ID: "c", Title: "token: " + secret, CreatedAt: created, UpdatedAt: created}},
		{"tags", repo.Record{Kind: repo.Convention, ID: "c", Title: "t", Tags: []string{secret, "go"}, CreatedAt: created, UpdatedAt: created}},
		{"tags", repo.Record{Kind: repo.Convention, ID: "c", Title: "t", Tags: []string{"go", "x" + secret}, CreatedAt: created, UpdatedAt: created}},
		{"summary", repo.Record{Kind: repo.Decision, ID: "d", Summary: secret, Rationale: "why", CreatedAt: created}},
		{"rationale", repo.Record{Kind: repo.Decision, ID: "d", Summary: "s", Rationale: secret + "\nleaked", CreatedAt: created}},
		{"rationale", repo.Record{Kind: repo.Decision, ID: "d", Summary: "s", Rationale: "\tfirst\n" + secret, CreatedAt: created}},
		{"impactedPaths", repo.Record{Kind: repo.Decision, ID: "d", Summary: "s", Rationale: "why", ImpactedPaths: []string{secret + "/"}, CreatedAt: created}},
		{"source", repo.Record{Kind: repo.Note, ID: "n", Source: secret, CreatedAt: created}},
		{"id", repo.Record{Kind: repo.Note, ID: "n-" + secret, Source: "tool", CreatedAt: created}},
	} {
		want := tt.r
		swap := func(s string) string { return strings.ReplaceAll(s, secret, marker) }
		want.ID, want.Title, want.Summary, want.Rationale, want.Source = swap(want.ID), swap(want.Title), swap(want.Summary), swap(want.Rationale), swap(want.Source)
		want.Tags, want.ImpactedPaths = slices.Clone(want.Tags), slices.Clone(want.ImpactedPaths)
		for i := range want.Tags {
			want.Tags[i] = swap(want.Tags[i])
		}
		for i := range want.ImpactedPaths {
			want.ImpactedPaths[i] = swap(want.ImpactedPaths[i])
		}
		redactedReads(t, tt.r, want, tt.field, secret, marker)
	}

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	for range 2000 {
		r := randomRecord(rng)
		token := "ghp_" + randomToken(rng, 36)
		want := r
		want.Tags, want.ImpactedPaths = slices.Clone(r.Tags), slices.Clone(r.ImpactedPaths)
		field := plant(rng, &r, &want, token, marker)
		if !redactedReads(t, r, want, field, token, marker) {
			t.Fatalf("seed %d", seed)
		}
	}
}

// redactedReads reports whether r's file, each of secrets replaced in its
// bytes by marker, reads as want, with problems of field alone (a marker
// makes no id or source).
func redactedReads(t *testing.T, r, want repo.Record, field string, secretsAndMarker ...string) bool {
	t.Helper()
	md := r.Markdown()
	marker := secretsAndMarker[len(secretsAndMarker)-1]
	redacted := md
	for _, s := range secretsAndMarker[:len(secretsAndMarker)-1] {
		redacted = bytes.ReplaceAll(redacted, []byte(s), []byte(marker))
	}
	if bytes.Equal(redacted, md) {
		t.Errorf("%s: no secret in the file as it is:\n%s", field, md)
		return false
	}
	got, err := repo.Parse(r.Kind, redacted)
	for _, e := range joined(err) {
		if re, ok := e.(*repo.RecordError); !ok || re.Field != field {
			t.Errorf("%s: %v\n%s", field, err, redacted)
			return false
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\ngot  %#v\nwant %#v\n%s", field, got, want, redacted)
		return false
	}
	return true
}

// joined is err's errors, one for an error that joins none.
func joined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}

func randomToken(rng *rand.Rand, n int) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[rng.IntN(len(chars))]
	}
	return string(b)
}

// plant puts secret into one string of r (at its start, its end or
// within) and marker at the same place in want, and returns the field's
// name.
func plant(rng *rand.Rand, r, want *repo.Record, secret, marker string) string {
	at := func(s string) int {
		switch rng.IntN(3) {
		case 0:
			return 0
		case 1:
			return len(s)
		}
		i := rng.IntN(len(s) + 1)
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		return i
	}
	one := func(got, w *string) {
		i := at(*got)
		*got, *w = (*got)[:i]+secret+(*got)[i:], (*got)[:i]+marker+(*got)[i:]
	}
	item := func(got, w *[]string) {
		if len(*got) == 0 || rng.IntN(4) == 0 {
			*got, *w = append(*got, ""), append(*w, "")
		}
		i := rng.IntN(len(*got))
		one(&(*got)[i], &(*w)[i])
	}
	var names []string
	switch r.Kind {
	case repo.Convention:
		names = []string{"id", "title", "tags"}
	case repo.Decision:
		names = []string{"id", "summary", "rationale", "impactedPaths"}
	case repo.Note:
		names = []string{"id", "source"}
	}
	name := names[rng.IntN(len(names))]
	switch name {
	case "id":
		one(&r.ID, &want.ID)
	case "title":
		one(&r.Title, &want.Title)
	case "tags":
		item(&r.Tags, &want.Tags)
	case "summary":
		one(&r.Summary, &want.Summary)
	case "rationale":
		one(&r.Rationale, &want.Rationale)
	case "impactedPaths":
		item(&r.ImpactedPaths, &want.ImpactedPaths)
	case "source":
		one(&r.Source, &want.Source)
	}
	return name
}

// A front matter of a megabyte of problems makes an error of 20 of them
// and a count of the others, not one of megabytes.
func TestErrorsBounded(t *testing.T) {
	const fields = 200000 // 1 MiB of "k: 1" lines
	front := strings.Repeat("k: 1\n", fields)
	key := repo.RecordKey(testHash, repo.Note, "errors")
	err := repo.CheckKey(key, []byte("---\n"+front+"---\n"))
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if len(msg) > 8<<10 {
		t.Fatalf("an error of %d bytes, want at most 8 KiB: %.300s", len(msg), msg)
	}
	lines := strings.Split(msg, "\n")
	// Each k an unknown field, and id, source and createdAt missing.
	want := fmt.Sprintf("%s: … and %d more problems", key, fields+3-20)
	if len(lines) != 21 || lines[20] != want {
		t.Errorf("got %d lines, the last %q; want 21, the last %q", len(lines), lines[len(lines)-1], want)
	}
	if !errors.Is(err, repo.ErrRecord) {
		t.Errorf("%.100s: not an ErrRecord", msg)
	}
	if err := repo.CheckKey(key, []byte("---\n"+strings.Repeat("k: 1\n", 17)+"---\n")); len(joined(err)) != 20 {
		t.Errorf("20 problems: got %d errors: %v", len(joined(err)), err)
	}
}

// A byte order mark before the first "---" (some editors write one) is
// no part of the record.
func TestParseBOM(t *testing.T) {
	for _, k := range repo.Kinds {
		v := file(k, "the body\n")
		want, err := repo.Parse(k, v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := repo.Parse(k, append([]byte("\xEF\xBB\xBF"), v...))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, %v; want %+v", k, got, err, want)
		}
		crlf := bytes.ReplaceAll(v, []byte("\n"), []byte("\r\n"))
		if _, err := repo.Parse(k, append([]byte("\xEF\xBB\xBF"), crlf...)); err != nil {
			t.Errorf("%s, CRLF: %v", k, err)
		}
	}
}

// A value holding ": " unquoted is the commonest slip of a record written
// by hand: the error says to quote it, with an example.
func TestParseColonInValueSaysQuote(t *testing.T) {
	_, err := repo.Parse(repo.Convention, []byte("---\nid: x\ntitle: Decision: use etcd\ncreatedAt: 2026-12-01T10:00:00Z\nupdatedAt: 2026-12-01T10:00:00Z\n---\n"))
	if err == nil || !strings.Contains(err.Error(), `double quotes, such as title: "Decision: use etcd"`) {
		t.Errorf("Parse of a title holding \": \" unquoted: %v, want the advice to quote it", err)
	}
}
