// Package contextpack builds the bounded context an agent loads at the start
// of a step: an index of its skills, the latest step summaries and its
// notes (the files under the always-loaded prefixes), chosen by value
// within a character budget, with a manifest of what went in and why.
//
// A pack is a pure function of its inputs: the Source's entries (key, Info
// with MTime and XAttrs, value), the Options and the query. It never reads
// the clock, depends on map or listing order, or asks a live index, so the
// same inputs give a byte-identical pack (what rebuilding a pack as of an
// event-log position relies on).
//
// # Layout
//
// The pack's first line names it:
//
//	<!-- memfs context pack sha256:HEX seq:N omitted:K -->
//
// HEX is the SHA-256 of the rest of the text (everything after that line);
// seq:N appears when Options.Seq is set (the event-log position the inputs
// are as of); K is how many notes, skills and summaries were left out (the
// manifest names them). A blank line follows, then the sections, each only
// when it has an item:
//
//  1. Skills: one line per skills/NAME/SKILL.md, "- name: description
//     (key)", by key, from its front matter (user.memfs.skill when the
//     value is not loaded). Skill bodies are not included and resources
//     are never read: the first level of progressive skill loading.
//  2. Rules of this repository (with Options.Rules only): each file under
//     those prefixes (a repository's conventions, then its decisions), by
//     key, "### key", a blank line, its value, whatever the query, type
//     or session asked.
//  3. Recent steps: the latest Options.Summaries step summaries (of
//     Options.SummariesKey), oldest first.
//  4. Memory: notes, best first (see Ranking), each "### key", a blank
//     line, its value. A note is a regular file (a symlink, a fifo or
//     another special file is none), not a conflict copy
//     (backend.ParseConflictKey), that Options.Ignore does not exclude,
//     with a value that is not binary (internal/ignore's Binary: a NUL
//     byte in its first 8000 bytes, or bytes that are not UTF-8 in its
//     first KiB); a file that is no note is not in the manifest either.
//     With Options.Type or Options.Session, only the notes whose
//     user.memfs.type or user.memfs.session is that are candidates.
//
// # Ranking
//
// Every note gets score = relevance × importance × recency:
//
//   - relevance: 1 for all without a query. With a query, Options.Rank
//     (DefaultRank when nil) scores the candidates (a pure function of
//     their keys and texts); scores are divided by the best one, and
//     floored at MinRelevance, so that notes with nothing of the query
//     still order among themselves by importance and recency.
//   - importance: user.memfs.importance, 0.5 when unset, floored at
//     MinImportance so that importance 0 lowers a note without erasing
//     its relevance.
//   - recency: 0.5^(age/HalfLife), floored at MinRecency, where age is
//     measured from the newest MTime among the candidate notes, not from
//     now: a pack does not change by itself as time passes, and an old
//     note can still win on relevance.
//
// Ties are broken by key.
//
// # Budget
//
// MaxChars counts runes and covers the whole text, the first line
// included; the output never exceeds it (a budget too small for the first
// line gives an empty text, its manifest listing everything as left out). The hash line is reserved first
// (its omitted count at the widest it could be). Of the rest, B:
//
//  0. Rules, whole, by key, take what they need of B; a rule that does
//     not fit is left out (the manifest says so) and later ones are still
//     tried. B is then what the rules left.
//  1. Skills take what they need up to SkillsShare of B (default 25%),
//     lines by key; a line that does not fit is skipped, later ones are
//     still tried.
//  2. Recent steps take up to SummariesShare of B (default 15%), newest
//     first.
//  3. Notes take what is left, whole, best first; a note that does not fit
//     whole is skipped and later (smaller) ones are still tried. Then, if
//     room is left, the best note left out goes in cut after its last line
//     that fits, marked "[cut: N of M lines]" (a line is never cut).
//  4. What notes leave goes to the skills, then the summaries, that their
//     shares could not hold.
//
// So notes can never take the reserved shares, and a share that its
// section does not use is not wasted. The whole skills index and the latest
// summaries are in the pack whenever they fit in their shares.
//
// # Manifest
//
// Pack.Manifest (Manifest.JSON for its canonical form) holds the pack's
// hash, the budget, the query and the type and session filters, the
// embedder that ranked the notes (Options.Embedder), the reference time
// of recency, each section's reserved and used sizes, each
// included item (kind, key, the SHA-256 of a note's whole value, its score
// parts, cut) and each item left out with its score, or, for one
// Options.Check failed, the check's error (invalid). It is not in the pack and does not count toward the budget.
//
// # Concurrency
//
// Build keeps no state between calls and starts no goroutines, so calls
// may run concurrently wherever the Source and Options.Rank may be used
// concurrently. It calls them on its caller's goroutine, one call at a
// time, holding no lock, and only reads what they return (a value from Get
// may be the session's own, shared with other readers). Over a live
// session a pack is not a snapshot: Build lists, then loads and reads, in
// several calls, so its values may come from different moments while
// memory changes; a note removed in between is skipped (not listed as left
// out), and each hash is of the value that went in. SkillAttr keeps no
// state either: a flush may call it from any goroutine.
package contextpack

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/ignore"
	"github.com/memfs/memfs/meta"
)

// SummariesKey is where step summaries live: one JSON object per line.
const SummariesKey = "memory/summaries.jsonl"

// ManifestSuffix ends the name of a pack's manifest beside the pack:
// .memfs/context.manifest.json for .memfs/context.md, and
// .memfs/context/NAME.manifest.json for .memfs/context/NAME.
const ManifestSuffix = ".manifest.json"

// DefaultMaxChars is the budget of a pack when Options.MaxChars is 0.
const DefaultMaxChars = 8000

// Defaults and floors of the ranking and the budget (see the package doc).
const (
	DefaultHalfLife       = 7 * 24 * time.Hour
	DefaultSkillsShare    = 0.25
	DefaultSummariesShare = 0.15
	MinRelevance          = 0.05
	MinImportance         = 0.05
	MinRecency            = 0.05
	// DefaultImportance is the importance of a note without
	// user.memfs.importance.
	DefaultImportance = 0.5
)

// Source is what a pack is read from: a memfs session, or the files as of
// an event-log position.
type Source interface {
	// Entries returns the files under prefix with their Info and, when
	// loaded, their value.
	Entries(prefix string) []backend.Entry
	// Resolve loads the values of keys. A key whose own value does not
	// load (backend.KeyLocal: damaged, gone) fails it with that key's
	// error once the others are loaded; a pack leaves such a key out.
	Resolve(ctx context.Context, keys ...string) error
	// Get returns a loaded value.
	Get(key string) ([]byte, bool)
}

// Doc is one candidate note as a ranker sees it: its key, its text, and
// the SHA-256 of its value (hex, as in the manifest: a content address a
// ranker may cache what it makes of the text by).
type Doc struct {
	Key    string
	Text   string
	SHA256 string
}

// RankFunc scores docs for query, one score per doc, higher is more
// relevant; negative and non-finite scores count as 0. It must be a pure
// function of query and docs (no clock, no live index): packs are rebuilt
// byte for byte from the same inputs.
type RankFunc func(ctx context.Context, query string, docs []Doc) ([]float64, error)

// Options configure Build. The zero value is a pack of DefaultMaxChars
// over memory/ with the 5 latest summaries and no query.
type Options struct {
	MaxChars  int      // budget in characters (runes); 0 is DefaultMaxChars
	Prefixes  []string // always-loaded prefixes; nil is ["memory/"]
	Summaries int      // how many latest summaries; 0 is 5, negative none
	Query     string   // ranks notes by relevance to it; "" for none
	// Type and Session, when set, keep only the notes whose
	// user.memfs.type, user.memfs.session is that (skills and summaries
	// are kept whatever their attributes).
	Type, Session string
	// Rank scores the notes for Query; nil is DefaultRank.
	Rank RankFunc
	// Embedder is the ID of the model Rank ranks by meaning with ("" for
	// none), shown in the manifest.
	Embedder string
	// HalfLife is the age at which a note's recency halves; 0 is
	// DefaultHalfLife.
	HalfLife time.Duration
	// SkillsShare and SummariesShare are the fractions of the budget
	// reserved for the skills index and the recent steps; 0 is the
	// default, negative none reserved.
	SkillsShare, SummariesShare float64
	// Seq, when not 0, is the event-log position the Source is as of,
	// shown in the hash line and the manifest.
	Seq uint64
	// Ignore, when set, excludes files from the pack by key: no note, no
	// skill (memfs passes its ignore rules: .memfsignore files and VCS
	// metadata). It must be a pure function of the key.
	Ignore func(key string) bool
	// Repo, when set, is the repository (repo.Identify's hash) the pack
	// is for: ParseName reads it from the word repo:HASH, and memfs fills
	// Rules, SummariesKey and Prefixes with that repository's memory. The
	// pack only names it (hash line aside, in the manifest).
	Repo string
	// RepoParents, when set, stand for Repo while Repo has no memory (no
	// repos/REPO/repo.json): the first of them that has is read, as a new
	// branch reads its parent's memory until its first write starts its
	// own (repo.Parents). memfs resolves them; the pack names the
	// repository it read.
	RepoParents []string
	// Rules are prefixes whose files go in before any note, whole, by key,
	// whatever the query, type or session: a repository's conventions and
	// decisions. nil is none.
	Rules []string
	// SummariesKey is the file of step summaries; "" is SummariesKey.
	SummariesKey string
	// Route, when set, names the route a key lives in (a mount of
	// several stores, package route), for the manifest's items.
	Route func(key string) string
	// Tier, when set, ranks the tier a key lives in (a mount of several
	// stores, package route): of two notes of one score, the lower
	// rank's goes first (the tiers' tie rule: working memory, then
	// persistent, then indexed sources).
	Tier func(key string) int
	// Check, when set, checks each note and rule: one it fails is left
	// out, listed in the manifest with the error's text (memfs passes
	// repo.CheckKey: a repository's record that breaks its schema is no
	// rule). It must be a pure function of its arguments.
	Check func(key string, value []byte) error
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
	Manifest Manifest
}

// File returns what the pack's file shows: its text, or with manifest (a
// name ParseName reads as a manifest's) its manifest's JSON.
func (p Pack) File(manifest bool) []byte {
	if manifest {
		return p.Manifest.JSON()
	}
	return []byte(p.Text)
}

// Manifest describes a pack: what went in, what was left out, and why.
type Manifest struct {
	PackSHA256 string    `json:"pack_sha256"` // as in the pack's first line
	Seq        uint64    `json:"seq,omitempty"`
	MaxChars   int       `json:"max_chars"`
	Chars      int       `json:"chars"` // the pack's length in runes
	Query      string    `json:"query,omitempty"`
	Type       string    `json:"type,omitempty"`     // Options.Type
	Session    string    `json:"session,omitempty"`  // Options.Session
	Repo       string    `json:"repo,omitempty"`     // Options.Repo
	Embedder   string    `json:"embedder,omitempty"` // Options.Embedder
	HalfLife   string    `json:"half_life"`
	Newest     time.Time `json:"newest"` // recency's reference: the newest note's MTime
	Sections   []Section `json:"sections"`
	Included   []Item    `json:"included"`
	LeftOut    []Item    `json:"left_out"`
}

// Section is how much of the budget a section had reserved and used, in
// runes.
type Section struct {
	Name     string `json:"name"` // skills, rules (with Options.Rules), summaries, notes
	Reserved int    `json:"reserved"`
	Used     int    `json:"used"`
}

// Item is one candidate of a pack.
type Item struct {
	Kind   string `json:"kind"` // note, rule, skill or summary
	Key    string `json:"key"`
	Name   string `json:"name,omitempty"`   // a skill's name; a summary's RUN/STEP
	SHA256 string `json:"sha256,omitempty"` // a note's whole value
	Chars  int    `json:"chars,omitempty"`  // runes it took (included only)
	Cut    bool   `json:"cut,omitempty"`    // only its first lines went in
	// Invalid is why Options.Check left it out (left out only).
	Invalid string `json:"invalid,omitempty"`
	// Route is the route it came from (Options.Route), "" for none.
	Route string `json:"route,omitempty"`
	Score *Score `json:"score,omitempty"` // notes only
}

// nameRoutes sets each item's Route (Options.Route; nil names none).
func (m *Manifest) nameRoutes(route func(key string) string) {
	if route == nil {
		return
	}
	for _, items := range [][]Item{m.Included, m.LeftOut} {
		for i := range items {
			items[i].Route = route(items[i].Key)
		}
	}
}

// Score is a note's rank and its parts: Score = Relevance × Importance ×
// Recency.
type Score struct {
	Score      float64 `json:"score"`
	Relevance  float64 `json:"relevance"`
	Importance float64 `json:"importance"`
	Recency    float64 `json:"recency"`
}

// JSON returns the manifest's canonical form: indented JSON and a newline.
func (m Manifest) JSON() []byte {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		// Every float is finite (see rankNotes): cannot happen.
		panic("contextpack: manifest: " + err.Error())
	}
	return append(b, '\n')
}

// piece is one candidate of the pack.
type piece struct {
	Item
	text  string
	lines []string // a text note's lines, its heading first, to cut by
	mtime time.Time
	xattr map[string][]byte
	doc   string // the text relevance is scored on
}

// section is a part of the pack being filled.
type section struct {
	name, head, tail string
	reserved, used   int
	in               []*piece
}

// cost is what adding text to s takes.
func (s *section) cost(text string) int {
	c := runes(text)
	if len(s.in) == 0 {
		c += runes(s.head) + runes(s.tail)
	}
	return c
}

func (s *section) add(p *piece, text string, cut bool) {
	c := s.cost(text)
	s.used += c
	p.text, p.Cut, p.Chars = text, cut, runes(text)
	s.in = append(s.in, p)
}

// fill adds the pieces of ps not yet in (in that order) that fit in room
// runes, and returns the room left.
func (s *section) fill(ps []*piece, room int, done map[*piece]bool) int {
	for _, p := range ps {
		if done[p] {
			continue
		}
		if c := s.cost(p.text); c <= room {
			s.add(p, p.text, false)
			done[p] = true
			room -= c
		}
	}
	return room
}

func (s *section) render(b *strings.Builder) {
	if len(s.in) == 0 {
		return
	}
	b.WriteString(s.head)
	for _, p := range s.in {
		b.WriteString(p.text)
	}
	b.WriteString(s.tail)
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
	if o.SummariesKey == "" {
		o.SummariesKey = SummariesKey
	}
	if o.HalfLife <= 0 {
		o.HalfLife = DefaultHalfLife
	}
	if o.Rank == nil {
		o.Rank = DefaultRank
	}
	share := func(v, def float64) float64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return min(v, 1)
	}
	skillsShare, sumShare := share(o.SkillsShare, DefaultSkillsShare), share(o.SummariesShare, DefaultSummariesShare)

	notes, invalid, err := noteItems(ctx, src, o, o.Prefixes, "note")
	if err != nil {
		return Pack{}, err
	}
	var rules []*piece
	if o.Rules != nil {
		ro := o
		ro.Type, ro.Session = "", ""
		var bad []Item
		if rules, bad, err = noteItems(ctx, src, ro, o.Rules, "rule"); err != nil {
			return Pack{}, err
		}
		invalid = append(slices.DeleteFunc(invalid, func(it Item) bool { // a rule is no note too
			return slices.ContainsFunc(bad, func(r Item) bool { return r.Key == it.Key })
		}), bad...)
		notes = slices.DeleteFunc(notes, func(p *piece) bool { // a rule is no note too
			return slices.ContainsFunc(rules, func(r *piece) bool { return r.Key == p.Key })
		})
	}
	newest, err := rankNotes(ctx, notes, o)
	if err != nil {
		return Pack{}, err
	}
	var sums []*piece
	if o.Summaries > 0 {
		if sums, err = summaryItems(ctx, src, o.SummariesKey, o.Summaries); err != nil {
			return Pack{}, err
		}
	}
	skills, err := skillItems(ctx, src, o)
	if err != nil {
		return Pack{}, err
	}

	total := len(notes) + len(sums) + len(skills) + len(rules) + len(invalid)
	reserve := runes(hashLine(strings.Repeat("0", 64), o.Seq, total))
	b := max(o.MaxChars-reserve, 0)
	sk := &section{name: "skills", head: "## Skills\n\n", tail: "\n", reserved: int(float64(b) * skillsShare)}
	su := &section{name: "summaries", head: "## Recent steps\n\n", tail: "\n", reserved: int(float64(b) * sumShare)}
	ru := &section{name: "rules", head: "## Rules of this repository\n\n"}
	no := &section{name: "notes", head: "## Memory\n\n"}
	done := map[*piece]bool{}
	if o.MaxChars >= reserve {
		// Rules first: they hold whatever else is asked.
		ru.reserved = b
		ru.fill(rules, b, done)
		b -= ru.used
		sk.reserved = min(int(float64(b)*skillsShare), b)
		su.reserved = int(float64(b) * sumShare)
		sk.fill(skills, sk.reserved, done)
		su.reserved = min(su.reserved, b-sk.used) // shares that add up to more than the budget
		newestFirst := slices.Clone(sums)
		slices.Reverse(newestFirst)
		su.fill(newestFirst, su.reserved, done)
		room := b - sk.used - su.used
		no.reserved = room
		room = no.fill(notes, room, done)
		for _, p := range notes {
			if done[p] {
				continue
			}
			if p.lines != nil {
				if text, ok := cutLines(p.lines, room-no.cost("")); ok {
					room -= no.cost(text)
					no.add(p, text, true)
					done[p] = true
				}
			}
			break // only the best note left out is cut
		}
		room = sk.fill(skills, room, done)
		su.fill(newestFirst, room, done)
		// Display order: skills by key, summaries oldest first, notes
		// best first (the order of their candidate lists).
		for _, s := range []struct {
			sec *section
			all []*piece
		}{{sk, skills}, {ru, rules}, {su, sums}, {no, notes}} {
			s.sec.in = slices.DeleteFunc(slices.Clone(s.all), func(p *piece) bool { return !done[p] })
		}
	}

	secs := []*section{sk, su, no}
	if o.Rules != nil {
		secs = []*section{sk, ru, su, no}
	}
	var body strings.Builder
	for _, s := range secs {
		s.render(&body)
	}
	sum := sha256.Sum256([]byte(body.String()))
	m := Manifest{
		PackSHA256: hex.EncodeToString(sum[:]),
		Seq:        o.Seq,
		MaxChars:   o.MaxChars,
		Query:      o.Query,
		Type:       o.Type,
		Session:    o.Session,
		Repo:       o.Repo,
		Embedder:   o.Embedder,
		HalfLife:   o.HalfLife.String(),
		Newest:     newest,
		Included:   []Item{},
		LeftOut:    []Item{},
	}
	for _, s := range secs {
		m.Sections = append(m.Sections, Section{Name: s.name, Reserved: s.reserved, Used: s.used})
	}
	for _, all := range [][]*piece{skills, rules, sums, notes} {
		for _, p := range all {
			if done[p] {
				m.Included = append(m.Included, p.Item)
			} else {
				it := p.Item
				it.Chars = 0
				m.LeftOut = append(m.LeftOut, it)
			}
		}
	}
	m.LeftOut = append(m.LeftOut, invalid...)
	m.nameRoutes(o.Route)
	text := ""
	if o.MaxChars >= reserve {
		text = hashLine(m.PackSHA256, o.Seq, len(m.LeftOut)) + body.String()
	}
	m.Chars = runes(text)
	return Pack{Text: text, Manifest: m}, nil
}

// hashLine is the pack's first line and the blank line after it.
func hashLine(sum string, seq uint64, omitted int) string {
	s := ""
	if seq != 0 {
		s = " seq:" + strconv.FormatUint(seq, 10)
	}
	return fmt.Sprintf("<!-- memfs context pack sha256:%s%s omitted:%d -->\n\n", sum, s, omitted)
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// cutLines returns the heading line (lines[0]) and the longest run of the
// first lines after it that fits in room runes together with the cut
// marker; linear in the number of lines.
func cutLines(lines []string, room int) (string, bool) {
	if len(lines) < 3 {
		return "", false
	}
	head := lines[0]
	total := len(lines) - 1
	marker := func(n int) string { return fmt.Sprintf("[cut: %d of %d lines]\n\n", n, total) }
	used := runes(head)
	n := 0
	for n < total-1 && used+runes(lines[1+n])+runes(marker(n+1)) <= room {
		used += runes(lines[1+n])
		n++
	}
	if n == 0 {
		return "", false
	}
	return head + strings.Join(lines[1:1+n], "") + marker(n), true
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func hash(v []byte) string {
	s := sha256.Sum256(v)
	return hex.EncodeToString(s[:])
}

// noteItems returns the notes (items of kind) under prefixes, by key, with
// their values, and those Options.Check fails.
func noteItems(ctx context.Context, src Source, o Options, prefixes []string, kind string) (_ []*piece, invalid []Item, _ error) {
	byKey := map[string]backend.Entry{}
	var keys []string
	for _, p := range prefixes {
		for _, e := range src.Entries(p) {
			if _, ok := byKey[e.Key]; ok || e.Key == o.SummariesKey || e.Key == SummariesKey || dotted(e.Key) || !e.Info.Mode.IsRegular() || ignored(o, e.Key) || conflictCopy(e.Key) {
				continue
			}
			if o.Type != "" || o.Session != "" {
				if a := meta.Parse(e.Info.XAttrs); o.Type != "" && a.Type != o.Type || o.Session != "" && a.Session != o.Session {
					continue
				}
			}
			byKey[e.Key] = e
			keys = append(keys, e.Key)
		}
	}
	slices.Sort(keys)
	if err := src.Resolve(ctx, keys...); err != nil && !backend.KeyLocal(err) {
		return nil, nil, err
	}
	var out []*piece
	for _, k := range keys {
		v, ok := src.Get(k)
		if !ok {
			continue // removed meanwhile, or damaged (memfs fsck names it)
		}
		if ignore.Binary(v) {
			continue // bytes, not words: no context
		}
		if o.Check != nil {
			if err := o.Check(k, v); err != nil {
				invalid = append(invalid, Item{Kind: kind, Key: k, SHA256: hash(v), Invalid: err.Error()})
				continue
			}
		}
		e := byKey[k]
		p := &piece{Item: Item{Kind: kind, Key: k, SHA256: hash(v)}, mtime: e.Info.MTime, xattr: e.Info.XAttrs}
		text := string(bytes.ToValidUTF8(v, []byte("\uFFFD")))
		p.doc = text
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		head := "### " + k + "\n\n"
		lines := append([]string{head}, strings.SplitAfter(text, "\n")...)
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		p.text, p.lines = head+text+"\n", lines
		out = append(out, p)
	}
	return out, invalid, nil
}

// rankNotes scores notes (see the package doc) and sorts them best first;
// it returns the newest MTime, recency's reference.
func rankNotes(ctx context.Context, notes []*piece, o Options) (time.Time, error) {
	var newest time.Time
	for _, p := range notes {
		if p.mtime.After(newest) {
			newest = p.mtime
		}
	}
	rel := make([]float64, len(notes))
	for i := range rel {
		rel[i] = 1
	}
	if strings.TrimSpace(o.Query) != "" && len(notes) > 0 {
		docs := make([]Doc, len(notes))
		for i, p := range notes {
			docs[i] = Doc{Key: p.Key, Text: p.doc, SHA256: p.SHA256}
		}
		raw, err := o.Rank(ctx, o.Query, docs)
		if err != nil {
			return time.Time{}, fmt.Errorf("contextpack: rank notes: %w", err)
		}
		if len(raw) != len(docs) {
			return time.Time{}, fmt.Errorf("contextpack: rank notes: %d scores for %d notes", len(raw), len(docs))
		}
		best := 0.0
		for i, r := range raw {
			if math.IsNaN(r) || math.IsInf(r, 0) || r < 0 {
				raw[i] = 0
			}
			best = max(best, raw[i])
		}
		for i, r := range raw {
			rel[i] = MinRelevance
			if best > 0 {
				rel[i] = max(r/best, MinRelevance)
			}
		}
	}
	for i, p := range notes {
		imp := DefaultImportance
		if a := meta.Parse(p.xattr); a.HasImp {
			imp = a.Importance
		}
		imp = max(imp, MinImportance)
		rec := 1.0
		if age := newest.Sub(p.mtime); age > 0 {
			rec = max(math.Pow(0.5, float64(age)/float64(o.HalfLife)), MinRecency)
		}
		p.Score = &Score{Score: rel[i] * imp * rec, Relevance: rel[i], Importance: imp, Recency: rec}
	}
	slices.SortStableFunc(notes, func(a, b *piece) int {
		if c := cmp.Compare(b.Score.Score, a.Score.Score); c != 0 {
			return c
		}
		if o.Tier != nil {
			if c := cmp.Compare(o.Tier(a.Key), o.Tier(b.Key)); c != 0 {
				return c
			}
		}
		return strings.Compare(a.Key, b.Key)
	})
	return newest, nil
}

// DefaultRank is the ranker used when Options.Rank is nil: each query term
// (a run of letters and digits, case folded) found in a doc's key or text
// adds log(1 + N/df), where N is the number of docs and df how many hold
// the term.
func DefaultRank(_ context.Context, query string, docs []Doc) ([]float64, error) {
	q := terms(query)
	has := make([]map[string]bool, len(docs))
	df := map[string]int{}
	for i, d := range docs {
		has[i] = map[string]bool{}
		for _, t := range terms(d.Key + " " + d.Text) {
			if !has[i][t] {
				has[i][t] = true
				df[t]++
			}
		}
	}
	out := make([]float64, len(docs))
	for i := range docs {
		for _, t := range q {
			if has[i][t] {
				out[i] += math.Log1p(float64(len(docs)) / float64(df[t]))
			}
		}
	}
	return out, nil
}

// terms returns the distinct terms of s, in order of first appearance.
func terms(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
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

// summaryItems returns the latest k summaries of key, oldest first.
func summaryItems(ctx context.Context, src Source, key string, k int) ([]*piece, error) {
	if len(src.Entries(key)) == 0 {
		return nil, nil
	}
	if err := src.Resolve(ctx, key); backend.KeyLocal(err) {
		return nil, nil // damaged: the pack goes on without summaries
	} else if err != nil {
		return nil, err
	}
	v, _ := src.Get(key)
	sums, _ := ReadSummaries(v)
	if len(sums) > k {
		sums = sums[len(sums)-k:]
	}
	var out []*piece
	for _, s := range sums {
		out = append(out, &piece{
			Item: Item{Kind: "summary", Key: key, Name: s.Run + "/" + s.Step},
			text: fmt.Sprintf("- %s run %s step %s: %s\n", s.Time.UTC().Format(time.RFC3339), s.Run, s.Step, oneLine(s.Text)),
		})
	}
	return out, nil
}

// skillItems lists every skills/NAME/SKILL.md from its front matter: from
// its value when that is in memory already, else from user.memfs.skill (the
// front matter memfs stores with it at each flush), so that no skill's
// value is loaded; only a SKILL.md stored before memfs kept that attribute
// is loaded to read it.
func skillItems(ctx context.Context, src Source, o Options) ([]*piece, error) {
	var es []backend.Entry
	seen := map[string]bool{}
	for _, e := range src.Entries("skills/") {
		if meta.IsSkillFile(e.Key) && e.Info.Mode.IsRegular() && !ignored(o, e.Key) && !seen[e.Key] {
			seen[e.Key] = true
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	var out []*piece
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
			if err := src.Resolve(ctx, e.Key); err != nil && !backend.KeyLocal(err) {
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
		out = append(out, &piece{
			Item: Item{Kind: "skill", Key: e.Key, Name: name},
			text: fmt.Sprintf("- %s: %s (%s)\n", name, oneLine(desc), e.Key),
		})
	}
	return out, nil
}

// FrontMatter returns the name and description of a SKILL.md's front
// matter (see meta.FrontMatter).
func FrontMatter(v []byte) (name, desc string) { return meta.FrontMatter(v) }

// conflictCopy reports whether key is a conflict copy (backend.ConflictKey,
// ConflictKeyBy): one side of a conflict nobody has resolved yet. The
// original note is in the pack; its copy would show the agent the same
// note twice, one version of it possibly stale.
func conflictCopy(key string) bool {
	_, _, _, ok := backend.ParseConflictKey(key)
	return ok
}

// ignored reports whether o.Ignore excludes key.
func ignored(o Options, key string) bool { return o.Ignore != nil && o.Ignore(key) }

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
