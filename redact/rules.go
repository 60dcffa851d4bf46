package redact

// Tiers order the rules when findings overlap: the merged span is
// reported under the id of the first rule in this order (then in list
// order). Where memfs has a rule for a kind, gitleaks' rules of that kind
// report under memfs's id anyway (sameAs); a specific format names a
// secret better than a generic rule that took it for a value.
const (
	tierUser            = iota // the config's own rules
	tierMemfs                  // memfs's own specific rules, in list order
	tierGitleaks               // gitleaks' rules of a specific format
	tierEnv                    // values of secret-named environment variables
	tierMemfsGeneric           // url-credentials, generic-secret
	tierGitleaksGeneric        // gitleaks' generic-api-key
)

// memfsTier returns the tier of memfs's own rule id.
func memfsTier(id string) int {
	if id == "url-credentials" || id == "generic-secret" {
		return tierMemfsGeneric
	}
	return tierMemfs
}

// builtinAllow holds allowlists, in gitleaks' form, for memfs's own
// rules ("*": for every built-in rule, as gitleaks' global ones), made
// for look-alikes of the corpus: documented example credentials (AWS's
// AKIAIOSFODNN7EXAMPLE and wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY), and
// a generic "..._file: path" that says where a secret is, not what. (Each
// memfs rule also takes the regexes of the gitleaks allowlists of its
// id: see New.)
var builtinAllow = map[string][]gitleaksAllowlist{
	"*":              {{Regexes: []string{`EXAMPLE(?:KEY)?$`}}},
	"generic-secret": {{RegexTarget: "match", Regexes: []string{`(?i)[_.-](?:file|path|dir)["']?\s*(?::=|[:=,]|=>)`}}},
}

// builtin is the rule set memfs keeps itself: well-known token formats,
// each with the literal keywords that must be on the line, and generic
// assignments filtered by entropy. A rule's secret is its "secret"
// submatch, or the whole match. gitleaks' rules (gitleaks.go) come in
// addition.
var builtin = []Rule{
	// Cloud providers.
	{ID: "aws-access-key-id", Keywords: []string{"akia", "asia", "abia", "acca"},
		Pattern: `\b(?P<secret>(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b`},
	{ID: "aws-secret-access-key", Keywords: []string{"aws"},
		Pattern: `(?i)aws[\w.-]{0,24}?(?:secret|private)[\w.-]{0,24}?["']?\s*[:=]+\s*["']?(?P<secret>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)`},
	{ID: "gcp-api-key", Keywords: []string{"aiza"},
		Pattern: `\b(?P<secret>AIza[0-9A-Za-z_\-]{35})(?:[^0-9A-Za-z_\-]|$)`},
	{ID: "google-oauth-client-secret", Keywords: []string{"gocspx-"},
		Pattern: `\b(?P<secret>GOCSPX-[A-Za-z0-9_\-]{28})`},
	{ID: "azure-storage-key", Keywords: []string{"accountkey="},
		Pattern: `(?i)accountkey=(?P<secret>[A-Za-z0-9+/]{86}==)`},
	// Version control and CI.
	{ID: "github-token", Keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
		Pattern: `\b(?P<secret>gh[pousr]_[A-Za-z0-9]{36,255})\b`},
	{ID: "github-fine-grained-pat", Keywords: []string{"github_pat_"},
		Pattern: `\b(?P<secret>github_pat_[A-Za-z0-9_]{82})\b`},
	{ID: "gitlab-token", Keywords: []string{"glpat-", "glrt-", "gldt-", "glptt-"},
		Pattern: `\b(?P<secret>gl(?:pat|rt|dt|ptt)-[A-Za-z0-9_\-]{20,64})\b`},
	{ID: "npm-token", Keywords: []string{"npm_"},
		Pattern: `\b(?P<secret>npm_[A-Za-z0-9]{36})\b`},
	{ID: "pypi-token", Keywords: []string{"pypi-ageichlwas5vcmc"},
		Pattern: `\b(?P<secret>pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})`},
	{ID: "circleci-token", Keywords: []string{"circle"},
		Pattern: `(?i)circle[\w.-]{0,16}?token["']?\s*[:=]+\s*["']?(?P<secret>[0-9a-f]{40})\b`},
	// Chat and bots.
	{ID: "slack-token", Keywords: []string{"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-"},
		Pattern: `\b(?P<secret>xox[bpares](?:-[0-9]{1,16}){0,3}-[A-Za-z0-9-]{10,})\b`},
	{ID: "slack-webhook", Keywords: []string{"hooks.slack.com"},
		Pattern: `(?P<secret>https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{30,})`},
	{ID: "discord-webhook", Keywords: []string{"discord"},
		Pattern: `(?P<secret>https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_\-]{60,70})`},
	{ID: "discord-bot-token", Keywords: []string{"discord"},
		Pattern: `(?i)discord[\w.-]{0,20}?["']?\s*[:=]+\s*["']?(?P<secret>[MNOmno][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40})`},
	{ID: "telegram-bot-token", Keywords: []string{":aa"},
		Pattern: `\b(?P<secret>[0-9]{8,10}:AA[0-9A-Za-z_\-]{33})(?:[^0-9A-Za-z_\-]|$)`},
	// Payments and other SaaS.
	{ID: "stripe-secret-key", Keywords: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"},
		Pattern: `\b(?P<secret>[sr]k_(?:live|test)_[0-9A-Za-z]{24,99})\b`},
	{ID: "sendgrid-api-key", Keywords: []string{"sg."},
		Pattern: `\b(?P<secret>SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})`},
	{ID: "twilio-api-key", Keywords: []string{"SK"}, CaseSensitive: true,
		Pattern: `\b(?P<secret>SK[0-9a-f]{32})\b`},
	// A Twilio API key's secret (32 letters and digits) written after its
	// SK id: "SK... / secret: ...", "SK...:...".
	{ID: "twilio-api-secret", Keywords: []string{"SK"}, CaseSensitive: true, MinEntropy: 3,
		Pattern: `\bSK[0-9a-fA-F]{32}\b[^A-Za-z0-9\n]{1,4}(?:[^\n]{0,30}?\b(?i:secret|auth[_ ]?token|token)\b[^A-Za-z0-9\n]{1,4})?(?P<secret>[A-Za-z0-9]{32})\b`},
	// LLM APIs.
	{ID: "anthropic-api-key", Keywords: []string{"sk-ant-"},
		Pattern: `\b(?P<secret>sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_\-]{80,120})`},
	{ID: "openai-api-key", Keywords: []string{"sk-"},
		Pattern: `\b(?P<secret>sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,200}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{48}))(?:[^A-Za-z0-9_\-]|$)`},
	{ID: "huggingface-token", Keywords: []string{"hf_"},
		Pattern: `\b(?P<secret>hf_[A-Za-z0-9]{34,40})\b`},
	{ID: "groq-api-key", Keywords: []string{"gsk_"},
		Pattern: `\b(?P<secret>gsk_[A-Za-z0-9]{52})\b`},
	// Keys, tokens and credentials in general shapes.
	{ID: "private-key", Keywords: []string{"private key"},
		Pattern: `(?s)(?P<secret>-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.+?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----)`},
	{ID: "jwt", Keywords: []string{"eyj"},
		Pattern: `\b(?P<secret>eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,})`},
	{ID: "url-credentials", Keywords: []string{"://"},
		Pattern: `\b[a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^\s:/@"'<>]{1,64}:(?P<secret>[^\s@/"'<>\[\]]{3,128})@[A-Za-z0-9.\-\[\]]+`},
	{ID: "generic-secret", Keywords: []string{"secret", "token", "password", "passwd", "pwd", "api_key", "apikey", "api-key",
		"access_key", "access-key", "accesskey", "auth", "credential"},
		MinEntropy: 3.5,
		Pattern:    `(?i)(?:secret|token|passw(?:or)?d|pwd|api[_\-]?key|access[_\-]?key|auth|credential)[\w.\-]{0,20}["']?\s*(?::=|[:=,]|=>)\s*["']?(?P<secret>[A-Za-z0-9+/=_\-.~!@#$%^&*]{16,})(?:["'\s,;]|$)`},
}
