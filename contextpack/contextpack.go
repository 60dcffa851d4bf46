// Package contextpack builds the bounded context an agent loads at the start
// of a step: its always-loaded memory, the latest step summaries, an index of
// its skills, and, with a query, the best search hits, until a character
// budget is spent, followed by a manifest of what went in and what was left
// out.
//
// # Order and trimming
//
// The pack is filled section by section, in this order, and within a
// section item by item:
//
//  1. Memory: every file under the always-loaded prefixes (memory/ by
//     default; the summaries file excluded), by key.
//  2. Recent steps: the latest Summaries step summaries, oldest first.
//  3. Skills: one line per skills/NAME/SKILL.md, "- name: description",
//     from its front matter. Skill bodies are not included and resources
//     are never read (the first level of progressive skill loading).
//  4. Search: with a query, the best hits, one line each with a snippet.
//
// An item goes in whole when it fits in what is left of the budget (the
// manifest's own line for it counted). A memory file that does not fit
// whole goes in cut after its last line that fits, marked "[cut: N of M
// lines]"; a line is never cut. Other items that do not fit are left out.
// Once an item is left out, the later items of every section are still
// tried, smaller ones may fit. The output never exceeds the budget.
//
// # Manifest
//
// The pack ends with a manifest: one line per included file with the
// SHA-256 of the value it was built from ("cut" when only part went in),
// and the keys left out for lack of room. When even the list of left-out
// keys does not fit, its tail is counted instead ("and N more").
//
// # Concurrency
//
// Build keeps no state between calls and starts no goroutines, so calls
// may run concurrently wherever the Source and Options.Search may be used
// concurrently. It calls them on its caller's goroutine, one call at a
// time, holding no lock, and only reads what they return (a value from Get
// may be the session's own, shared with other readers). A pack is not a
// snapshot: Build lists, then loads and reads, in several calls, so its
// values may come from different moments while memory changes; a memory
// file removed in between is skipped (not listed as left out), and each
// manifest hash is of the value that went in. SkillAttr keeps no state
// either: a flush may call it from any goroutine.
package contextpack

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// SummariesKey is where step summaries live: one JSON object per line.
const SummariesKey = "memory/summaries.jsonl"

// DefaultMaxChars is the budget of a pack when Options.MaxChars is 0.
const DefaultMaxChars = 8000

// Source is what a pack is read from: a memfs session.
type Source interface {
	// Entries returns the files under prefix with their Info and, when
	// loaded, their value.
	Entries(prefix string) []backend.Entry
	// Resolve loads the values of keys.
	Resolve(ctx context.Context, keys ...string) error
	// Get returns a loaded value.
	Get(key string) ([]byte, bool)
}

// Hit is one search result.
type Hit struct {
	Key     string
	Score   float64
	Snippet string
}

// Options configure Build.
type Options struct {
	MaxChars  int      // budget in characters (runes); 0 is DefaultMaxChars
	Prefixes  []string // always-loaded prefixes; nil is ["memory/"]
	Summaries int      // how many latest summaries; 0 is 5, negative none
	Query     string   // search query; "" for no search section
	TopK      int      // search hits; 0 is 5
	// Search runs the query; nil leaves the search section out.
	Search func(ctx context.Context, query string, topK int) ([]Hit, error)
}

// Summary is one line of SummariesKey.
type Summary struct {
	Run  string    `json:"run"`
	Step string    `json:"step"`
	Time time.Time `json:"time"`
	Text string    `json:"text"`
}

// Pack is a built context pack.
type Pack struct {
	Text     string
	Included []Included
	LeftOut  []string // keys (or "summary RUN/STEP", "skill NAME", "hit KEY") left out
}

// Included is one file that went into the pack.
type Included struct {
	Key    string
	SHA256 string // of the whole value
	Cut    bool   // only its first lines went in
}

// item is one candidate piece of the pack.
type item struct {
	key   string // for the manifest; "" for none
	text  string
	lines []string // for a memory file, cut by lines
	sum   string
	name  string // what the left-out list says
}

// Build makes a pack from src.
func Build(ctx context.Context, src Source, o Options) (Pack, error) {
	if o.MaxChars == 0 {
		o.MaxChars = DefaultMaxChars
	}
	if o.Prefixes == nil {
		o.Prefixes = []string{"memory/"}
	}
	if o.Summaries == 0 {
		o.Summaries = 5
	}
	if o.TopK == 0 {
		o.TopK = 5
	}
	var sections []section
	mem, err := memoryItems(ctx, src, o.Prefixes)
	if err != nil {
		return Pack{}, err
	}
	sections = append(sections, section{"## Memory\n\n", mem})
	if o.Summaries > 0 {
		sum, err := summaryItems(ctx, src, o.Summaries)
		if err != nil {
			return Pack{}, err
		}
		sections = append(sections, section{"## Recent steps\n\n", sum})
	}
	skills, err := skillItems(ctx, src)
	if err != nil {
		return Pack{}, err
	}
	sections = append(sections, section{"## Skills\n\n", skills})
	if o.Query != "" && o.Search != nil {
		hits, err := o.Search(ctx, o.Query, o.TopK)
		if err != nil {
			return Pack{}, err
		}
		var its []item
		for _, h := range hits {
			its = append(its, item{text: fmt.Sprintf("- %s (score %.2f): %s\n", h.Key, h.Score, oneLine(h.Snippet)), name: "hit " + h.Key})
		}
		sections = append(sections, section{"## Search: " + oneLine(o.Query) + "\n\n", its})
	}
	// The list of what was left out must fit too: lay out again with room
	// kept for it until it does (more left out needs a longer list).
	keep := 0
	for range 6 {
		p := fill(sections, o.MaxChars, keep)
		need := runes(leftOutLine(p.LeftOut, len(p.LeftOut)))
		if len(p.LeftOut) == 0 || p.listed {
			return p.Pack, nil
		}
		keep = max(keep+1, need)
	}
	return fill(sections, o.MaxChars, o.MaxChars).Pack, nil
}

func leftOutLine(names []string, k int) string {
	line := "left out for lack of room:"
	if k > 0 {
		line += " " + strings.Join(names[:k], ", ")
	}
	if k < len(names) {
		line += fmt.Sprintf(" and %d more", len(names)-k)
	}
	return line + "\n"
}

type section struct {
	head  string
	items []item
}

func runes(s string) int { return len([]rune(s)) }

type filled struct {
	Pack
	listed bool // the manifest lists everything left out (by name or count)
}

// fill lays the sections out within max runes, the manifest included,
// keeping keep runes free for the list of what was left out.
func fill(sections []section, max, keep int) filled {
	var body strings.Builder
	var p filled
	used := keep
	manifestHead := "## Manifest\n\n"
	// The manifest's fixed part is reserved from the start, with the blank
	// line that may go before it.
	reserve := runes(manifestHead) + 1
	manifestLine := func(inc Included) string {
		cut := ""
		if inc.Cut {
			cut = " (cut)"
		}
		return fmt.Sprintf("- %s sha256:%s%s\n", inc.Key, inc.SHA256, cut)
	}
	// sep puts a blank line before a heading.
	sep := func(head string) string {
		if b := body.String(); b != "" && !strings.HasSuffix(b, "\n\n") {
			return "\n" + head
		}
		return head
	}
	for _, s := range sections {
		headDone := false
		for _, it := range s.items {
			head := ""
			if !headDone {
				head = sep(s.head)
			}
			cost := func(text string, cut bool) int {
				c := runes(head) + runes(text)
				if it.key != "" {
					c += runes(manifestLine(Included{Key: it.key, SHA256: it.sum, Cut: cut}))
				}
				return c
			}
			text, cut := it.text, false
			if used+reserve+cost(text, false) > max && it.lines != nil {
				text, cut = cutLines(it, max-used-reserve-cost("", true))
			}
			if text == "" || used+reserve+cost(text, cut) > max {
				p.LeftOut = append(p.LeftOut, it.name)
				continue
			}
			body.WriteString(head)
			body.WriteString(text)
			used += runes(head) + runes(text)
			headDone = true
			if it.key != "" {
				inc := Included{Key: it.key, SHA256: it.sum, Cut: cut}
				p.Included = append(p.Included, inc)
				reserve += runes(manifestLine(inc))
			}
		}
	}
	// The manifest's heading was reserved with its blank line.
	manifestHead = sep(manifestHead)
	var m strings.Builder
	m.WriteString(manifestHead)
	for _, inc := range p.Included {
		m.WriteString(manifestLine(inc))
	}
	used -= keep
	left := max - used - runes(m.String())
	if n := len(p.LeftOut); n > 0 {
		for k := n; k >= 0; k-- {
			if line := leftOutLine(p.LeftOut, k); runes(line) <= left {
				m.WriteString(line)
				p.listed = true
				break
			}
		}
	}
	if used+runes(m.String()) <= max {
		body.WriteString(m.String())
	}
	p.Text = body.String()
	return p
}

// cutLines returns it's header line and the longest run of its first
// lines that fits in room runes together with the cut marker; linear in the
// number of lines.
func cutLines(it item, room int) (string, bool) {
	if len(it.lines) < 2 {
		return "", false
	}
	head := it.lines[0]
	total := len(it.lines) - 1
	marker := func(n int) string { return fmt.Sprintf("[cut: %d of %d lines]\n\n", n, total) }
	used := runes(head)
	n := 0
	for n < total-1 && used+runes(it.lines[1+n])+runes(marker(n+1)) <= room {
		used += runes(it.lines[1+n])
		n++
	}
	if n == 0 {
		return "", false
	}
	return head + strings.Join(it.lines[1:1+n], "") + marker(n), true
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func hash(v []byte) string {
	s := sha256.Sum256(v)
	return hex.EncodeToString(s[:])
}

func memoryItems(ctx context.Context, src Source, prefixes []string) ([]item, error) {
	var keys []string
	for _, p := range prefixes {
		for _, e := range src.Entries(p) {
			if e.Key != SummariesKey && !dotted(e.Key) && !slices.Contains(keys, e.Key) {
				keys = append(keys, e.Key)
			}
		}
	}
	slices.Sort(keys)
	if err := src.Resolve(ctx, keys...); err != nil {
		return nil, err
	}
	var out []item
	for _, k := range keys {
		v, ok := src.Get(k)
		if !ok {
			continue // removed meanwhile
		}
		if bytes.IndexByte(v[:min(len(v), 8<<10)], 0) >= 0 {
			// Binary data is no context; its key and hash still are.
			note := fmt.Sprintf("### %s\n\n(binary, %d bytes)\n\n", k, len(v))
			out = append(out, item{key: k, text: note, sum: hash(v), name: k})
			continue
		}
		text := string(bytes.ToValidUTF8(v, []byte("\uFFFD")))
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		head := "### " + k + "\n\n"
		lines := append([]string{head}, strings.SplitAfter(text, "\n")...)
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		out = append(out, item{key: k, text: head + text + "\n", lines: lines, sum: hash(v), name: k})
	}
	return out, nil
}

// ReadSummaries parses the summaries file; lines that do not parse are
// skipped and counted.
func ReadSummaries(v []byte) (sums []Summary, bad int) {
	for line := range bytes.SplitSeq(v, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var s Summary
		if err := json.Unmarshal(line, &s); err != nil {
			bad++
			continue
		}
		sums = append(sums, s)
	}
	return sums, bad
}

func summaryItems(ctx context.Context, src Source, k int) ([]item, error) {
	if len(src.Entries(SummariesKey)) == 0 {
		return nil, nil
	}
	if err := src.Resolve(ctx, SummariesKey); err != nil {
		return nil, err
	}
	v, _ := src.Get(SummariesKey)
	sums, _ := ReadSummaries(v)
	if len(sums) > k {
		sums = sums[len(sums)-k:]
	}
	var out []item
	for _, s := range sums {
		out = append(out, item{
			text: fmt.Sprintf("- %s run %s step %s: %s\n", s.Time.UTC().Format(time.RFC3339), s.Run, s.Step, oneLine(s.Text)),
			name: "summary " + s.Run + "/" + s.Step,
		})
	}
	return out, nil
}

// skillItems lists every skills/NAME/SKILL.md from its front matter: from
// its value when that is in memory already, else from user.memfs.skill (the
// front matter memfs stores with it at each flush), so that no skill's
// value is loaded; only a SKILL.md stored before memfs kept that attribute
// is loaded to read it.
func skillItems(ctx context.Context, src Source) ([]item, error) {
	var es []backend.Entry
	for _, e := range src.Entries("skills/") {
		if meta.IsSkillFile(e.Key) {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	var out []item
	for _, e := range es {
		var name, desc string
		var si meta.SkillInfo
		attr, hasAttr := e.Info.XAttrs[meta.Skill]
		switch {
		case e.Value != nil:
			name, desc = FrontMatter(e.Value)
		case hasAttr && json.Unmarshal(attr, &si) == nil:
			name, desc = si.Name, si.Description
		default:
			if err := src.Resolve(ctx, e.Key); err != nil {
				return nil, err
			}
			v, ok := src.Get(e.Key)
			if !ok {
				continue
			}
			name, desc = FrontMatter(v)
		}
		if name == "" {
			name = strings.Split(e.Key, "/")[1]
		}
		out = append(out, item{text: fmt.Sprintf("- %s: %s (%s)\n", name, oneLine(desc), e.Key), name: "skill " + name})
	}
	return out, nil
}

// FrontMatter returns the name and description of a SKILL.md's front
// matter (see meta.FrontMatter).
func FrontMatter(v []byte) (name, desc string) { return meta.FrontMatter(v) }

// dotted reports whether a segment of key starts with "." (a .git
// directory, an editor's lock): such files are not memory to pack.
func dotted(key string) bool {
	return strings.HasPrefix(key, ".") || strings.Contains(key, "/.")
}

// SkillAttr derives user.memfs.skill (meta.Skill): the front matter of a
// skills/NAME/SKILL.md as JSON (meta.SkillInfo), so that the skills index
// of a pack needs no skill's value; other keys have none. It is a
// session.AttrFunc: register it as session.Options.Derived[meta.Skill].
func SkillAttr(key string, value []byte) ([]byte, bool) {
	if !meta.IsSkillFile(key) {
		return nil, false
	}
	return meta.SkillAttr(value), true
}
