package contextpack_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/session"
)

// loads records every key the store is asked to load.
type loads struct {
	mu   sync.Mutex
	keys []string
}

func (l *loads) inject(op errorstore.Op, keys []string) error {
	if op == errorstore.OpLoad {
		l.mu.Lock()
		l.keys = append(l.keys, keys...)
		l.mu.Unlock()
	}
	return nil
}

var files = map[string]string{
	"memory/global.md":              "# Global\n\nThe user prefers short answers.\nAlways run the tests.\n",
	"memory/project/kernel.md":      "# Kernel\n\nFUSE requests: lookup, getattr, open, read.\nThe kernel caches attributes.\nNegative entries are cached too.\n",
	"skills/go/SKILL.md":            "---\nname: go-patterns\ndescription: Idiomatic Go patterns.\n---\n\n# Body that must not appear\n",
	"skills/go/resources/ref.md":    "a resource that must never be loaded\n",
	"skills/shell/SKILL.md":         "---\nname: \"shell-tools\"\ndescription: Small shell helpers.\n---\nbody\n",
	"skills/shell/scripts/count.sh": "#!/bin/sh\necho never loaded\n",
	"agents/explorer.json":          `{"name":"explorer"}`,
	contextpack.SummariesKey:        "",
	"memory/zz-last-and-largest.md": strings.Repeat("a line of the largest note, to be cut\n", 40),
}

func summaries(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"run":"r1","step":"s%d","time":"2026-11-23T01:%02d:00Z","text":"did step %d"}`+"\n", i, i%60, i)
	}
	return b.String()
}

func newSource(t *testing.T) (*session.Context, *loads) {
	t.Helper()
	st, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var es []backend.Entry
	for k, v := range files {
		if k == contextpack.SummariesKey {
			v = summaries(8) + "not json\n"
		}
		es = append(es, backend.Entry{Key: k, Value: []byte(v), Info: backend.Info{Mode: 0o644, MTime: time.Unix(1700000000, 0)}})
	}
	if err := st.Save(t.Context(), es...); err != nil {
		t.Fatal(err)
	}
	l := &loads{}
	c := session.NewContext(errorstore.Wrap(st, l.inject), session.Options{})
	if err := c.Bootstrap(t.Context()); err != nil { // index only: nothing loaded
		t.Fatal(err)
	}
	l.keys = nil
	return c, l
}

// hashLine matches a pack's first line.
var hashLine = regexp.MustCompile(`^<!-- memfs context pack sha256:([0-9a-f]{64})( seq:\d+)? omitted:(\d+) -->\n\n`)

// checkManifest checks that p's first line names the SHA-256 of the rest
// of its text, as its manifest does, that the manifest's included notes
// are the notes in the text and its counts are right.
func checkManifest(t *testing.T, p contextpack.Pack) {
	t.Helper()
	m := hashLine.FindStringSubmatch(p.Text)
	if m == nil {
		t.Fatalf("pack does not start with its hash line:\n%.300s", p.Text)
	}
	body := p.Text[len(m[0]):]
	sum := sha256.Sum256([]byte(body))
	if m[1] != hex.EncodeToString(sum[:]) || m[1] != p.Manifest.PackSHA256 {
		t.Errorf("hash line %s, sha256 of the body %x, manifest %s: want all equal", m[1], sum, p.Manifest.PackSHA256)
	}
	if m[3] != fmt.Sprint(len(p.Manifest.LeftOut)) {
		t.Errorf("hash line says omitted:%s, manifest leaves out %d", m[3], len(p.Manifest.LeftOut))
	}
	if n := utf8.RuneCountInString(p.Text); n != p.Manifest.Chars || n > p.Manifest.MaxChars {
		t.Errorf("pack of %d characters, manifest says %d, budget %d", n, p.Manifest.Chars, p.Manifest.MaxChars)
	}
	used := utf8.RuneCountInString(m[0])
	for _, s := range p.Manifest.Sections {
		used += s.Used
	}
	if used != p.Manifest.Chars {
		t.Errorf("sections use %d characters with the hash line, the pack has %d", used, p.Manifest.Chars)
	}
	in := map[string]bool{}
	for _, it := range p.Manifest.Included {
		in[it.Kind+" "+it.Key+" "+it.Name] = true
		if it.Kind == "note" && !strings.Contains(p.Text, "\n### "+it.Key+"\n\n") {
			t.Errorf("manifest includes note %s; it is not in the pack", it.Key)
		}
	}
	for _, it := range p.Manifest.LeftOut {
		if in[it.Kind+" "+it.Key+" "+it.Name] {
			t.Errorf("%s %s %s both included and left out", it.Kind, it.Key, it.Name)
		}
		if it.Kind == "note" && strings.Contains(p.Text, "\n### "+it.Key+"\n\n") {
			t.Errorf("manifest leaves note %s out; it is in the pack", it.Key)
		}
	}
}

// The whole pack with room to spare: sections in order, skills from their
// front matter only, the latest summaries, every note, and a manifest
// whose hashes are those of the values.
func TestPackOrderAndManifest(t *testing.T) {
	c, l := newSource(t)
	p, err := contextpack.Build(t.Context(), c, contextpack.Options{MaxChars: 100_000, Summaries: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkManifest(t, p)
	order := []string{"<!-- memfs context pack sha256:", " omitted:0 -->\n\n## Skills\n\n",
		"- go-patterns: Idiomatic Go patterns. (skills/go/SKILL.md)", "- shell-tools: Small shell helpers. (skills/shell/SKILL.md)",
		"## Recent steps", "run r1 step s5: did step 5", "run r1 step s7: did step 7", "## Memory"}
	at := 0
	for _, want := range order {
		i := strings.Index(p.Text[at:], want)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", want, p.Text)
		}
		at += i + len(want)
	}
	if strings.Contains(p.Text, "s4: did step 4") || strings.Contains(p.Text, "Body that must not appear") {
		t.Errorf("an older summary or a skill body is in the pack:\n%s", p.Text)
	}
	notes := 0
	for _, inc := range p.Manifest.Included {
		if inc.Kind != "note" {
			continue
		}
		notes++
		v, _ := c.Get(inc.Key)
		sum := sha256.Sum256(v)
		if inc.SHA256 != hex.EncodeToString(sum[:]) || inc.Cut {
			t.Errorf("manifest %+v: want sha256 %x, not cut", inc, sum)
		}
		if !strings.Contains(p.Text, "### "+inc.Key+"\n\n"+string(v)) {
			t.Errorf("note %s is not in the pack whole", inc.Key)
		}
	}
	if notes != 3 || len(p.Manifest.LeftOut) != 0 || len(p.Manifest.Included) != 3+3+2 {
		t.Errorf("included %d notes of %+v, left out %+v", notes, p.Manifest.Included, p.Manifest.LeftOut)
	}
	if strings.Contains(p.Text, "sha256:"+p.Manifest.Included[len(p.Manifest.Included)-1].SHA256) {
		t.Error("a note's hash is in the pack: the manifest belongs outside it")
	}
	// Loads: the memory files, the summaries and the two SKILL.md files;
	// no skill resource, no agent profile.
	for _, k := range l.keys {
		if !strings.HasPrefix(k, "memory/") && !strings.HasSuffix(k, "/SKILL.md") {
			t.Errorf("loaded %s", k)
		}
	}
	if n := strings.Count(strings.Join(l.keys, " "), "SKILL.md"); n != 2 {
		t.Errorf("loaded %d SKILL.md files, want 2: %v", n, l.keys)
	}
	// The manifest's JSON is the manifest.
	var back contextpack.Manifest
	if err := json.Unmarshal(p.Manifest.JSON(), &back); err != nil || back.PackSHA256 != p.Manifest.PackSHA256 || len(back.Included) != len(p.Manifest.Included) {
		t.Errorf("manifest JSON does not read back: %v %+v", err, back)
	}
}

var cutMarker = regexp.MustCompile(`^\[cut: \d+ of \d+ lines\]$`)

// For every budget from tiny to ample: the pack never exceeds it, every
// line of it is a whole line (of a value, or one memfs wrote), sections
// come in the documented order, and the manifest matches the pack.
func TestPackBudget(t *testing.T) {
	c, _ := newSource(t)
	var sourceLines = map[string]bool{}
	for _, v := range files {
		for _, line := range strings.Split(v, "\n") {
			sourceLines[line] = true
		}
	}
	generated := regexp.MustCompile(`^(#{2,3} .*|- .*|<!-- memfs context pack sha256:[0-9a-f]{64} omitted:\d+ -->|)$`)
	for max := 1; max <= 3000; max += 37 {
		p, err := contextpack.Build(t.Context(), c, contextpack.Options{MaxChars: max, Query: "kernel cache"})
		if err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCountInString(p.Text); n > max {
			t.Fatalf("budget %d: pack of %d characters", max, n)
		}
		if p.Text == "" {
			if max > 200 {
				t.Fatalf("budget %d: empty pack", max)
			}
			continue
		}
		checkManifest(t, p)
		for _, line := range strings.Split(strings.TrimSuffix(p.Text, "\n"), "\n") {
			if !sourceLines[line] && !generated.MatchString(line) && !cutMarker.MatchString(line) {
				t.Fatalf("budget %d: line %q is not a whole line", max, line)
			}
		}
		last := -1
		for _, h := range []string{"<!-- memfs", "## Skills", "## Recent steps", "## Memory"} {
			if i := strings.Index(p.Text, h); i >= 0 {
				if i < last {
					t.Errorf("budget %d: %s out of order", max, h)
				}
				last = i
			}
		}
		// The query ranks memory/project/kernel.md first: notes go in best
		// first, so it is the first note whenever it is in, and the notes
		// in come in descending score.
		var notes []contextpack.Item
		for _, inc := range p.Manifest.Included {
			if inc.Kind == "note" {
				notes = append(notes, inc)
			}
		}
		for i, n := range notes {
			if n.Key == "memory/project/kernel.md" && i != 0 {
				t.Errorf("budget %d: memory/project/kernel.md is note %d, want the first", max, i)
			}
			if i > 0 && n.Score.Score > notes[i-1].Score.Score {
				t.Errorf("budget %d: note %s (%v) after %s (%v)", max, n.Key, n.Score.Score, notes[i-1].Key, notes[i-1].Score.Score)
			}
		}
		if max >= 1000 && (len(notes) == 0 || notes[0].Key != "memory/project/kernel.md") {
			t.Errorf("budget %d: notes %+v, want memory/project/kernel.md first", max, notes)
		}
	}
	// A budget where the largest note must be cut: cut at a line, marked,
	// and the manifest says so.
	p, _ := contextpack.Build(t.Context(), c, contextpack.Options{MaxChars: 900, Summaries: -1, Query: "largest"})
	checkManifest(t, p)
	if !strings.Contains(p.Text, "### memory/zz-last-and-largest.md\n\n") || !strings.Contains(p.Text, "[cut: ") {
		t.Errorf("budget 900: the largest note is not cut:\n%s", p.Text)
	}
	for _, inc := range p.Manifest.Included {
		if inc.Key == "memory/zz-last-and-largest.md" && !inc.Cut {
			t.Errorf("the cut note is not marked cut in the manifest: %+v", inc)
		}
	}
}

func TestFrontMatter(t *testing.T) {
	for _, c := range []struct{ in, name, desc string }{
		{"---\nname: a\ndescription: b c\n---\nbody", "a", "b c"},
		{"---\r\nname: 'q'\r\ndescription: \"d\"\r\n---\r\n", "q", "d"},
		{"no front matter\nname: x\n", "", ""},
		{"---\nname: a\n---\ndescription: not in the front matter\n", "a", ""},
	} {
		if n, d := contextpack.FrontMatter([]byte(c.in)); n != c.name || d != c.desc {
			t.Errorf("FrontMatter(%q) = %q, %q; want %q, %q", c.in, n, d, c.name, c.desc)
		}
	}
}

type mapSource map[string][]byte

func (m mapSource) Entries(prefix string) []backend.Entry {
	var out []backend.Entry
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, backend.Entry{Key: k, Info: backend.Info{Size: int64(len(v))}, Value: v})
		}
	}
	return out
}
func (m mapSource) Resolve(context.Context, ...string) error { return nil }
func (m mapSource) Get(k string) ([]byte, bool)              { v, ok := m[k]; return v, ok }

// A binary value (a NUL, or bytes that are not UTF-8: a zlib object), a
// file Options.Ignore excludes, a file that is not regular and a conflict
// copy (the other side of a conflict, until someone resolves it) are no
// notes, nor skills: neither in the pack nor in its manifest.
func TestPackLeavesOutWhatIsNoNote(t *testing.T) {
	src := entrySource{
		{Key: "memory/archive.zip", Value: append([]byte("PK\x03\x04\x00"), make([]byte, 5000)...), Info: backend.Info{Mode: 0o644}},
		{Key: "memory/object", Value: []byte("x\x9c\xcbH\xcd\xc9\xc9W(\xcf/\xcaI\x01"), Info: backend.Info{Mode: 0o644}},
		{Key: "memory/scratch/s.md", Value: []byte("scratch\n"), Info: backend.Info{Mode: 0o644}},
		{Key: "memory/link.md", Value: []byte("a.md"), Info: backend.Info{Mode: fs.ModeSymlink | 0o777}},
		{Key: "memory/a.md", Value: []byte("text\n"), Info: backend.Info{Mode: 0o644}},
		{Key: "memory/a.conflict-coder-20261127T101500.000000000Z.md", Value: []byte("text, theirs\n"), Info: backend.Info{Mode: 0o644}},
		{Key: "skills/x/SKILL.md", Value: []byte("---\nname: x\n---\n"), Info: backend.Info{Mode: 0o644}},
		{Key: "skills/y/SKILL.md", Value: []byte("---\nname: y\n---\n"), Info: backend.Info{Mode: 0o644}},
	}
	p, err := contextpack.Build(t.Context(), src, contextpack.Options{Ignore: func(k string) bool {
		return strings.HasPrefix(k, "memory/scratch/") || k == "skills/y/SKILL.md"
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range append(p.Manifest.Included, p.Manifest.LeftOut...) {
		got = append(got, it.Key)
	}
	if want := "skills/x/SKILL.md memory/a.md"; strings.Join(got, " ") != want {
		t.Errorf("pack items: got %v, want %s", got, want)
	}
	if strings.Contains(p.Text, "PK") || strings.Contains(p.Text, "binary") {
		t.Errorf("binary value in the pack:\n%s", p.Text)
	}
}

// BenchmarkBuildLargeNote builds a pack over a 3 MiB note of 50,000
// lines that must be cut: the cut is linear in the number of lines.
func BenchmarkBuildLargeNote(b *testing.B) {
	src := mapSource{"memory/huge.md": []byte(strings.Repeat("a line of a very long note about many things\n", 50_000))}
	for b.Loop() {
		p, err := contextpack.Build(b.Context(), src, contextpack.Options{})
		if err != nil || !strings.Contains(p.Text, "[cut: ") {
			b.Fatalf("%v %q", err, p.Text[:100])
		}
	}
}

// BenchmarkBuildTypical builds the default pack over 200 memory notes of
// ~1 KiB, a summaries file of 1,000 steps and 50 skills: what an agent
// loads at the start of a step.
func BenchmarkBuildTypical(b *testing.B) {
	src := mapSource{}
	note := strings.Repeat("- a remembered fact about the project and its tools\n", 20)
	for i := range 200 {
		src[fmt.Sprintf("memory/notes/n%03d.md", i)] = []byte(note)
	}
	src[contextpack.SummariesKey] = []byte(summaries(1000))
	for i := range 50 {
		src[fmt.Sprintf("skills/s%02d/SKILL.md", i)] = []byte(fmt.Sprintf("---\nname: s%02d\ndescription: skill number %d.\n---\n%s", i, i, note))
		src[fmt.Sprintf("skills/s%02d/resources/r.md", i)] = []byte(note)
	}
	for b.Loop() {
		p, err := contextpack.Build(b.Context(), src, contextpack.Options{})
		if err != nil || len(p.Manifest.LeftOut) == 0 {
			b.Fatal(err, len(p.Manifest.LeftOut))
		}
	}
}

// Skills written through memfs carry their front matter as
// user.memfs.skill: a fresh session builds the skills index without
// loading any skill's value.
func TestSkillsIndexLoadsNoSkill(t *testing.T) {
	st, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := session.NewContext(st, session.Options{Derived: map[string]session.AttrFunc{meta.Skill: contextpack.SkillAttr}}) // as memfs registers it
	for k, v := range files {
		if err := w.Set(k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	l := &loads{}
	c := session.NewContext(errorstore.Wrap(st, l.inject), session.Options{})
	if err := c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	p, err := contextpack.Build(t.Context(), c, contextpack.Options{MaxChars: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- go-patterns: Idiomatic Go patterns. (skills/go/SKILL.md)", "- shell-tools: Small shell helpers. (skills/shell/SKILL.md)"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("pack lacks %q", want)
		}
	}
	for _, k := range l.keys {
		if strings.HasPrefix(k, "skills/") {
			t.Errorf("loaded %s to build the skills index", k)
		}
	}
	if len(l.keys) == 0 {
		t.Error("no load counted at all: the memory notes must have been loaded")
	}
}

// TestWorkingMemoryWinsTies: of notes of one score, working memory's
// goes first and an indexed source's last, whatever the keys' order; the
// manifest names each item's route.
func TestWorkingMemoryWinsTies(t *testing.T) {
	src := mapSource{"memory/archive/a.md": []byte("the wombat digs\n"), "memory/a.md": []byte("the wombat digs\n"), "memory/scratch/a.md": []byte("the wombat digs\n")}
	route := func(k string) string {
		for _, p := range []string{"memory/scratch/", "memory/archive/"} {
			if strings.HasPrefix(k, p) {
				return p
			}
		}
		return "default"
	}
	tier := func(k string) int {
		return map[string]int{"memory/scratch/": 0, "default": 1, "memory/archive/": 2}[route(k)]
	}
	for _, o := range []contextpack.Options{{Query: "wombat"}, {Query: "wombat", Tier: tier, Route: route}} {
		p, err := contextpack.Build(t.Context(), src, o)
		if err != nil {
			t.Fatal(err)
		}
		inc := p.Manifest.Included
		if len(inc) != 3 || inc[0].Score.Score != inc[2].Score.Score {
			t.Fatalf("%+v: want three notes of one score", inc)
		}
		want := []string{"memory/a.md", "memory/archive/a.md", "memory/scratch/a.md"} // by key
		if o.Tier != nil {
			want = []string{"memory/scratch/a.md", "memory/a.md", "memory/archive/a.md"} // working, persistent, indexed
		}
		for i, it := range inc {
			if it.Key != want[i] || (o.Route != nil && it.Route != route(want[i])) || (o.Route == nil && it.Route != "") {
				t.Errorf("tiers %v: item %d is %s (route %q), want %s", o.Tier != nil, i, it.Key, it.Route, want[i])
			}
		}
	}
}
