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

// readCorpus reads a corpus file of testdata/secrets (see secrets.txt).
func readCorpus(t testing.TB, name string) []corpusLine {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "secrets", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
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
		} else if name == "secrets.txt" {
			t.Fatalf("corpus line without «secret»: %q", l)
		}
		c.line = l
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// minLeak is the shortest piece of a secret that counts as a leak.
const minLeak = 12

// leaked returns a piece of secret that survives in out, or "". PEM
// armour lines ("-----BEGIN ...") are no secret; their base64 is.
func leaked(out []byte, secret string) string {
	for line := range strings.SplitSeq(secret, "\n") {
		if strings.HasPrefix(line, "-----") {
			continue
		}
		if len(line) < minLeak {
			if bytes.Contains(out, []byte(line)) {
				return line
			}
			continue
		}
		for i := 0; i+minLeak <= len(line); i++ {
			if bytes.Contains(out, []byte(line[i:i+minLeak])) {
				return line[i : i+minLeak]
			}
		}
	}
	return ""
}

// The corpus: every fake secret is caught, under the id its line names,
// and no look-alike is touched.
func TestCorpus(t *testing.T) {
	r := newT(t, Config{})
	secrets := readCorpus(t, "secrets.txt")
	kinds := map[string]int{}
	for _, c := range secrets {
		kinds[c.rule]++
		out, findings := r.Redact("memory/notes.md", []byte(c.line))
		if piece := leaked(out, c.secret); piece != "" {
			t.Errorf("%s: %q survives: got %q (%v)", c.rule, piece, out, findings)
		} else if !bytes.Contains(out, []byte("[REDACTED:"+c.rule+"]")) {
			t.Errorf("%s: redacted under another id: %q (%v)", c.rule, out, findings)
		}
	}
	lookalikes := readCorpus(t, "lookalikes.txt")
	for _, c := range lookalikes {
		if out, findings := r.Redact("memory/notes.md", []byte(c.line)); string(out) != c.line || len(findings) > 0 {
			t.Errorf("false positive: %q -> %q (%v)", c.line, out, findings)
		}
	}
	t.Logf("%d secrets of %d kinds caught, %d look-alikes untouched", len(secrets), len(kinds), len(lookalikes))
	if len(secrets) < 150 || len(kinds) < 60 || len(lookalikes) < 100 {
		t.Errorf("corpus too small: %d secrets of %d kinds, %d look-alikes; want at least 150 of 60, and 100",
			len(secrets), len(kinds), len(lookalikes))
	}
	for _, pem := range []string{"RSA", "EC", "OPENSSH"} {
		found := false
		for _, c := range secrets {
			found = found || strings.HasPrefix(c.secret, "-----BEGIN "+pem+" PRIVATE KEY-----\n")
		}
		if !found {
			t.Errorf("the corpus has no multi-line %s private key", pem)
		}
	}
}

func TestWholeCorpusAsOneNote(t *testing.T) {
	r := newT(t, Config{})
	note, secrets := corpusNote(t)
	out, findings := r.Redact("k", []byte(note))
	// The look-alikes stay, and some hold a secret's prefix ("AGE-SECRET-KEY-1").
	rest := out[bytes.Index(out, []byte(readCorpus(t, "lookalikes.txt")[0].line)):]
	secretsPart := out[:len(out)-len(rest)]
	for _, s := range secrets {
		if piece := leaked(secretsPart, s); piece != "" {
			t.Errorf("a piece of a secret survives in a long note: %q", piece)
		}
	}
	if len(findings) < len(secrets) {
		t.Errorf("%d findings for %d secrets", len(findings), len(secrets))
	}
	// Lines and columns point at the secrets in the original.
	lines := strings.Split(note, "\n")
	for _, f := range findings {
		if f.Line < 1 || f.Line > len(lines) || f.Column < 1 || f.Column > len(lines[f.Line-1])+1 {
			t.Fatalf("finding %v out of range", f)
		}
		if got := lines[f.Line-1][f.Column-1:]; !strings.HasPrefix(note[f.Start:], got[:min(len(got), 8)]) {
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

// Formats that memfs's own rules missed, from gitleaks' rule set, and the
// look-alikes and URLs that the generic rule got wrong.
func TestCoverageAndPrecision(t *testing.T) {
	r := newT(t, Config{})
	for _, tt := range []struct {
		name, in, want string
	}{
		{"shopify access token", "shopify admin token 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",
			"shopify admin token [REDACTED:shopify-access-token]"},
		{"shopify shared secret", "secret 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 here",
			"secret [REDACTED:shopify-shared-secret] here"},
		{"shopify custom app", "token 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", "token [REDACTED:shopify-custom-access-token]"},
		{"shopify private app", "password 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", "password [REDACTED:shopify-private-app-access-token]"},
		{"digitalocean pat", "doctl auth init -t dop_v1_4c9d0e2f7a1b3c5d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d",
			"doctl auth init -t [REDACTED:digitalocean-pat]"},
		{"digitalocean oauth", "oauth: doo_v1_9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b",
			"oauth: [REDACTED:digitalocean-access-token]"},
		{"digitalocean refresh", "refresh dor_v1_0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
			"refresh [REDACTED:digitalocean-refresh-token]"},
		{"age identity", "# public key: age1...\nAGE-SECRET-KEY-1" + strings.Repeat("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 2)[:58],
			"# public key: age1...\n[REDACTED:age-secret-key]"},
		{"twilio secret after its key id", "twilio SK3f9a2b7c1d8e4f6a0b5c9d2e7f1a3b8c / secret: q7Rz2LmX9vTb4NcW8hKp3JsY6dFg1QaE",
			"twilio [REDACTED:twilio-api-key] / secret: [REDACTED:twilio-api-secret]"},
		{"twilio key:secret pair", "SK3f9a2b7c1d8e4f6a0b5c9d2e7f1a3b8c:q7Rz2LmX9vTb4NcW8hKp3JsY6dFg1QaE",
			"[REDACTED:twilio-api-key]:[REDACTED:twilio-api-secret]"},
		{"twilio secret in prose", "twilio key SK3f9a2b7c1d8e4f6a0b5c9d2e7f1a3b8c, secret q7Rz2LmX9vTb4NcW8hKp3JsY6dFg1QaE",
			"twilio key [REDACTED:twilio-api-key], secret [REDACTED:twilio-api-secret]"},
		{"a secret's name", "secret_name: prod/payments/stripe", "secret_name: prod/payments/stripe"},
		{"gitlab clone URL", "git clone https://oauth2:glpat-Xa9bQ2cR7dS4eT1fU8gV@gitlab.com/team/repo.git",
			"git clone https://oauth2:[REDACTED:gitlab-token]@gitlab.com/team/repo.git"},
		{"gitlab remote", "url = https://oauth2:glpat-Xa9bQ2cR7dS4eT1fU8gV@gitlab.com/team/repo.git",
			"url = https://oauth2:[REDACTED:gitlab-token]@gitlab.com/team/repo.git"},
		{"token as the URL's user", "https://ghp_Zq8mR2xL7bW4nT0vK5yJ1cH6dF3sP9gA2eU7:x-oauth-basic@github.com/org/repo",
			"https://[REDACTED:github-token]:[REDACTED:url-credentials]@github.com/org/repo"},
		{"gitleaks URL rule keeps the user", "source https://0a1b2c3d:4e5f6a7b@gems.contribsys.com/",
			"source https://0a1b2c3d:[REDACTED:sidekiq-sensitive-url]@gems.contribsys.com/"},
		{"password after a URL", "https://user:Ab3dE5fG7hJ9kL1m@example.com/x password=Zq8mR2xL7bW4nT0vK5yJ",
			"https://user:[REDACTED:url-credentials]@example.com/x password=[REDACTED:generic-secret]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, f := r.Redact("memory/notes.md", []byte(tt.in)); string(got) != tt.want {
				t.Errorf("got %q (%v), want %q", got, f, tt.want)
			}
		})
	}
}

// Where rules find overlapping spans, one marker covers them all, named
// after memfs's rule where memfs has one.
func TestOverlapsMergeUnderOneID(t *testing.T) {
	r := newT(t, Config{})
	for _, tt := range []struct{ in, want string }{
		// github-token, gitleaks' github-pat, generic-secret, generic-api-key.
		{"GITHUB_TOKEN=ghp_Zq8mR2xL7bW4nT0vK5yJ1cH6dF3sP9gA2eU7", "GITHUB_TOKEN=[REDACTED:github-token]"},
		// aws-access-key-id and gitleaks' aws-access-token.
		{"key AKIAQ3EGXP7ZLRK2MV5N.", "key [REDACTED:aws-access-key-id]."},
		// stripe-secret-key and gitleaks' stripe-access-token.
		{`stripe.api_key = "sk_live_4eC39HqLyjWDarjtT1zdp7dcXyZ9"`, `stripe.api_key = "[REDACTED:stripe-secret-key]"`},
		// A specific format names a value better than the generic rule.
		{"SHOPIFY_API_SECRET=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", "SHOPIFY_API_SECRET=[REDACTED:shopify-shared-secret]"},
	} {
		got, f := r.Redact("k", []byte(tt.in))
		if string(got) != tt.want {
			t.Errorf("got %q (%v), want %q", got, f, tt.want)
		}
		if strings.Count(string(got), "[REDACTED:") != len(f) {
			t.Errorf("%q: %d markers, %d findings", got, strings.Count(string(got), "[REDACTED:"), len(f))
		}
	}
}

// A marker never matches a rule: redaction is idempotent. Every id, in
// the places a secret stands, next to every keyword of its rules.
func TestMarkersNeverMatch(t *testing.T) {
	r := newT(t, Config{})
	ids := map[string][]string{}
	for _, c := range r.rules {
		for _, k := range c.keywords {
			ids[c.id] = append(ids[c.id], string(k))
		}
	}
	for id, kws := range ids {
		m := "[REDACTED:" + id + "]"
		contexts := []string{m, m + m, "x " + m + " y", `"` + m + `"`, "key = " + m, "token: " + m, "password=" + m,
			"https://user:" + m + "@example.com/x", m + ":" + m, "Authorization: Bearer " + m, "export " + strings.ToUpper(id) + "=" + m}
		for _, k := range kws {
			contexts = append(contexts, k+" = "+m, k+": "+m, k+m, `"`+k+`": "`+m+`"`)
		}
		for _, in := range contexts {
			if out, f := r.Redact("k", []byte(in)); len(f) != 0 {
				t.Errorf("%q -> %q (%v)", in, out, f)
			}
		}
	}
	t.Logf("%d ids", len(ids))
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

// A disable entry names a rule that exists: memfs's, gitleaks' (reported
// under a memfs id or not, or left out), a user rule, env, or "*".
func TestDisableNamesKnownRules(t *testing.T) {
	for _, id := range []string{"github-token", "github-pat", "shopify-access-token", "pkcs12-file", "private-key",
		"generic-secret", "generic-api-key", "env", "env-my_token", "*", "ticket"} {
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
	// Disabling memfs's id switches off the gitleaks rules reported under it.
	r := newT(t, Config{Disabled: []PrefixRules{{Prefix: "docs/", Rules: []string{"github-token", "generic-secret"}}}})
	in := "GITHUB_TOKEN=ghp_Zq8mR2xL7bW4nT0vK5yJ1cH6dF3sP9gA2eU7"
	if out, f := r.Redact("docs/github.md", []byte(in)); string(out) != in {
		t.Errorf("github-token off: %q (%v)", out, f)
	}
}

// gitleaks rules with a path apply only to keys that match it.
func TestRulePathsMatchKeys(t *testing.T) {
	r := newT(t, Config{})
	in := `<add key="ClearTextPassword" value="S3cretNuGetPw!" />`
	if out, _ := r.Redact("memory/notes.md", []byte(in)); string(out) != in {
		t.Errorf("nuget rule outside nuget.config: %q", out)
	}
	if out, _ := r.Redact("repo/NuGet.Config", []byte(in)); string(out) == in {
		t.Errorf("nuget rule in nuget.config: not redacted")
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
				if out, _ := r.Redact("k", []byte(c.line)); leaked(out, c.secret) != "" {
					t.Errorf("missed under concurrency")
				}
			}
		})
	}
	wg.Wait()
}
