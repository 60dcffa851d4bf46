package redact

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ContextStart's contract, at every offset of the corpus: with s =
// ContextStart(v, off), Redact(v) is Redact(v[:s]) followed by
// Redact(v[s:]). Every rule but private-key matches within a line, and
// ContextStart knows the private-key blocks.
func TestContextStartContract(t *testing.T) {
	r := newT(t, Config{})
	note, _ := corpusNote(t)
	values := map[string][]byte{"the corpus as a note": []byte(note)}
	for _, name := range []string{"secrets.txt", "lookalikes.txt"} {
		raw, err := os.ReadFile(filepath.Join("..", "testdata", "secrets", name))
		if err != nil {
			t.Fatal(err)
		}
		values[name] = raw
	}
	for name, v := range values {
		whole, _ := r.Redact("k", v)
		starts := map[int]bool{}
		for off := 0; off <= len(v); off++ {
			starts[r.ContextStart(v, off)] = true
		}
		for s := range starts {
			if raceEnabled && s%5 != 0 && !bytes.HasPrefix(v[s:], []byte("-----")) {
				continue // a sample: every start of a key's lines, a fifth of the others
			}
			a, _ := r.Redact("k", v[:s])
			b, _ := r.Redact("k", v[s:])
			if got := append(bytes.Clone(a), b...); !bytes.Equal(got, whole) {
				t.Errorf("%s split at %d (line %d): the halves redact differently from the whole",
					name, s, bytes.Count(v[:s], []byte("\n"))+1)
			}
		}
		t.Logf("%s: %d bytes, %d context starts", name, len(v), len(starts))
	}
}

// corpusNote returns the corpus, secrets then look-alikes, as one note,
// and its secrets.
func corpusNote(t testing.TB) (string, []string) {
	var note strings.Builder
	var secrets []string
	for _, c := range readCorpus(t, "secrets.txt") {
		note.WriteString(c.line + "\n")
		secrets = append(secrets, c.secret)
	}
	for _, c := range readCorpus(t, "lookalikes.txt") {
		note.WriteString(c.line + "\n")
	}
	return note.String(), secrets
}
