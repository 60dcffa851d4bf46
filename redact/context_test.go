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

// A private-key block that no END closes (a key cut short, or one still
// being appended) is redacted over its PEM lines, and ContextStart keeps
// the contract around it.
func TestOpenPrivateKeyBlock(t *testing.T) {
	r := newT(t, Config{})
	body := "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpI\nfQ6jFh2qC8rY4wW3bT5nK7vL9pX1sD3mQ8zR2uE6yH0jG4cV7"
	for _, tt := range []struct{ in, want string }{
		{"key:\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n", "key:\n[REDACTED:private-key]\n"},
		{"key:\n-----BEGIN RSA PRIVATE KEY-----\n" + body, "key:\n[REDACTED:private-key]"},
		{"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n" + body + "\n\nThat was the old key.\n",
			"[REDACTED:private-key]\n\nThat was the old key.\n"},
		{"-----BEGIN RSA PRIVATE KEY-----\n", "-----BEGIN RSA PRIVATE KEY-----\n"},
		{"-----BEGIN RSA PRIVATE KEY-----\nis how the file starts, then base64.\n", "-----BEGIN RSA PRIVATE KEY-----\nis how the file starts, then base64.\n"},
		{"The header -----BEGIN RSA PRIVATE KEY----- starts a key.\n", "The header -----BEGIN RSA PRIVATE KEY----- starts a key.\n"},
	} {
		if got, f := r.Redact("k", []byte(tt.in)); string(got) != tt.want {
			t.Errorf("%q: got %q (%v), want %q", tt.in, got, f, tt.want)
		}
	}
	v := []byte("notes\n-----BEGIN EC PRIVATE KEY-----\n" + body + "\nmore notes\nand more\n")
	whole, _ := r.Redact("k", v)
	for off := 0; off <= len(v); off++ {
		s := r.ContextStart(v, off)
		a, _ := r.Redact("k", v[:s])
		b, _ := r.Redact("k", v[s:])
		if got := append(bytes.Clone(a), b...); !bytes.Equal(got, whole) {
			t.Fatalf("split at %d (offset %d): %q + %q, want %q", s, off, a, b, whole)
		}
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
