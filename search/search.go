package search

import (
	"container/heap"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/repo"
)

// BM25 parameters and the phrase and proximity bonuses, in units of the
// sum of the query words' IDFs.
const (
	k1 = 1.2
	b  = 0.75

	// phraseWeight: a document holding the query's words as an exact
	// phrase gets this times the sum of their IDFs. A word that occurs
	// once in an average document scores about one IDF, so the phrase is
	// worth about as much as all its words again.
	phraseWeight = 1.0
	// proximityWeight: a document holding every query word, but not as
	// the phrase, gets this times the sum of their IDFs, scaled by how
	// close together they are: (g-1)/(w-1) for g words in a smallest
	// window of w positions.
	proximityWeight = 0.25
	// maxGroups is the longest query, in positions, that phrase matching
	// looks at (a bit per position); the words beyond still score.
	maxGroups = 64
)

// Query is a search: text to rank by, and filters a document must pass.
// The zero value of each filter lets every document through.
type Query struct {
	Text     string  // tokenized as documents are; "" ranks nothing and lists what the filters pass
	TopK     int     // the number of hits; 0 (or less) means 10
	MinScore float64 // hits scoring below are dropped
	Prefix   string  // key prefix
	// Tier, when set, keeps the hits of one tier of a mount's routes:
	// TierWorking (the keys of its memory-only routes), TierIndexed
	// (its sources to search, never to write) or TierPersistent (the
	// others). Route, when set, keeps the hits of one route: its prefix
	// ("skills/"), or "default". The index knows no routes: a service
	// that does (search/live) filters.
	Tier, Route string
	// Repo, when set, is a repository's id (repo.Identify's hash): a
	// document under repos/ passes only when it is that repository's
	// (under repos/REPO/); the rest of the namespace passes.
	Repo string
	// RepoParents, when set, stand for Repo while Repo has no memory (no
	// repos/REPO/repo.json indexed): the first of them that has is read,
	// as a new branch reads its parent's memory until its first write
	// starts its own (repo.Parents). The live service resolves them per
	// caller first: a repo.json the caller may not read is none.
	RepoParents      []string
	Tags             []string  // the document has all of them
	Source, Agent    string    // equal to the document's
	Session, Type    string    // equal to the document's
	ImportanceMin    float64   // the document has an importance of at least this ...
	HasImportanceMin bool      // ... when set
	Since, Until     time.Time // on DocMeta.MTime: Since <= MTime < Until
	Mode             Mode      // how text ranks; Index.Search ranks by keyword whatever the mode
}

// repoLocked is the repository whose memory q reads: the first of
// q.RepoParents with a repo.json indexed while q.Repo has none (see
// Query.RepoParents), else q.Repo.
func (ix *Index) repoLocked(q Query) string {
	return repo.Choose(q.Repo, q.RepoParents, func(hash string) bool { _, ok := ix.byKey[repo.InfoKey(hash)]; return ok })
}

// Hit is one search result.
type Hit struct {
	Key   string
	Score float64
}

// The tiers of Query.Tier, in the order of the tie rule: of two hits of
// one score, working memory's comes first and an indexed source's last.
const (
	TierWorking    = "working"
	TierPersistent = "persistent"
	TierIndexed    = "indexed"
)

// match reports whether d passes q's filters.
func (q *Query) match(d *doc) bool {
	if !strings.HasPrefix(d.key, q.Prefix) {
		return false
	}
	if q.Repo != "" && strings.HasPrefix(d.key, repo.Dir) && !strings.HasPrefix(d.key[len(repo.Dir):], q.Repo+"/") {
		return false // another repository's memory
	}
	for _, t := range q.Tags {
		if !slices.Contains(d.meta.Tags, t) {
			return false
		}
	}
	switch {
	case q.Source != "" && d.meta.Source != q.Source,
		q.Agent != "" && d.meta.Agent != q.Agent,
		q.Session != "" && d.meta.Session != q.Session,
		q.Type != "" && d.meta.Type != q.Type,
		q.HasImportanceMin && (!d.meta.HasImportance || d.meta.Importance < q.ImportanceMin),
		!q.Since.IsZero() && d.meta.MTime.Before(q.Since),
		!q.Until.IsZero() && !d.meta.MTime.Before(q.Until):
		return false
	}
	return true
}

// plan is a query's text as the ranking sees it.
type plan struct {
	terms  []string // distinct terms
	groups [][]int  // groups[g]: indexes into terms of the words at query position g
	member []uint64 // member[t]: bit g set when terms[t] is in groups[g]
}

func newPlan(text string) plan {
	var p plan
	index := make(map[string]int)
	for _, t := range Tokenize(text) {
		i, ok := index[t.Term]
		if !ok {
			i = len(p.terms)
			index[t.Term] = i
			p.terms = append(p.terms, t.Term)
			p.member = append(p.member, 0)
		}
		for len(p.groups) <= t.Pos {
			p.groups = append(p.groups, nil)
		}
		if !slices.Contains(p.groups[t.Pos], i) {
			p.groups[t.Pos] = append(p.groups[t.Pos], i)
		}
		if t.Pos < maxGroups {
			p.member[i] |= 1 << t.Pos
		}
	}
	return p
}

// cursor walks one query term's postings.
type cursor struct {
	it     iterator
	idf    float64
	term   int      // index into plan.terms
	member uint64   // the groups of the term
	pos    []uint32 // positions in the current document, when decoded
}

func (c *cursor) doc() uint32 { return c.it.id }

// Search returns the documents that pass q's filters and hold at least one
// of its terms, best first (ties by key), at most q.TopK of them. With no
// text, it returns the documents the filters pass, by key, all scoring 0.
func (ix *Index) Search(q Query) []Hit {
	k := q.TopK
	if k <= 0 {
		k = 10
	}
	h := &hitHeap{}
	p := newPlan(q.Text)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	q.Repo = ix.repoLocked(q)
	if len(p.terms) == 0 {
		if strings.TrimSpace(q.Text) != "" {
			return nil // text, but no word in it
		}
		for _, d := range ix.docs {
			if d != nil && q.match(d) && q.MinScore <= 0 {
				h.offer(Hit{Key: d.key}, k)
			}
		}
		return h.sorted()
	}
	n := float64(len(ix.byKey))
	if n == 0 {
		return nil
	}
	avgdl := float64(ix.totalLen) / n
	if avgdl == 0 {
		avgdl = 1
	}
	var cs []*cursor
	groupIDF := make([]float64, len(p.groups)) // the best IDF among a group's terms
	for i, t := range p.terms {
		tid, ok := ix.dict[t]
		if !ok {
			continue
		}
		post := &ix.terms[tid]
		df := float64(post.df())
		c := &cursor{it: post.iter(), idf: math.Log(1 + (n-df+0.5)/(df+0.5)), term: i, member: p.member[i]}
		cs = append(cs, c)
		for g := range p.groups {
			if slices.Contains(p.groups[g], i) {
				groupIDF[g] = max(groupIDF[g], c.idf)
			}
		}
	}
	ng := min(len(p.groups), maxGroups)
	all := uint64(1)<<ng - 1
	if ng == 64 {
		all = math.MaxUint64
	}
	sumIDF := 0.0
	for _, f := range groupIDF[:ng] {
		sumIDF += f
	}
	byTerm := make([]*cursor, len(p.terms)) // the cursors on the current document
	var occs []occ                          // scratch space of proximity
	maxBonus := sumIDF * phraseWeight
	for {
		id := uint32(math.MaxUint32)
		for _, c := range cs {
			id = min(id, c.doc())
		}
		if id == math.MaxUint32 {
			break
		}
		d := ix.docs[id]
		if q.match(d) {
			norm := k1 * (1 - b + b*float64(d.length)/avgdl)
			score, seen := 0.0, uint64(0)
			clear(byTerm)
			for _, c := range cs {
				if c.doc() != id {
					continue
				}
				tf := float64(entryTF(c.it.current()))
				score += c.idf * tf * (k1 + 1) / (tf + norm)
				seen |= c.member
				byTerm[c.term] = c
			}
			// The bonus is computed only if it can get the document in.
			if ng > 1 && seen == all && score+maxBonus >= q.MinScore &&
				(len(*h) < k || score+maxBonus >= (*h)[0].Score) {
				var f float64
				f, occs = proximity(p, byTerm, ng, occs)
				score += sumIDF * f
			}
			if score >= q.MinScore {
				h.offer(Hit{Key: d.key, Score: score}, k)
			}
		}
		for _, c := range cs {
			if c.doc() == id {
				c.it.advance()
			}
		}
	}
	return h.sorted()
}

// occ is an occurrence of query terms, for proximity.
type occ struct {
	pos    uint32
	member uint64
}

// proximity returns the bonus factor of a document holding every group of
// the plan: phraseWeight for the exact phrase, less the farther apart the
// groups are. It returns occs, its scratch space, for reuse.
func proximity(p plan, byTerm []*cursor, ng int, occs []occ) (float64, []occ) {
	for _, c := range byTerm {
		if c != nil {
			c.pos = appendPositions(c.pos[:0], c.it.current())
		}
	}
	// Exact phrase: group g at position start+g, for some position start
	// of group 0.
	has := func(g int, at uint32) bool {
		for _, t := range p.groups[g] {
			if c := byTerm[t]; c != nil {
				if _, ok := slices.BinarySearch(c.pos, at); ok {
					return true
				}
			}
		}
		return false
	}
	for _, t := range p.groups[0] {
		c := byTerm[t]
		if c == nil {
			continue
		}
	starts:
		for _, start := range c.pos {
			for g := 1; g < ng; g++ {
				if !has(g, start+uint32(g)) {
					continue starts
				}
			}
			return phraseWeight, occs
		}
	}
	// Otherwise the smallest window holding every group, in any order.
	occs = occs[:0]
	for _, c := range byTerm {
		if c != nil {
			for _, at := range c.pos {
				occs = append(occs, occ{at, c.member})
			}
		}
	}
	slices.SortFunc(occs, func(a, b occ) int { return int(a.pos) - int(b.pos) })
	all := uint64(1)<<ng - 1
	if ng == 64 {
		all = math.MaxUint64
	}
	var count [maxGroups]int
	covered := uint64(0)
	best := uint32(math.MaxUint32)
	lo := 0
	for _, o := range occs {
		for m := o.member & all; m != 0; m &= m - 1 {
			g := bits.TrailingZeros64(m)
			if count[g] == 0 {
				covered |= 1 << g
			}
			count[g]++
		}
		for covered == all {
			best = min(best, o.pos-occs[lo].pos+1)
			for m := occs[lo].member & all; m != 0; m &= m - 1 {
				g := bits.TrailingZeros64(m)
				count[g]--
				if count[g] == 0 {
					covered &^= 1 << g
				}
			}
			lo++
		}
	}
	switch {
	case best == math.MaxUint32:
		return 0, occs
	case int(best) <= ng:
		return proximityWeight, occs
	}
	return proximityWeight * float64(ng-1) / float64(best-1), occs
}

// hitHeap keeps the best hits seen, the worst on top.
type hitHeap []Hit

// better reports whether a ranks before b: higher score, then lower key.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Key < b.Key
}

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offer keeps hit if it is among the k best.
func (h *hitHeap) offer(hit Hit, k int) {
	if len(*h) < k {
		heap.Push(h, hit)
		return
	}
	if better(hit, (*h)[0]) {
		(*h)[0] = hit
		heap.Fix(h, 0)
	}
}

// sorted returns the hits best first.
func (h *hitHeap) sorted() []Hit {
	out := slices.Clone(*h)
	slices.SortFunc(out, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return out
}
