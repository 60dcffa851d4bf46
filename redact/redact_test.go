package redact

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func newT(t testing.TB, cfg Config) *Redactor {
	t.Helper()
	if cfg.Env == nil {
		cfg.Env = []string{} // the tests' own environment must not matter
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type corpusLine struct {
	rule, line, secret string
}

func readCorpus(t *testing.T, name string) []corpusLine {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "secrets", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		var c corpusLine
		if rule, text, ok := strings.Cut(l, "\t"); ok && name == "secrets.txt" {
			c.rule = rule
			l = text
		}
		l = strings.ReplaceAll(l, `\n`, "\n")
		if i := strings.Index(l, "«"); i >= 0 {
			j := strings.Index(l, "»")
			c.secret = l[i+len("«") : j]
			l = l[:i] + c.secret + l[j+len("»"):]
		}
		c.line = l
		out = append(out, c)
	}
	return out
}

func TestCorpusSecretsAllRedacted(t *testing.T) {
	r := newT(t, Config{})
	lines := readCorpus(t, "secrets.txt")
	kinds := map[string]int{}
	missed := 0
	for _, c := range lines {
		kinds[c.rule]++
		out, findings := r.Redact("memory/notes.md", []byte(c.line))
		ok := !bytes.Contains(out, []byte(c.secret)) && bytes.Contains(out, []byte("[REDACTED:"+c.rule+"]"))
		if !ok {
			missed++
			t.Errorf("%s not redacted as such: got %q, findings %v", c.rule, out, findings)
		}
	}
	t.Logf("secrets: %d of %d redacted, %d kinds", len(lines)-missed, len(lines), len(kinds))
	if len(lines) < 40 || len(kinds) < 15 {
		t.Fatalf("corpus too small: %d secrets of %d kinds, want at least 40 of 15", len(lines), len(kinds))
	}
}

func TestCorpusLookalikesUntouched(t *testing.T) {
	r := newT(t, Config{})
	lines := readCorpus(t, "lookalikes.txt")
	touched := 0
	for _, c := range lines {
		out, findings := r.Redact("memory/notes.md", []byte(c.line))
		if string(out) != c.line || len(findings) > 0 {
			touched++
			t.Errorf("false positive: %q -> %q (%v)", c.line, out, findings)
		}
	}
	t.Logf("look-alikes: %d of %d untouched", len(lines)-touched, len(lines))
	if len(lines) < 40 {
		t.Fatalf("only %d look-alikes, want at least 40", len(lines))
	}
}

func TestWholeCorpusAsOneNote(t *testing.T) {
	r := newT(t, Config{})
	var note strings.Builder
	var secrets []string
	for _, c := range readCorpus(t, "secrets.txt") {
		note.WriteString(c.line + "\n")
		secrets = append(secrets, c.secret)
	}
	for _, c := range readCorpus(t, "lookalikes.txt") {
		note.WriteString(c.line + "\n")
	}
	out, findings := r.Redact("k", []byte(note.String()))
	for _, s := range secrets {
		if bytes.Contains(out, []byte(s)) {
			t.Errorf("secret survived in a long note: %.20s...", s)
		}
	}
	if len(findings) != len(secrets) {
		t.Errorf("%d findings for %d secrets", len(findings), len(secrets))
	}
	// Lines and columns point at the secrets in the original.
	for _, f := range findings {
		lines := strings.Split(note.String(), "\n")
		if f.Line < 1 || f.Line > len(lines) || f.Column < 1 {
			t.Fatalf("finding %v out of range", f)
		}
		if got := lines[f.Line-1][f.Column-1:]; !strings.HasPrefix(note.String()[f.Start:], got[:min(len(got), 8)]) {
			t.Errorf("finding %v: line/column do not match the byte range", f)
		}
	}
	again, more := r.Redact("k", out)
	if !bytes.Equal(again, out) || len(more) != 0 {
		t.Errorf("redaction is not idempotent: %v", more)
	}
}

func TestGolden(t *testing.T) {
	r := newT(t, Config{})
	in, err := os.ReadFile(filepath.Join("testdata", "note.md"))
	if err != nil {
		t.Fatal(err)
	}
	out, findings := r.Redact("memory/note.md", in)
	var got bytes.Buffer
	got.Write(out)
	got.WriteString("\n--- findings ---\n")
	for _, f := range findings {
		fmt.Fprintln(&got, f)
	}
	golden := filepath.Join("testdata", "note.md.golden")
	if *update {
		os.WriteFile(golden, got.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("redacted note differs from %s (run with -update after checking):\n%s", golden, got.String())
	}
}

func TestEnvironmentSecrets(t *testing.T) {
	r := newT(t, Config{Env: []string{
		"MY_SERVICE_TOKEN=v3ry-l0ng-t0ken-value",
		"DB_PASSWORD=short", // too short to be unambiguous
		"HOME=/root/a-long-path-value",
	}})
	out, findings := r.Redact("k", []byte("token v3ry-l0ng-t0ken-value, pw short, home /root/a-long-path-value"))
	if string(out) != "token [REDACTED:env-my_service_token], pw short, home /root/a-long-path-value" {
		t.Fatalf("got %q (%v)", out, findings)
	}
	// A configurable list of names.
	r = newT(t, Config{Env: []string{"CUSTOM_THING=abcdefghijklmnop"}, EnvNames: []string{"CUSTOM_*"}})
	if out, _ := r.Redact("k", []byte("x abcdefghijklmnop")); string(out) != "x [REDACTED:env-custom_thing]" {
		t.Fatalf("custom env names: %q", out)
	}
}

func TestUserRulesAllowAndDisable(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "redact.json")
	os.WriteFile(cfgPath, []byte(`{
		"rules": [{"id": "ticket-token", "pattern": "TKT-[0-9a-f]{8}", "keywords": ["TKT-"]}],
		"allow": ["^AKIAALLOWEDEXAMPLE$"],
		"disable": [{"prefix": "skills/security/", "rules": ["jwt"]}, {"prefix": "raw/", "rules": ["*"]}]
	}`), 0o644)
	cfg, err := LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	r := newT(t, cfg)
	if out, _ := r.Redact("k", []byte("ticket TKT-0123abcd done")); string(out) != "ticket [REDACTED:ticket-token] done" {
		t.Errorf("user rule: %q", out)
	}
	if out, f := r.Redact("k", []byte("docs key AKIAALLOWEDEXAMPLE")); string(out) != "docs key AKIAALLOWEDEXAMPLE" {
		t.Errorf("allow-list: %q %v", out, f)
	}
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4eHh4eHgifQ.c2lnbmF0dXJlc2lnbmF0dXJl"
	if out, _ := r.Redact("skills/security/SKILL.md", []byte(jwt)); string(out) != jwt {
		t.Errorf("rule off under a prefix: %q", out)
	}
	if out, _ := r.Redact("memory/x.md", []byte(jwt)); string(out) != "[REDACTED:jwt]" {
		t.Errorf("rule on elsewhere: %q", out)
	}
	if out, _ := r.Redact("raw/dump.txt", []byte("TKT-0123abcd")); string(out) != "TKT-0123abcd" {
		t.Errorf("all rules off: %q", out)
	}
	os.WriteFile(cfgPath, []byte(`{"rulez": []}`), 0o644)
	if _, err := LoadConfig(cfgPath); err == nil {
		t.Error("a misspelt field was accepted")
	}
	if _, err := New(Config{Extra: []Rule{{ID: "x", Pattern: "(", Keywords: []string{"x"}}}}); err == nil {
		t.Error("a bad pattern was accepted")
	}
}

func TestCleanValueIsNotCopied(t *testing.T) {
	r := newT(t, Config{})
	v := []byte("an ordinary note about tokens in prose, nothing secret\n")
	out, f := r.Redact("k", v)
	if len(f) != 0 || &out[0] != &v[0] {
		t.Fatal("a clean value was copied or changed")
	}
}

func TestFindingNeverHoldsTheSecret(t *testing.T) {
	r := newT(t, Config{})
	secret := "ghp_" + strings.Repeat("aB3", 12)
	_, findings := r.Redact("k", []byte("token "+secret))
	if len(findings) != 1 {
		t.Fatalf("findings %v", findings)
	}
	if s := fmt.Sprintf("%v %+v %s", findings[0], findings[0], findings[0]); strings.Contains(s, secret) || strings.Contains(s, "aB3aB3") {
		t.Fatalf("a finding prints the secret: %s", s)
	}
}

func TestConcurrentUse(t *testing.T) {
	r := newT(t, Config{})
	lines := readCorpus(t, "secrets.txt")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, c := range lines {
				if out, _ := r.Redact("k", []byte(c.line)); bytes.Contains(out, []byte(c.secret)) {
					t.Errorf("missed under concurrency")
				}
			}
		})
	}
	wg.Wait()
}

// An allow entry matches a whole secret: "ghp_" used to switch every
// GitHub token off.
func TestAllowMatchesWholeSecrets(t *testing.T) {
	token := "ghp_Zq8mR2xL7bW4nT0vK5yJ1cH6dF3sP9gA2eU7"
	other := "ghp_Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
	for _, tt := range []struct {
		allow   []string
		in      string
		allowed bool
	}{
		{[]string{"ghp_"}, "token " + token, false},
		{[]string{"ghp"}, "token " + token, false},
		{[]string{token}, "token " + token, true},
		{[]string{token}, "token " + other, false},
		{[]string{"ghp_Zq8m.*"}, "token " + token, true},
		{[]string{"ghp_Zq8m.*"}, "token " + other, false},
		{[]string{"sk_live_4eC39HqLyjWDarjtT1zdp7dcXyZ9"}, "key sk_live_4eC39HqLyjWDarjtT1zdp7dcXyZ9", true},
	} {
		r := newT(t, Config{Allow: tt.allow})
		out, f := r.Redact("k", []byte(tt.in))
		if got := string(out) == tt.in; got != tt.allowed {
			t.Errorf("allow %q on %q: got %q (%v), allowed %v, want %v", tt.allow, tt.in, out, f, got, tt.allowed)
		}
	}
	for _, bad := range []string{"ghp_(", "x)|(y"} {
		if _, err := New(Config{Allow: []string{bad}}); err == nil {
			t.Errorf("allow entry %q was accepted", bad)
		}
	}
}

// A disable entry names a rule that exists: memfs's, a user rule, env, or
// "*".
func TestDisableNamesKnownRules(t *testing.T) {
	for _, id := range []string{"github-token", "private-key", "generic-secret", "env", "env-my_token", "*", "ticket"} {
		_, err := New(Config{Env: []string{}, Extra: []Rule{{ID: "ticket", Pattern: "TKT-[0-9]+", Keywords: []string{"tkt-"}}},
			Disabled: []PrefixRules{{Prefix: "x/", Rules: []string{id}}}})
		if err != nil {
			t.Errorf("disable %q: %v", id, err)
		}
	}
	_, err := New(Config{Env: []string{}, Disabled: []PrefixRules{{Prefix: "x/", Rules: []string{"github-tokn"}}}})
	if err == nil || !strings.Contains(err.Error(), `"github-tokn"`) {
		t.Errorf("an unknown rule: got %v, want an error naming it", err)
	}
}
