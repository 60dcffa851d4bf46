package redact

import (
	"bytes"
	"math/rand/v2"
	"os"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"testing"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
)

// This package reads gitleaks' TOML itself (go-toml, without viper's
// weight); gitleaks reads it through viper. They must agree on every
// rule and allowlist.
func TestGitleaksConfigAsGitleaksReadsIt(t *testing.T) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		t.Fatal(err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		t.Fatal(err)
	}
	want, err := vc.Translate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := loadGitleaks()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rules) != len(want.Rules) {
		t.Fatalf("%d rules, gitleaks reads %d", len(got.Rules), len(want.Rules))
	}
	for _, g := range got.Rules {
		w, ok := want.Rules[g.ID]
		if !ok {
			t.Errorf("rule %s: gitleaks has no such rule", g.ID)
			continue
		}
		var wRegex, wPath string
		if w.Regex != nil {
			wRegex = w.Regex.String()
		}
		if w.Path != nil {
			wPath = w.Path.String()
		}
		var keywords []string
		for _, k := range g.Keywords {
			keywords = append(keywords, strings.ToLower(k))
		}
		if g.Regex != wRegex || g.Path != wPath || g.SecretGroup != w.SecretGroup || g.Entropy != w.Entropy ||
			!slices.Equal(keywords, w.Keywords) || len(g.Required) != len(w.RequiredRules) || g.SkipReport != w.SkipReport {
			t.Errorf("rule %s differs from gitleaks' reading", g.ID)
		}
		lists := g.Allowlists
		if g.Allowlist != nil {
			lists = append([]gitleaksAllowlist{*g.Allowlist}, lists...)
		}
		if len(lists) != len(w.Allowlists) {
			t.Errorf("rule %s: %d allowlists, gitleaks reads %d", g.ID, len(lists), len(w.Allowlists))
			continue
		}
		for i, a := range lists {
			compareAllowlist(t, g.ID, a, w.Allowlists[i])
		}
	}
	if got.Allowlist == nil || len(got.Allowlists) != 0 || len(want.Allowlists) != 1 {
		t.Fatalf("global allowlists: %v and %d, gitleaks reads %d", got.Allowlist != nil, len(got.Allowlists), len(want.Allowlists))
	}
	compareAllowlist(t, "global", *got.Allowlist, want.Allowlists[0])
}

func compareAllowlist(t *testing.T, id string, a gitleaksAllowlist, w *config.Allowlist) {
	t.Helper()
	var res, paths []string
	for _, re := range w.Regexes {
		res = append(res, re.String())
	}
	for _, re := range w.Paths {
		paths = append(paths, re.String())
	}
	stop := func(ws []string) []string {
		var out []string
		for _, s := range ws {
			out = append(out, strings.ToLower(s))
		}
		sort.Strings(out)
		return slices.Compact(out)
	}
	and := newAllowlist(a).and
	if !slices.Equal(a.Regexes, res) || !slices.Equal(a.Paths, paths) || !slices.Equal(stop(a.StopWords), stop(w.StopWords)) ||
		a.RegexTarget != w.RegexTarget || and != (w.MatchCondition == config.AllowlistMatchAnd) || len(a.Commits) != len(w.Commits) {
		t.Errorf("rule %s: an allowlist differs from gitleaks' reading", id)
	}
}

// Every key of gitleaks' TOML is one this package reads or knowingly
// leaves (descriptions, tags, versions): a new field in a new version
// fails here rather than going unseen.
func TestGitleaksConfigHasNoUnknownFields(t *testing.T) {
	var doc map[string]any
	if err := toml.Unmarshal([]byte(config.DefaultConfig), &doc); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{
		"title": true, "description": true, "minVersion": true, "extend": true,
		"allowlist": true, "allowlists": true, "rules": true,
		"rules.id": true, "rules.description": true, "rules.regex": true, "rules.path": true, "rules.secretGroup": true,
		"rules.entropy": true, "rules.keywords": true, "rules.tags": true, "rules.allowlist": true, "rules.allowlists": true,
		"rules.required": true, "rules.skipReport": true,
	}
	allow := []string{"description", "condition", "regexTarget", "regexes", "stopwords", "paths", "commits", "targetRules"}
	for _, k := range allow {
		known["allowlist."+k], known["allowlists."+k], known["rules.allowlist."+k], known["rules.allowlists."+k] = true, true, true, true
	}
	for _, k := range []string{"id", "withinLines", "withinColumns"} {
		known["rules.required."+k] = true
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				path := strings.TrimPrefix(prefix+"."+k, ".")
				if !known[path] {
					t.Errorf("gitleaks' config has a field this package does not know: %s", path)
				}
				walk(path, sub)
			}
		case []any:
			for _, sub := range v {
				if _, ok := sub.(map[string]any); ok {
					walk(prefix, sub)
				}
			}
		}
	}
	walk("", doc)
}

// The rules left out are the ones the package doc lists, and each sameAs
// entry maps a gitleaks rule that exists to a memfs rule that exists.
func TestSkippedAndRenamedRules(t *testing.T) {
	gc, err := loadGitleaks()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	var skipped []string
	for _, g := range gc.Rules {
		ids[g.ID] = true
		if why := skipReason(g); why != "" {
			skipped = append(skipped, g.ID)
			t.Logf("skipped %s: %s", g.ID, why)
			if !bytes.Contains(doc, []byte("//   - "+g.ID+":")) {
				t.Errorf("doc.go does not list skipped rule %s", g.ID)
			}
		}
	}
	if want := []string{"kubernetes-secret-yaml", "pkcs12-file", "private-key"}; !slices.Equal(skipped, want) {
		t.Errorf("skipped %v, want %v (update the package doc)", skipped, want)
	}
	memfs := map[string]bool{}
	for _, r := range builtin {
		memfs[r.ID] = true
	}
	for from, to := range sameAs {
		if !ids[from] || !memfs[to] {
			t.Errorf("sameAs %s -> %s: gitleaks has it: %v, memfs has it: %v", from, to, ids[from], memfs[to])
		}
	}
	t.Logf("%d gitleaks rules, %d taken, %d reported under memfs's ids", len(gc.Rules), len(gc.Rules)-len(skipped), len(sameAs))
}

// Every rule compiles, with the derived expressions that make it fast.
func TestEveryRuleCompiles(t *testing.T) {
	r := newT(t, Config{})
	var filters, dfas, cuts, lowered, prefixed int
	for _, c := range r.rules {
		p := c.program()
		if p.broken {
			t.Errorf("rule %s (%s) does not compile", c.id, c.name)
			continue
		}
		if p.filter != nil {
			filters++
		}
		if p.dfa != nil {
			dfas++
		}
		if p.back != nil {
			cuts++
		}
		if p.onLower {
			lowered++
		}
		if hasLiteralPrefix(p.re) {
			prefixed++
		}
	}
	t.Logf("%d rules: %d with a literal prefix, %d with a keyword filter (%d as automata), %d with a lazy prefix cut, %d run on lowered lines",
		len(r.rules), prefixed, filters, dfas, cuts, lowered)
}

// samples returns lines to try each rule on: the corpus, and strings
// generated from each rule's own expression inside some text, in various
// cases.
func samples(t *testing.T, r *Redactor, perRule int) map[*compiled][]string {
	rng := rand.New(rand.NewPCG(7, 11))
	var common []string
	for _, f := range []string{"secrets.txt", "lookalikes.txt"} {
		for _, c := range readCorpus(t, f) {
			common = append(common, strings.Split(c.line, "\n")...)
		}
	}
	out := map[*compiled][]string{}
	for _, c := range r.rules {
		tree, err := parse(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range common {
			// The engine tries a rule only on a line with its keyword.
			if slices.ContainsFunc(c.keywords, func(k []byte) bool {
				return bytes.Contains(bytes.ToLower([]byte(l)), bytes.ToLower(k))
			}) {
				lines = append(lines, l)
			}
		}
		for range perRule {
			s := generate(rng, tree)
			pre := []string{"", "x ", "key = ", "token: ", "a_", "\t", "(", `"`, "ſK "}[rng.IntN(9)]
			post := []string{"", " y", `"`, ";", ".", "_z", " \u212a"}[rng.IntN(7)]
			l := pre + s + post
			switch rng.IntN(4) {
			case 0:
				l = strings.ToUpper(l)
			case 1:
				l = strings.ToLower(l)
			}
			if !strings.Contains(l, "\n") {
				lines = append(lines, l)
			}
		}
		out[c] = lines
	}
	return out
}

// generate returns a random string that re (mostly) matches.
func generate(rng *rand.Rand, re *syntax.Regexp) string {
	var b strings.Builder
	var gen func(re *syntax.Regexp)
	pick := func(cls []rune) rune {
		var ascii []rune
		for i := 0; i+1 < len(cls); i += 2 {
			for c := cls[i]; c <= cls[i+1] && c < 0x7f; c++ {
				if c >= 0x20 {
					ascii = append(ascii, c)
				}
			}
		}
		if len(ascii) == 0 {
			return 'x'
		}
		return ascii[rng.IntN(len(ascii))]
	}
	reps := func(min, max int) int {
		if max < 0 || max > min+8 {
			max = min + 8
		}
		return min + rng.IntN(max-min+1)
	}
	gen = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			for _, c := range re.Rune {
				if re.Flags&syntax.FoldCase != 0 && rng.IntN(2) == 0 {
					c = []rune(strings.ToUpper(string(c)))[0]
				}
				b.WriteRune(c)
			}
		case syntax.OpCharClass:
			b.WriteRune(pick(re.Rune))
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte("abc XYZ019=_-."[rng.IntN(14)])
		case syntax.OpCapture, syntax.OpConcat:
			for _, s := range re.Sub {
				gen(s)
			}
		case syntax.OpAlternate:
			gen(re.Sub[rng.IntN(len(re.Sub))])
		case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
			min, max := re.Min, re.Max
			switch re.Op {
			case syntax.OpStar:
				min, max = 0, -1
			case syntax.OpPlus:
				min, max = 1, -1
			case syntax.OpQuest:
				min, max = 0, 1
			}
			for range reps(min, max) {
				gen(re.Sub[0])
			}
		}
	}
	gen(re)
	return b.String()
}

// The expressions a rule runs instead of its own (the lazy prefix cut
// off, on lowered lines) find the same secrets at the same places, and
// its keyword filter passes at a keyword hit of every line it matches:
// the speed changes nothing in what is found.
func TestDerivedExpressionsAgree(t *testing.T) {
	r := newT(t, Config{})
	perRule := 300
	if testing.Short() || raceEnabled {
		perRule = 30
	}
	checked, matched := 0, 0
	for c, lines := range samples(t, r, perRule) {
		p := c.program()
		orig := regexp.MustCompile(c.pattern)
		for _, line := range lines {
			in := []byte(line)
			want := orig.FindAllSubmatchIndex(in, -1)
			run := in
			if p.onLower {
				run = appendLower(nil, in)
			}
			got := p.re.FindAllSubmatchIndex(run, -1)
			checked++
			if len(got) != len(want) {
				t.Errorf("rule %s on %q: %d matches, the original finds %d", c.name, line, len(got), len(want))
				continue
			}
			from := 0
			for i := range want {
				w, g := want[i], slices.Clone(got[i])
				g[0] = p.matchStart(run, g[0], from)
				from = g[1]
				wa, wb, wra, wrb := c.secretOf(p, w)
				ga, gb, gra, grb := c.secretOf(p, g)
				if g[0] != w[0] || g[1] != w[1] || wa != ga || wb != gb || wra != gra || wrb != grb {
					t.Errorf("rule %s on %q: match %v, the original %v", c.name, line, g, w)
				}
			}
			if len(want) == 0 || p.filter == nil {
				continue
			}
			matched++
			low := appendLower(nil, in)
			passes := false
			for i := range low {
				for _, k := range c.keywords {
					kw := &keyword{kw: k, exact: c.exact}
					if !hasKeyword(in[i:], kw) {
						continue
					}
					re := p.filter.Match(low[i:])
					if p.dfa != nil {
						if d, ok := p.dfa.match(low[i:]); ok && d != re {
							t.Errorf("rule %s: the automaton says %v, the filter %v, on %q", c.name, d, re, low[i:])
						}
					}
					passes = passes || re
				}
			}
			if !passes {
				t.Errorf("rule %s matches %q, but its filter fails at every keyword", c.name, line)
			}
		}
	}
	t.Logf("%d lines checked, %d matched by a rule with a filter", checked, matched)
}

// A filter's automaton answers as the filter does, on any text.
func TestFilterAutomataAgree(t *testing.T) {
	r := newT(t, Config{})
	rng := rand.New(rand.NewPCG(3, 5))
	alphabet := "abcdefghijklmnopqrstuvwxyz0123456789 _-.:=\"'/\t;,|?>\\"
	for _, c := range r.rules {
		p := c.program()
		if p.dfa == nil {
			continue
		}
		tree, _ := parse(c.pattern)
		for range 300 {
			var in []byte
			if rng.IntN(2) == 0 {
				in = appendLower(nil, []byte(generate(rng, tree)))
				in = in[rng.IntN(len(in)+1):]
			}
			for range rng.IntN(40) {
				in = append(in, alphabet[rng.IntN(len(alphabet))])
			}
			for _, k := range c.keywords {
				for _, x := range [][]byte{append(bytes.ToLower(k), in...), in} {
					if d, ok := p.dfa.match(x); ok && d != p.filter.Match(x) {
						t.Errorf("rule %s on %q: automaton %v, filter %v", c.name, x, d, !d)
					}
				}
			}
		}
	}
}

// gitleaks.toml is the module's own file under memfs's header, which names
// the module's version: after a gitleaks upgrade, go generate refreshes it.
func TestEmbeddedGitleaksIsTheModules(t *testing.T) {
	header, rules, ok := strings.Cut(gitleaksTOML, gitleaksHeaderEnd+"\n")
	if !ok {
		t.Fatalf("gitleaks.toml has no line %q", gitleaksHeaderEnd)
	}
	if rules != config.DefaultConfig {
		t.Errorf("gitleaks.toml differs from the module's config/gitleaks.toml: run go generate ./redact")
	}
	// The version go.mod requires (test binaries carry no module versions
	// in their build info).
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var version string
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "github.com/zricethezav/gitleaks/v8" {
			version = f[1]
		}
	}
	if version == "" || !strings.Contains(header, "github.com/zricethezav/gitleaks/v8 "+version+"\n") {
		t.Errorf("gitleaks.toml's header does not name the module's version %q:\n%s", version, header)
	}
	if !strings.Contains(header, "# MIT License\n") || !strings.Contains(header, "Copyright (c) 2019 Zachary Rice") {
		t.Errorf("gitleaks.toml's header lacks gitleaks' license:\n%s", header)
	}
}

// gitleaksHeaderEnd is gen_gitleaks.go's headerEnd.
const gitleaksHeaderEnd = "# ---- end of memfs's header; gitleaks' file follows unchanged ----"
