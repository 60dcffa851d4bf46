// Package testcorpus reads the project's corpus of fake secrets
// (testdata/secrets/secrets.txt) for tests in any package: a line
// RULE<TAB>TEXT, the secret between « and », a multi-line secret's
// newlines written \n. None of them is a real credential.
//
// # Concurrency
//
// It keeps no state; its functions read the corpus file at each call and
// are safe for concurrent use (parallel tests of several packages).
package testcorpus

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Secret is one fake secret of the corpus in its line of text.
type Secret struct {
	Kind                  string // the rule that should find it
	Prefix, Value, Suffix string // the line: Prefix + Value + Suffix
}

// Secrets reads the corpus.
func Secrets() ([]Secret, error) {
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		return nil, fmt.Errorf("testcorpus: cannot locate the module")
	}
	path := filepath.Join(filepath.Dir(here), "..", "..", "testdata", "secrets", "secrets.txt")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Secret
	for line := range strings.SplitSeq(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, text, ok := strings.Cut(line, "\t")
		pre, rest, ok2 := strings.Cut(text, "«")
		val, suf, ok3 := strings.Cut(rest, "»")
		if !ok || !ok2 || !ok3 {
			return nil, fmt.Errorf("testcorpus: line not RULE<TAB>...«SECRET»...: %q", line)
		}
		un := func(s string) string { return strings.ReplaceAll(s, `\n`, "\n") }
		out = append(out, Secret{Kind: kind, Prefix: un(pre), Value: un(val), Suffix: un(suf)})
	}
	return out, nil
}

// Kinds is the number of distinct kinds among secrets.
func Kinds(secrets []Secret) int {
	kinds := map[string]bool{}
	for _, s := range secrets {
		kinds[s.Kind] = true
	}
	return len(kinds)
}
