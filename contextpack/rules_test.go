package contextpack_test

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memfs/memfs/contextpack"
)

const repoA, repoB = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"

func repoSource() mapSource {
	src := map[string]string{
		"memory/global.md":                          "a global note about kernels\n",
		"skills/deploy/SKILL.md":                    "---\nname: deploy\ndescription: ships it\n---\nbody\n",
		"repos/" + repoA + "/conventions/errors.md": "---\nid: errors\n---\nuse errors.Join\n",
		"repos/" + repoA + "/decisions/etcd.md":     "---\nid: etcd\n---\nwe chose etcd\n",
		"repos/" + repoA + "/notes/flaky.md":        "the flaky test is TestX\n",
		"repos/" + repoA + "/summaries.jsonl":       `{"run":"r1","step":"s1","time":"2026-12-06T10:00:00Z","text":"A did a step"}` + "\n",
		"repos/" + repoB + "/conventions/secret.md": "B's convention\n",
		"repos/" + repoB + "/notes/b.md":            "B's note about kernels\n",
		"repos/" + repoB + "/summaries.jsonl":       `{"run":"r9","step":"s9","time":"2026-12-06T10:00:00Z","text":"B did a step"}` + "\n",
		contextpack.SummariesKey:                    `{"run":"g","step":"g1","time":"2026-12-06T10:00:00Z","text":"global step"}` + "\n",
	}
	for i := range 40 {
		src[fmt.Sprintf("memory/n%02d.md", i)] = strings.Repeat(fmt.Sprintf("note %d line about kernels\n", i), 5)
	}
	m := mapSource{}
	for k, v := range src {
		m[k] = []byte(v)
	}
	return m
}

func repoOptions(hash string, max int) contextpack.Options {
	p := "repos/" + hash + "/"
	return contextpack.Options{
		MaxChars: max, Repo: hash, Query: "kernels", Type: "fact",
		Rules:        []string{p + "conventions/", p + "decisions/"},
		Prefixes:     []string{"memory/", p + "notes/"},
		SummariesKey: p + "summaries.jsonl",
	}
}

// A repository's pack: its rules first and whatever the query and type
// ask, its summaries, never another repository's memory.
func TestPackOfARepository(t *testing.T) {
	src := repoSource()
	p, err := contextpack.Build(t.Context(), src, repoOptions(repoA, 100_000))
	if err != nil {
		t.Fatal(err)
	}
	checkManifest(t, p)
	for _, want := range []string{"## Skills", "## Rules of this repository", "use errors.Join", "we chose etcd", "A did a step"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("pack lacks %q:\n%s", want, p.Text)
		}
	}
	for _, not := range []string{"B's", "B did", "global step", "secret.md"} {
		if strings.Contains(p.Text, not) {
			t.Errorf("pack of %s holds %q (another repository's, or the global summaries):\n%s", repoA, not, p.Text)
		}
	}
	if p.Manifest.Repo != repoA {
		t.Errorf("manifest names repo %q, want %q", p.Manifest.Repo, repoA)
	}
	last := -1
	for _, h := range []string{"## Skills", "## Rules of this repository", "## Recent steps"} {
		i := strings.Index(p.Text, h)
		if i < last {
			t.Errorf("%s out of order:\n%s", h, p.Text)
		}
		last = i
	}
	// The type filter keeps no note (none is a fact), the rules stay.
	for _, it := range p.Manifest.Included {
		if it.Kind == "note" {
			t.Errorf("note %s in a pack of type fact", it.Key)
		}
	}
	// Without the filter the repository's notes rank with the global ones.
	o := repoOptions(repoA, 100_000)
	o.Type = ""
	p, _ = contextpack.Build(t.Context(), src, o)
	if !strings.Contains(p.Text, "### repos/"+repoA+"/notes/flaky.md") || strings.Contains(p.Text, repoB) {
		t.Errorf("pack without a type filter: want A's note and nothing of B:\n%s", p.Text)
	}
}

// A rule or note Options.Check fails is left out, whatever the budget,
// and the manifest says why.
func TestPackLeavesOutWhatFailsItsCheck(t *testing.T) {
	src := repoSource()
	o := repoOptions(repoA, 100_000)
	o.Type = ""
	o.Check = func(key string, v []byte) error {
		if strings.HasSuffix(key, "/etcd.md") || strings.HasSuffix(key, "/flaky.md") {
			return errors.New("front matter: createdAt: missing")
		}
		return nil
	}
	p, err := contextpack.Build(t.Context(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	checkManifest(t, p)
	if strings.Contains(p.Text, "we chose etcd") || strings.Contains(p.Text, "TestX") || !strings.Contains(p.Text, "use errors.Join") {
		t.Errorf("pack with a rule and a note that fail their check:\n%s", p.Text)
	}
	invalid := map[string]string{}
	for _, it := range p.Manifest.LeftOut {
		if it.Invalid != "" {
			invalid[it.Kind+" "+it.Key] = it.Invalid
		}
	}
	want := map[string]string{
		"rule repos/" + repoA + "/decisions/etcd.md": "front matter: createdAt: missing",
		"note repos/" + repoA + "/notes/flaky.md":    "front matter: createdAt: missing",
	}
	if !maps.Equal(invalid, want) {
		t.Errorf("manifest's invalid items: %v, want %v", invalid, want)
	}
}

// Rules go in before anything else: from the budget where they fit, every
// rule is in, and the pack stays in its budget.
func TestPackRulesBeforeNotes(t *testing.T) {
	src := repoSource()
	o := repoOptions(repoA, 0)
	o.Type = ""
	all := len("<!-- memfs context pack sha256:"+strings.Repeat("0", 64)+" omitted:99 -->\n\n") + len("## Rules of this repository\n\n")
	for _, k := range []string{"conventions/errors.md", "decisions/etcd.md"} {
		k = "repos/" + repoA + "/" + k
		all += len("### " + k + "\n\n" + string(src[k]) + "\n")
	}
	for max := 1; max <= 4000; max += 29 {
		o.MaxChars = max
		p, err := contextpack.Build(t.Context(), src, o)
		if err != nil {
			t.Fatal(err)
		}
		if p.Text == "" {
			continue
		}
		checkManifest(t, p)
		rules, notes := 0, 0
		for _, it := range p.Manifest.Included {
			switch it.Kind {
			case "rule":
				rules++
			case "note":
				notes++
			}
		}
		if max >= all && rules != 2 {
			t.Fatalf("budget %d (both rules take %d): %d of 2 rules in, %d notes:\n%s", max, all, rules, notes, p.Text)
		}
	}
}

// A repository of 1,000 notes: the pack keeps its budget, its rules and
// its summaries, and the manifest accounts for every note.
func TestPackOfARepositoryOf1000Notes(t *testing.T) {
	src := repoSource()
	for i := range 1000 {
		src[fmt.Sprintf("repos/%s/notes/n%04d.md", repoA, i)] = []byte(strings.Repeat(fmt.Sprintf("repo note %d about kernels and caches\n", i), 1+i%7))
	}
	o := repoOptions(repoA, contextpack.DefaultMaxChars)
	o.Type = ""
	p, err := contextpack.Build(t.Context(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	checkManifest(t, p)
	if n := utf8.RuneCountInString(p.Text); n > contextpack.DefaultMaxChars {
		t.Errorf("pack of %d characters, budget %d", n, contextpack.DefaultMaxChars)
	}
	notes := 0
	for _, it := range append(p.Manifest.Included, p.Manifest.LeftOut...) {
		if it.Kind == "note" {
			notes++
		}
	}
	if want := 1001 + 41; notes != want { // the repository's and the global ones, no summaries file
		t.Errorf("manifest accounts for %d notes, want %d", notes, want)
	}
	for _, want := range []string{"use errors.Join", "we chose etcd", "A did a step"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("pack lacks %q", want)
		}
	}
}
