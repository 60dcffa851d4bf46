// Package devset reads memfs's dev set for semantic recall
// (testdata/recall): realistic agent-memory notes and questions about them,
// each question naming the notes that answer it. It is used to tune the
// keyword, semantic and hybrid search of issue 17 and to report their
// quality with [RecallAt] and [MRR].
//
// A note's key is its path under testdata/recall/notes, slash-separated
// ("memory/billing/invoice-retention.md"), as it would be stored in memfs.
// A question is a line of testdata/recall/questions.jsonl:
//
//	{"q": "what happens to old invoices", "want": ["memory/billing/invoice-retention.md"], "kind": "paraphrase"}
//
// A question of kind [KindParaphrase] is asked in other words than its
// note's: few of its content words occur in the note ([Overlap]); the
// package's tests hold every such question to a bound. A question of kind
// [KindKeyword] uses the note's own terms, so that a report shows whether
// a hybrid search keeps what keyword search already finds.
//
// # Concurrency
//
// The package keeps no state; its functions are safe for concurrent use.
package devset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// The kinds of question.
const (
	// KindParaphrase is a question asked in the asker's own words.
	KindParaphrase = "paraphrase"
	// KindKeyword is a question that uses its note's own distinctive terms.
	KindKeyword = "keyword"
)

// Set is the dev set: its notes, by key, and its questions, in file order.
type Set struct {
	Notes     []Note
	Questions []Question
}

// Note is one memory note: its key (path under notes/, slash-separated)
// and its text.
type Note struct {
	Key, Value string
}

// Question is one question and the keys of the notes that answer it.
type Question struct {
	Q    string   `json:"q"`
	Want []string `json:"want"`
	Kind string   `json:"kind"`
}

// Path returns the absolute path of the repository's testdata/recall
// directory, found from this package's source file or, when the binary was
// built with -trimpath, by walking up from the working directory to the
// module's go.mod. It returns "" when neither finds it.
func Path() string {
	if _, here, _, ok := runtime.Caller(0); ok && filepath.IsAbs(here) {
		return filepath.Join(filepath.Dir(here), "..", "..", "testdata", "recall")
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/memfs/memfs\n")) {
			return filepath.Join(dir, "testdata", "recall")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Load reads the set in dir (normally [Path]): every *.md file under
// dir/notes, sorted by key, and dir/questions.jsonl. It fails on a question
// line that is not one JSON object with exactly the fields q, want and kind,
// on an empty question or want, on an unknown kind, and on a want that
// names no note.
func Load(dir string) (Set, error) {
	var s Set
	root := filepath.Join(dir, "notes")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		s.Notes = append(s.Notes, Note{Key: filepath.ToSlash(rel), Value: string(b)})
		return nil
	})
	if err != nil {
		return Set{}, fmt.Errorf("devset: read notes: %w", err)
	}
	slices.SortFunc(s.Notes, func(a, b Note) int { return strings.Compare(a.Key, b.Key) })
	keys := make(map[string]bool, len(s.Notes))
	for _, n := range s.Notes {
		keys[n.Key] = true
	}

	qpath := filepath.Join(dir, "questions.jsonl")
	b, err := os.ReadFile(qpath)
	if err != nil {
		return Set{}, fmt.Errorf("devset: read questions: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		q, err := parseQuestion(text, keys)
		if err != nil {
			return Set{}, fmt.Errorf("devset: %s:%d: %w", qpath, line, err)
		}
		s.Questions = append(s.Questions, q)
	}
	if err := sc.Err(); err != nil {
		return Set{}, fmt.Errorf("devset: read questions: %w", err)
	}
	return s, nil
}

// parseQuestion decodes and checks one line of questions.jsonl against the
// set of note keys.
func parseQuestion(line []byte, keys map[string]bool) (Question, error) {
	var q Question
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return Question{}, err
	}
	if dec.More() {
		return Question{}, fmt.Errorf("more than one JSON value on the line")
	}
	switch {
	case strings.TrimSpace(q.Q) == "":
		return Question{}, fmt.Errorf("empty question")
	case len(q.Want) == 0:
		return Question{}, fmt.Errorf("question %q wants no note", q.Q)
	case q.Kind != KindParaphrase && q.Kind != KindKeyword:
		return Question{}, fmt.Errorf("question %q: unknown kind %q", q.Q, q.Kind)
	}
	for _, w := range q.Want {
		if !keys[w] {
			return Question{}, fmt.Errorf("question %q wants %q, which is no note", q.Q, w)
		}
	}
	return q, nil
}

// OfKind returns the questions of qs whose kind is kind, in order.
func OfKind(qs []Question, kind string) []Question {
	var out []Question
	for _, q := range qs {
		if q.Kind == kind {
			out = append(out, q)
		}
	}
	return out
}
