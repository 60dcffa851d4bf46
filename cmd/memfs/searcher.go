package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/search"
	"github.com/memfs/memfs/session"
)

// searcher keeps the search index of a session. Its base index holds what
// the store holds (it follows every flush through session.Options.Saved and
// external changes through a watch) and is persisted in the store's system
// records; unflushed changes are indexed at each search into a small
// overlay, so results reflect writes not flushed yet, and an unflushed
// secret never reaches the persisted index.
type searcher struct {
	c   *session.Context
	st  backend.SysStore
	log *slog.Logger

	base    *search.Index
	opts    search.Options // base's, and the overlay's of each search
	applyMu sync.Mutex     // serializes apply: queued changes go into base in order

	mu      sync.Mutex    // guards the fields below
	pending []indexChange // flushed changes not yet in base
	dirty   bool          // base changed since its last save
	wake    chan struct{} // tells the worker there is work
	stop    chan struct{} // closed by close
	done    chan struct{} // closed when the worker has ended
}

// indexChange is a value the store now holds, or a key it deleted.
type indexChange struct {
	e       backend.Entry
	deleted bool
}

// saveDelay is how long the worker waits before persisting the index after
// a change: flushes in a burst cost one save. A crash in between leaves
// stale stamps, which the next open repairs.
const saveDelay = 2 * time.Second

// openSearcher loads the persisted index and brings it up to date with the
// store: keys missing from it, gone from the store, or indexed from another
// version (size and mtime) are indexed again. A corrupt index is rebuilt.
// rebuild forces a rebuild from scratch (memfs reindex).
// openSearcher opens the store's search index (a new one with rebuild) and
// brings it up to date with the store, reporting that work's progress to
// progressTo when it is not nil.
func openSearcher(ctx context.Context, c *session.Context, st backend.SysStore, log *slog.Logger, rebuild bool, progressTo io.Writer) (*searcher, int, error) {
	// The index is persisted with the store, so it never holds a raw
	// secret: it redacts (the values it indexes, its snippets) with the
	// session's redactor, or, when the session has none, with the default
	// rules and config file. The store commands (reindex, search) open
	// the store without a redactor, so nil cannot be told from
	// --no-redact here; and --no-redact asks for values kept as written,
	// not for an index of secrets.
	red := c.Redactor()
	if red == nil {
		var cfg redact.Config
		if _, err := os.Stat(defaultRedactConfig()); err == nil {
			if cfg, err = redact.LoadConfig(defaultRedactConfig()); err != nil {
				return nil, 0, fmt.Errorf("search index: redaction config %s: %w", defaultRedactConfig(), err)
			}
		}
		var err error
		if red, err = redact.New(cfg); err != nil {
			return nil, 0, fmt.Errorf("search index: %w", err)
		}
	}
	opts := search.Options{Logger: log, Redact: func(key string, v []byte) ([]byte, []string) {
		out, findings := red.Redact(key, v)
		if len(findings) == 0 {
			return out, nil
		}
		rules := make([]string, len(findings))
		for i, f := range findings {
			rules[i] = f.RuleID
		}
		return out, rules
	}}
	ix, err := search.Load(ctx, st, opts)
	if errors.Is(err, search.ErrCorrupt) {
		log.Warn("search index corrupt; rebuilding it", "err", err)
		rebuild = true
	} else if err != nil {
		return nil, 0, fmt.Errorf("search index: %w", err)
	}
	if rebuild {
		old, err := st.ListSys(ctx, search.RecordPrefix)
		if err != nil {
			return nil, 0, err
		}
		var names []string
		for _, e := range old {
			names = append(names, e.Key)
		}
		if err := st.DeleteSys(ctx, names...); err != nil {
			return nil, 0, fmt.Errorf("search index: remove the old one: %w", err)
		}
		ix = search.New(opts)
	}
	s := &searcher{c: c, st: st, log: log, base: ix, opts: opts,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	n, err := s.repair(ctx, progressTo)
	if err != nil {
		return nil, 0, err
	}
	go s.worker()
	return s, n, nil
}

// repair indexes every stored key whose stamp differs from the index's.
func (s *searcher) repair(ctx context.Context, progressTo io.Writer) (int, error) {
	stamps := s.base.Stamps()
	var stale []string
	// Walked, never held whole: only the stale keys are kept.
	err := backend.Walk(ctx, s.st, func(batch []backend.Entry) error {
		for _, e := range batch {
			if !e.Info.Mode.IsRegular() {
				continue // directories, symlinks and special files hold no text
			}
			m := search.MetaOf(e.Info)
			if st, ok := stamps[e.Key]; !ok || st.Size != m.Size || st.MTime != m.MTime.UnixNano() {
				stale = append(stale, e.Key)
			}
			delete(stamps, e.Key)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	slices.Sort(stale)      // loaded in key order, as List gave them
	for k := range stamps { // indexed, no longer stored
		s.base.Delete(k)
	}
	var bar *progress
	if progressTo != nil {
		bar = newProgress(progressTo, "index", len(stale))
	}
	const chunk = 512
	for i := 0; i < len(stale); i += chunk {
		got, err := s.st.Load(ctx, stale[i:min(i+chunk, len(stale))]...)
		if err != nil {
			return 0, fmt.Errorf("search index: %w", err)
		}
		for _, e := range got {
			s.base.Put(e.Key, e.Value, search.MetaOf(e.Info))
		}
		if bar != nil {
			bar.add(len(got))
		}
	}
	if bar != nil {
		bar.done()
	}
	if n := len(stale) + len(stamps); n > 0 {
		s.log.Info("search index brought up to date with the store", "indexed", len(stale), "dropped", len(stamps))
		if _, err := s.base.Save(ctx, s.st); err != nil {
			return 0, fmt.Errorf("search index: save: %w", err)
		}
		return n, nil
	}
	return 0, nil
}

// saved follows a flush: the store now holds these values (redacted). It
// only queues them: indexing and saving run in the worker, off the flush's
// path (saving a shard of a 100,000-note index takes ~140 ms); a search
// applies what is queued first.
func (s *searcher) saved(ctx context.Context, saved []backend.Entry, deleted []string) {
	s.mu.Lock()
	for _, e := range saved {
		if e.Info.Mode.IsRegular() {
			s.pending = append(s.pending, indexChange{e: e})
		}
	}
	for _, k := range deleted {
		s.pending = append(s.pending, indexChange{e: backend.Entry{Key: k}, deleted: true})
	}
	s.mu.Unlock()
	s.poke()
}

func (s *searcher) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// apply moves the queued changes into base.
func (s *searcher) apply() {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	s.mu.Lock()
	p := s.pending
	s.pending = nil
	if len(p) > 0 {
		s.dirty = true
	}
	s.mu.Unlock()
	for _, ch := range p {
		if ch.deleted {
			s.base.Delete(ch.e.Key)
		} else {
			s.base.Put(ch.e.Key, ch.e.Value, search.MetaOf(ch.e.Info))
		}
	}
}

// worker applies queued changes and saves the index saveDelay after them.
func (s *searcher) worker() {
	defer close(s.done)
	var timer <-chan time.Time
	for {
		select {
		case <-s.wake:
			s.apply()
			if timer == nil {
				timer = time.After(saveDelay)
			}
		case <-timer:
			timer = nil
			s.save(context.Background())
		case <-s.stop:
			return
		}
	}
}

func (s *searcher) save(ctx context.Context) {
	s.mu.Lock()
	dirty := s.dirty
	s.dirty = false
	s.mu.Unlock()
	if !dirty {
		return
	}
	if _, err := s.base.Save(ctx, s.st); err != nil {
		// The next open finds the stale stamps and repairs the index.
		s.log.Warn("search index not saved; it is repaired when next opened", "err", err)
	}
}

// external follows changes other programs made in the store.
func (s *searcher) external(ch session.Change) {
	if ch.Origin != session.OriginExternal {
		return
	}
	switch ch.Op {
	case session.OpRemove:
		s.saved(context.Background(), nil, []string{ch.Key})
	case session.OpCreate, session.OpWrite, session.OpContent:
		v, ok := s.c.Get(ch.Key)
		es := s.c.Entries(ch.Key)
		if !ok || len(es) == 0 || es[0].Key != ch.Key {
			return
		}
		es[0].Value = v
		s.saved(context.Background(), es[:1], nil)
	}
}

// close stops the worker and saves what is not saved yet.
func (s *searcher) close(ctx context.Context) {
	close(s.stop)
	<-s.done
	s.apply()
	s.save(ctx)
}

// result is one search hit with its snippet.
type result struct {
	Key     string  `json:"key"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet"`
}

// errNoCaller refuses a search that does not say for whom it runs: its
// results are filtered by what the caller may read.
var errNoCaller = errors.New("search: the caller is unknown (no session.Cred in the context)")

// search runs q over the store's index and the unflushed changes, for the
// caller in ctx (session.CredFrom): hits it may not read (session CanRead,
// as the kernel would decide through the mount) are dropped before the
// best TopK are taken, so it gets TopK hits it may read when there are.
func (s *searcher) search(ctx context.Context, q search.Query) ([]result, error) {
	cr, ok := session.CredFrom(ctx)
	if !ok {
		return nil, errNoCaller
	}
	topK := q.TopK
	if topK <= 0 {
		topK = 10
	}
	s.apply() // what flushes queued
	dirty, removed := s.c.Unflushed()
	overlay := search.New(s.opts)
	shadowed := make(map[string]bool, len(dirty)+len(removed))
	for _, e := range dirty {
		overlay.Put(e.Key, e.Value, search.MetaOf(e.Info))
		shadowed[e.Key] = true
	}
	for _, k := range removed {
		shadowed[k] = true
	}
	// readable keeps the hits the caller may read, and that are not
	// shadowed by an unflushed change (which the overlay answers for).
	readable := func(hits []search.Hit, shadowed map[string]bool) []search.Hit {
		keys := make([]string, len(hits))
		for i, h := range hits {
			keys[i] = h.Key
		}
		ok := s.c.Readable(cr, keys...)
		kept := hits[:0]
		for i, h := range hits {
			if ok[i] && !shadowed[h.Key] {
				kept = append(kept, h)
			}
		}
		return kept
	}
	// The base index is asked for more until enough hits pass, or it has
	// no more: a caller who may read few of the best hits still gets topK.
	var hits []search.Hit
	for k := topK + len(shadowed); ; k *= 4 {
		bq := q
		bq.TopK = k
		got := s.base.Search(bq)
		n := len(got)
		hits = readable(got, shadowed)
		if len(hits) >= topK || n < k {
			break
		}
	}
	oq := q
	oq.TopK = max(topK, overlay.Len()) // every match: some may be dropped
	hits = append(hits, readable(overlay.Search(oq), nil)...)
	slices.SortFunc(hits, func(a, b search.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	if len(hits) > topK {
		hits = hits[:topK]
	}
	out := make([]result, 0, len(hits))
	for _, h := range hits {
		if err := s.c.Resolve(ctx, h.Key); err != nil {
			continue // removed meanwhile
		}
		v, _ := s.c.Get(h.Key)
		out = append(out, result{Key: h.Key, Score: h.Score, Snippet: s.base.Snippet(h.Key, v, q, 160)})
	}
	return out, nil
}

// answer serves .memfs/search/NAME: ranked results as text blocks, or JSON
// lines with the word format:json in the name. Only the files the caller in
// ctx may read are searched (see search).
func (s *searcher) answer(ctx context.Context, name string) ([]byte, error) {
	name, asJSON := cutFormat(name)
	q, err := search.ParseQuery(name)
	if err != nil {
		return nil, err
	}
	res, err := s.search(ctx, q)
	if err != nil {
		return nil, err
	}
	return formatResults(res, asJSON), nil
}

// contextSearch is the search of context packs.
func (s *searcher) contextSearch(ctx context.Context, query string, topK int) ([]contextpack.Hit, error) {
	q, err := search.ParseQuery(query)
	if err != nil {
		return nil, err
	}
	q.TopK = topK
	res, err := s.search(ctx, q)
	if err != nil {
		return nil, err
	}
	hits := make([]contextpack.Hit, len(res))
	for i, r := range res {
		hits[i] = contextpack.Hit{Key: r.Key, Score: r.Score, Snippet: r.Snippet}
	}
	return hits, nil
}

// cutFormat removes the word format:json from a query name.
func cutFormat(name string) (string, bool) {
	dec, err := url.PathUnescape(name)
	if err != nil {
		return name, false
	}
	words := strings.Fields(dec)
	asJSON := false
	kept := words[:0]
	for _, w := range words {
		if w == "format:json" {
			asJSON = true
			continue
		}
		kept = append(kept, w)
	}
	if !asJSON {
		return name, false
	}
	return url.PathEscape(strings.Join(kept, " ")), true
}

// formatResults renders results: one block per hit (key and score, then
// the snippet indented, then a blank line), or one JSON object per line.
func formatResults(res []result, asJSON bool) []byte {
	var b bytes.Buffer
	if asJSON {
		enc := json.NewEncoder(&b)
		for _, r := range res {
			enc.Encode(r)
		}
		return b.Bytes()
	}
	for _, r := range res {
		fmt.Fprintf(&b, "%s  score %.3f\n  %s\n\n", showName(r.Key), r.Score, r.Snippet)
	}
	return b.Bytes()
}
