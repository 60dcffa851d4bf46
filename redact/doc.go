// Package redact finds secrets in memory values and replaces them before
// anything reaches disk. It is a leaf: it knows nothing of stores, sessions
// or mounts.
//
// A [Redactor] holds the rules. [Redactor.Redact] returns a text value
// with each secret replaced by a stable marker, "[REDACTED:rule-id]", and
// the findings: rule id and byte range, never the secret itself.
// [Redactor.Mask] does the same for binary values ([IsBinary]): it
// overwrites each secret in place with [MaskByte], so that size and
// offsets stay what the format expects. Text in UTF-16 or UTF-32 (a
// byte-order mark, or the NUL pattern ASCII text has in them) is binary to
// IsBinary and opaque to rules written for UTF-8: Mask also scans it as
// text, one code unit at a time, and masks each secret in place in the
// text's own encoding (Redact masks such text too: a marker would break
// it).
//
// # Rules
//
// memfs keeps a few rules of its own (rules.go): the token formats it has
// always had, private key blocks, JWTs, credentials in URLs, generic
// "name = value" assignments whose value has high entropy, and a Twilio
// key's secret written after its SK id. On top come the values of
// secret-named environment variables and the user's rules from a config
// file ([LoadConfig]).
//
// The bulk of the formats comes from gitleaks' default rule set
// (github.com/zricethezav/gitleaks/v8, MIT license). Its rule file,
// config/gitleaks.toml, is copied into this package as gitleaks.toml (its
// license and version in a header) and embedded; redact reads it with
// go-toml at New, so that it links nothing of gitleaks (its config package
// links viper and some fifty other packages for this one file). To update
// the rules, bump the gitleaks version in go.mod, run go generate ./redact
// (gen_gitleaks.go copies the module's file) and run the tests (they check
// the copy against the module's, compile every rule, cross-check this
// package's reading of the TOML against gitleaks' own, and run the
// corpus). Each gitleaks rule brings its id, keywords, expression,
// secretGroup, entropy threshold and allowlists. Allowlists are honoured
// for what a value can show: regexes on the secret, the match or the line
// (regexTarget) and stop words, per rule, and the global ones for every
// built-in rule. Conditions on paths and commits never hold (a key is not
// a repository path; an allowlist that needs one under AND never applies);
// a rule's own path condition is checked against the key. The
// "gitleaks:allow" comment is not honoured: a value cannot exempt itself.
//
// gitleaks rules that memfs does not take:
//
//   - private-key: memfs's own rule finds the same PEM blocks; it is the
//     only rule that spans lines, and ContextStart knows its exact shape.
//   - kubernetes-secret-yaml: it matches across the lines of a YAML
//     document ("kind: Secret" ... "data:"), which a per-line engine does
//     not see.
//   - pkcs12-file: a path-only rule; it flags a file by its name.
//   - any rule with required parts (composite rules), skipReport, no
//     keyword or a one-byte keyword (none in v8.30.1).
//
// Every other rule runs on one line at a time. The few gitleaks
// expressions that could reach over a newline (curl-auth-header and
// curl-auth-user look up to five lines ahead for the -H or -u of a curl
// command) find only what is on the line of their keyword.
//
// # Ids and overlaps
//
// Some gitleaks rules find a kind of secret that memfs has its own rule
// for; they report under memfs's id (github-pat as github-token,
// generic-api-key as generic-secret, and so on; see sameAs), so that
// markers, tests and users' configs keep naming what they named. Where
// findings overlap, they are merged into one marker covering them all,
// reported under the first rule in this order: user rules; memfs's rules
// of a specific format; gitleaks' (the longer match first); environment
// values; the generic rules, memfs's url-credentials and generic-secret,
// then gitleaks' generic-api-key. So a token memfs knows keeps memfs's
// id, and "SHOPIFY_API_SECRET=shpss_..." is a shopify-shared-secret, not
// a generic one. A finding that reaches across the parts of
// "scheme://user:pass@host" is cut down to its part in the password: a
// URL keeps its scheme, user, host and path.
//
// memfs's own rule of an id honours the regex allowlists of the gitleaks
// rules reported under that id (so "secret_name: prod/x" is no generic
// secret, and AKIAIOSFODNN7EXAMPLE no AWS key), but not their stop words:
// gitleaks' 1,446 short words would drop one random secret in a hundred.
//
// # Speed
//
// Every rule has keywords. A value is searched for all of them in one
// pass (bit sets of their first two and three bytes, then a table); a
// rule's expression runs only on the lines that hold one of its keywords,
// and only once per line. Expressions are compiled when a rule first
// meets its keyword: most never do. Clean text costs the keyword pass and
// nothing else, and a clean value is returned as is, without a copy.
//
// Many gitleaks expressions begin with "(?i)[\w.-]{0,50}?(?:name)": run
// over a line, they try every position. For such a rule the package
// derives a filter, the expression from "name" on, run at each keyword
// hit of the lowered line as a small automaton (dfa.go); the rule runs on
// the line only where the filter passes, and then without its lazy
// prefix, which finds the same secrets without a thread of the engine
// started at every byte. The filter matches wherever the expression does,
// so nothing found changes (tests check it on every rule). Expressions that ignore case run on the line
// lowered, without the cost of case folding in the regexp engine.
//
// New parses gitleaks' TOML and compiles only the user's expressions;
// compiling every rule costs far more, and is paid only for the rules a
// Redactor meets. The throughput of Redact and Mask, and the cost of New
// and of compiling every rule: see BENCHMARKS.md, Redaction.
//
// # Invariants
//
// Redaction is idempotent: markers never match a rule, and a masked run
// of one byte is no secret to the built-in rules. Findings never carry
// the secret. Every rule but private-key matches within one line, which
// ContextStart relies on.
//
// # Concurrency
//
// A Redactor is safe for concurrent use. New builds it whole; afterwards
// only each rule's expressions (and an allowlist's) change, compiled once
// under a sync.Once when a call first meets the rule's keyword: a call
// that meets a rule being compiled waits for it. The package starts no
// goroutines, and Redact, Mask and ContextStart only read the value, which
// must not change during the call; Redact and Mask return the value
// itself when it holds no secret. New reads DefaultEnvNames and, when
// Config.Env is nil, the environment, once; it keeps Config.Disabled
// without copying it, so the caller must not change that slice, or the
// Rules in it, after New.
//
// # Example
//
//	r, err := redact.New(redact.Config{})
//	out, findings := r.Redact("memory/notes.md", value)
//	for _, f := range findings {
//		log.Printf("redacted %s", f) // rule and range only
//	}
package redact
