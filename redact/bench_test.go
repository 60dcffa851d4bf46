package redact

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// mixed returns about n bytes of markdown notes and Go code, with a token
// every hundred blocks, like an agent's memory.
func mixed(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	md := "# Notes on the project\n\nThe build uses `go test ./...` and the deploy script reads the config from env.\n" +
		"- remember: the password for staging is rotated weekly, ask before using the token API\n"
	code := "func handler(w http.ResponseWriter, r *http.Request) {\n\tkey := r.URL.Query().Get(\"key\")\n" +
		"\tif err := db.Get(ctx, key); err != nil {\n\t\treturn fmt.Errorf(\"get %s: %w\", key, err)\n\t}\n}\n"
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i%2 == 0 {
			b.WriteString(md)
		} else {
			b.WriteString(code)
		}
		if i%100 == 0 {
			fmt.Fprintf(&b, "export GITHUB_TOKEN=ghp_%036d\n", rng.Uint64())
		}
	}
	return []byte(b.String())
}

// BenchmarkRedact: throughput on 1 MiB of mixed notes and code.
func BenchmarkRedact(b *testing.B) {
	r := newT(b, Config{})
	v := mixed(1 << 20)
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		r.Redact("memory/notes.md", v)
	}
}

// BenchmarkRedactSmallFiles: 10,000 note-like values of 1-4 KiB, the
// redaction part of flushing 10,000 small files.
func BenchmarkRedactSmallFiles(b *testing.B) {
	r := newT(b, Config{})
	base := mixed(4 << 10)
	vals := make([][]byte, 10_000)
	total := 0
	for i := range vals {
		vals[i] = base[:1024+i%3072]
		total += len(vals[i])
	}
	b.SetBytes(int64(total))
	for b.Loop() {
		for _, v := range vals {
			r.Redact("memory/x.md", v)
		}
	}
}

// BenchmarkNew: building a Redactor, as each memfs command does: reading
// gitleaks' rules and indexing every keyword. Expressions compile later,
// at a rule's first keyword (BenchmarkCompileAll).
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(Config{Env: []string{}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileAll: the one-time cost of compiling every rule, which a
// Redactor pays only for the rules whose keywords it meets.
func BenchmarkCompileAll(b *testing.B) {
	for b.Loop() {
		r, err := New(Config{Env: []string{}})
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range r.rules {
			c.program()
		}
	}
}

// BenchmarkMaskBinary: 64 MiB of random bytes with a few NULs and no
// secret, like a database or an archive.
func BenchmarkMaskBinary(b *testing.B) {
	r := newT(b, Config{})
	v := make([]byte, 64<<20)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < len(v); i += 8 {
		binary.LittleEndian.PutUint64(v[i:], rng.Uint64())
	}
	for i := 0; i < 16; i++ {
		v[rng.IntN(8<<10)] = 0
	}
	if !IsBinary(v) {
		b.Fatal("not binary")
	}
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		if out, _ := r.Mask("assets/blob.bin", v); &out[0] != &v[0] {
			b.Fatal("random bytes held a secret")
		}
	}
}
