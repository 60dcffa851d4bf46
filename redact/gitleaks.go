package redact

import (
	_ "embed"
	"fmt"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

//go:generate go run gen_gitleaks.go

// gitleaksTOML is gitleaks' default rule set, checked in as gitleaks.toml
// (the module's config/gitleaks.toml under a header with its license and
// version) rather than imported: gitleaks' config package links viper,
// zerolog and some fifty other packages to hand out this one string.
//
//go:embed gitleaks.toml
var gitleaksTOML string

// gitleaksConfig is the part of gitleaks' TOML configuration that memfs
// reads: rules and allowlists. Its field names are gitleaks' own.
type gitleaksConfig struct {
	Allowlist  *gitleaksAllowlist  `toml:"allowlist"` // the older, single global allowlist
	Allowlists []gitleaksAllowlist `toml:"allowlists"`
	Rules      []gitleaksRule      `toml:"rules"`
}

type gitleaksRule struct {
	ID          string              `toml:"id"`
	Regex       string              `toml:"regex"`
	Path        string              `toml:"path"`
	SecretGroup int                 `toml:"secretGroup"`
	Entropy     float64             `toml:"entropy"`
	Keywords    []string            `toml:"keywords"`
	Allowlist   *gitleaksAllowlist  `toml:"allowlist"` // the older, single rule allowlist
	Allowlists  []gitleaksAllowlist `toml:"allowlists"`
	Required    []struct {
		ID string `toml:"id"`
	} `toml:"required"`
	SkipReport bool `toml:"skipReport"`
}

type gitleaksAllowlist struct {
	Condition   string   `toml:"condition"`   // "OR" (default) or "AND"
	RegexTarget string   `toml:"regexTarget"` // "" (the secret), "match" or "line"
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
	TargetRules []string `toml:"targetRules"` // a global allowlist for these rules only
}

// loadGitleaks parses gitleaks' default configuration (gitleaksTOML).
func loadGitleaks() (gitleaksConfig, error) {
	var c gitleaksConfig
	if err := toml.Unmarshal([]byte(gitleaksTOML), &c); err != nil {
		return c, fmt.Errorf("redact: gitleaks default config: %w", err)
	}
	return c, nil
}

// sameAs maps gitleaks rules that find a kind of secret memfs has its own
// rule for to memfs's id: their findings carry that id, so that markers,
// tests and users' configs keep naming what they named before.
var sameAs = map[string]string{
	"aws-access-token":                   "aws-access-key-id",
	"github-pat":                         "github-token",
	"github-oauth":                       "github-token",
	"github-app-token":                   "github-token",
	"github-refresh-token":               "github-token",
	"gitlab-pat":                         "gitlab-token",
	"gitlab-pat-routable":                "gitlab-token",
	"gitlab-ptt":                         "gitlab-token",
	"gitlab-deploy-token":                "gitlab-token",
	"gitlab-runner-authentication-token": "gitlab-token",
	"gitlab-runner-authentication-token-routable": "gitlab-token",
	"npm-access-token":                            "npm-token",
	"pypi-upload-token":                           "pypi-token",
	"slack-bot-token":                             "slack-token",
	"slack-user-token":                            "slack-token",
	"slack-legacy-bot-token":                      "slack-token",
	"slack-legacy-token":                          "slack-token",
	"slack-legacy-workspace-token":                "slack-token",
	"slack-config-access-token":                   "slack-token",
	"slack-config-refresh-token":                  "slack-token",
	"slack-webhook-url":                           "slack-webhook",
	"sendgrid-api-token":                          "sendgrid-api-key",
	"huggingface-access-token":                    "huggingface-token",
	"telegram-bot-api-token":                      "telegram-bot-token",
	"stripe-access-token":                         "stripe-secret-key",
	"anthropic-admin-api-key":                     "anthropic-api-key",
	"generic-api-key":                             "generic-secret",
}

// replaced lists gitleaks rules that memfs does not take, with the reason.
var replaced = map[string]string{
	"private-key": "memfs's own private-key rule finds the same PEM blocks; it is the only rule " +
		"that spans lines, and ContextStart knows its exact shape",
	"kubernetes-secret-yaml": "it matches across the lines of a YAML document (kind: Secret ... data:), " +
		"which memfs's per-line engine does not see",
}

// skipReason says why gitleaks rule g cannot run in memfs's engine, or "".
func skipReason(g gitleaksRule) string {
	if why, ok := replaced[g.ID]; ok {
		return why
	}
	switch {
	case g.Regex == "":
		return "a path-only rule: it flags a file by its name, not by its content"
	case len(g.Required) > 0:
		return "a composite rule: its required parts are other rules' findings nearby"
	case g.SkipReport:
		return "a part of composite rules, not reported by itself"
	case len(g.Keywords) == 0:
		return "no keywords: memfs runs a rule only on lines that hold one"
	}
	for _, k := range g.Keywords {
		if len(k) < 2 {
			return fmt.Sprintf("keyword %q is shorter than 2 bytes", k)
		}
	}
	return ""
}

// gitleaksRules converts the gitleaks configuration into memfs rules and
// its global allowlists. Rules that cannot run here are left out (see
// skipReason); rules named in sameAs report under memfs's id.
func gitleaksRules(gc gitleaksConfig) ([]*compiled, []*allowlist, map[string][]*allowlist) {
	var global []*allowlist
	targeted := map[string][]*allowlist{}
	lists := gc.Allowlists
	if gc.Allowlist != nil {
		lists = append([]gitleaksAllowlist{*gc.Allowlist}, lists...)
	}
	for _, a := range lists {
		al := newAllowlist(a)
		if len(a.TargetRules) == 0 {
			global = append(global, al)
		}
		for _, id := range a.TargetRules {
			targeted[id] = append(targeted[id], al)
		}
	}
	// byID holds the allowlists of each reported id, for memfs's own rule
	// of that id (see New).
	byID := map[string][]*allowlist{}
	var out []*compiled
	for _, g := range gc.Rules {
		if skipReason(g) != "" {
			continue
		}
		id := g.ID
		if m, ok := sameAs[g.ID]; ok {
			id = m
		}
		c := &compiled{
			id: id, name: g.ID, pattern: g.Regex, path: g.Path, builtin: true,
			gitleaks: true, group: g.SecretGroup, minEntropy: g.Entropy,
			tier: tierGitleaks,
		}
		if id == "generic-secret" {
			c.tier = tierGitleaksGeneric
		}
		for _, k := range g.Keywords {
			c.keywords = append(c.keywords, []byte(strings.ToLower(k)))
		}
		ls := g.Allowlists
		if g.Allowlist != nil {
			ls = append([]gitleaksAllowlist{*g.Allowlist}, ls...)
		}
		for _, a := range ls {
			c.allow = append(c.allow, newAllowlist(a))
		}
		c.allow = append(c.allow, targeted[g.ID]...)
		byID[id] = append(byID[id], c.allow...)
		out = append(out, c)
	}
	return out, global, byID
}
