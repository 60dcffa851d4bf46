package live

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/embed"
	"github.com/memfs/memfs/internal/ignore"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/repo"
	"github.com/memfs/memfs/search"
	"github.com/memfs/memfs/session"
)

// Lock order in this file: Service.applyMu, then Service.mu, then the
// Index's own lock. A Service holds no lock of its own while it calls the
// session or the store; under applyMu it calls only the Index, but when a
// change of an ignore file has it read the rules again and bring base up
// to date with them (loadRules, reconcile: the session's and the store's
// reads, no write).

// ServiceOptions configures OpenService. Redactor is required; the zero
// value of the others opens the persisted index, logs nothing, reports no
// progress and saves DefaultSaveDelay after a change.
type ServiceOptions struct {
	// Redactor redacts everything the index takes in (Options.Redact): the
	// index is persisted with the store, so it never holds a raw secret.
	// It is required, also when the session persists values as written
	// (--no-redact asks for values kept as written, not for an index of
	// secrets): the caller passes the session's redactor or, when the
	// session has none, one of its own (memfs: the default rules and the
	// config file).
	Redactor *redact.Redactor
	// Logger receives the repair and rebuild notes and the failures of the
	// saves made in the background; nil discards.
	Logger *slog.Logger
	// Rebuild deletes the persisted index and builds it again from every
	// value of the store (memfs reindex).
	Rebuild bool
	// InMemory keeps the index in memory only: the persisted index is
	// loaded and brought up to date, but nothing is ever saved to the
	// store or deleted from it (a corrupt one, or Rebuild, builds a new
	// one in memory beside it). For a session that writes nothing (a
	// command that only reads, on a store opened read-only).
	InMemory bool
	// Progress, when set, is told of the values OpenService indexes to
	// bring the index up to date with the store.
	Progress Progress
	// SaveDelay is how long after a change the index is saved; 0 means
	// DefaultSaveDelay.
	SaveDelay time.Duration
	// Embedder, when set, gives every document a vector (of its redacted
	// value) for semantic and hybrid search; nil searches by keyword only.
	Embedder embed.Embedder
	// Fusion sets hybrid ranking; nil means DefaultFusion().
	Fusion *search.Fusion
	// EmbedWait bounds how long a search waits for the embedder (the
	// query's vector and the unflushed values'); what is not ready by then
	// ranks by keyword. 0 means DefaultEmbedWait.
	EmbedWait time.Duration
	// Working are the key prefixes of working memory (a route whose
	// store is memory only): their values never enter the persisted
	// index; each search reads them from the session, as it reads the
	// unflushed values.
	Working []string
	// Route, when set, names the route and the tier a key lives in (a
	// mount of several stores): searches filter by both (Query.Route,
	// Query.Tier), and of two hits of one score the first tier's comes
	// first (search.TierWorking, then search.TierPersistent, then
	// search.TierIndexed). Without it a key is the default route's, and
	// working memory when under Working.
	Route func(key string) (name, tier string)
}

// Progress reports the indexing OpenService does: Start with the number of
// values it is about to index (possibly 0), Add as they are indexed, and
// Done when it is over. Its methods are called from OpenService's
// goroutine only.
type Progress interface {
	Start(total int)
	Add(n int)
	Done()
}

// DefaultSaveDelay is how long a Service waits before persisting the index
// after a change: flushes in a burst cost one save. A crash in between
// leaves stale stamps, which the next open repairs.
const DefaultSaveDelay = 2 * time.Second

// ErrNoCaller refuses a search that does not say for whom it runs (no
// session.Cred in its context): its results are filtered by what the
// caller may read.
var ErrNoCaller = errors.New("search: the caller is unknown (no session.Cred in the context)")

// Service is the live search index of a session. Its base index holds
// what the store holds: it follows every flush (Saved, the session's
// Options.Saved hook) and the external changes the session is told of (a
// watch it keeps from OpenService to Close), and is persisted in the
// store's system records by a worker goroutine, DefaultSaveDelay after a
// change. Unflushed changes are indexed at each search into a small
// overlay, which is never persisted: results reflect writes not flushed
// yet, and an unflushed secret never reaches the disk.
type Service struct {
	c         *session.Context // immutable after OpenService
	st        backend.SysStore
	log       *slog.Logger
	base      *search.Index
	opts      search.Options // base's, and the overlay's of each search
	delay     time.Duration
	repaired  int
	inMemory  bool                                 // ServiceOptions.InMemory: nothing is saved
	workingAt []string                             // ServiceOptions.Working
	route     func(key string) (name, tier string) // ServiceOptions.Route
	stopWatch func()
	emb       embed.Embedder  // nil: keyword only
	vec       *search.Vectors // nil without emb
	fusion    search.Fusion
	embedWait time.Duration
	cache     *vecCache       // the vectors of queries and unflushed values
	ectx      context.Context // cancelled by Close: ends the embeds in flight
	ecancel   context.CancelFunc
	ewake     chan struct{}  // tells the embed worker there is work
	edone     chan struct{}  // closed when the embed worker has ended
	inflight  sync.WaitGroup // the search-time embeds, which may outlive their search
	slots     chan struct{}  // one token a search-time embed running: at most searchEmbeds

	applyMu sync.Mutex // serializes apply: queued changes go into base in order

	// rules are the ignore rules (internal/ignore) of the session as last
	// read: what they exclude is never in base nor a hit. rulesStale says
	// an ignore file may have changed since (set by the session watch,
	// which must not block); the next search or apply reads them again.
	rules      atomic.Pointer[ignore.Rules]
	rulesStale atomic.Bool

	mu      sync.Mutex    // guards the fields below
	pending []change      // flushed changes not yet in base
	dirty   bool          // base changed since its last save
	closed  bool          // Close has begun: changes are no longer queued
	wake    chan struct{} // tells the worker there is work
	stop    chan struct{} // closed by Close
	done    chan struct{} // closed when the worker has ended

	embedQ    embedQueue // documents to embed: their vectors are missing or stale
	lastErr   error      // the embedder's last failure, nil after a success
	lastErrAt time.Time
	refused   int // documents the model refused alone (isolate)
}

// change is a value the store now holds, or a key it deleted.
type change struct {
	e       backend.Entry
	deleted bool
}

// OpenService loads the persisted index of st and brings it up to date
// with the store: keys missing from it, gone from the store, or indexed
// from another version (size and mtime) are indexed again, and the index
// is saved. A corrupt index, or one of an older format (ErrCorrupt), is
// logged and rebuilt, keeping the vector sets; opts.Rebuild rebuilds any
// index and removes the vector sets too. The Service then follows c
// until Close.
func OpenService(ctx context.Context, c *session.Context, st backend.SysStore, opts ServiceOptions) (*Service, error) {
	if opts.Redactor == nil {
		return nil, errors.New("search index: no redactor (the index is persisted: it never holds a raw secret)")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	red := opts.Redactor
	iopts := search.Options{Logger: log, Redact: func(key string, v []byte) ([]byte, []string) {
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
	rebuild := opts.Rebuild
	ix, err := search.Load(ctx, st, iopts)
	corrupt := errors.Is(err, search.ErrCorrupt)
	if corrupt {
		log.Warn("search index corrupt or of an older format; rebuilding it", "err", err)
	} else if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	if rebuild || corrupt {
		old, err := st.ListSys(ctx, search.RecordPrefix)
		if err != nil {
			return nil, err
		}
		// Rebuild removes every record of the index. A corrupt BM25
		// index (or one of an older format: a new version of memfs
		// reads every store's as such once) has only its own shards
		// removed: the vector sets have their own format and checksums,
		// and openVectors checks their stamps against the rebuilt
		// index's, so nothing is embedded again for it.
		bm25 := make(map[string]bool, search.Shards)
		for s := range search.Shards {
			bm25[search.ShardName(s)] = true
		}
		var names []string
		for _, e := range old {
			if rebuild || bm25[e.Key] {
				names = append(names, e.Key)
			}
		}
		if !opts.InMemory {
			if err := st.DeleteSys(ctx, names...); err != nil {
				return nil, fmt.Errorf("search index: remove the old one: %w", err)
			}
		}
		ix = search.New(iopts)
	}
	delay := opts.SaveDelay
	if delay <= 0 {
		delay = DefaultSaveDelay
	}
	s := &Service{c: c, st: st, log: log, base: ix, opts: iopts, delay: delay, inMemory: opts.InMemory, workingAt: opts.Working, route: opts.Route,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if _, err := s.loadRules(ctx); err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	if s.repaired, err = s.repair(ctx, opts.Progress); err != nil {
		return nil, err
	}
	// A model opened at its first use (embed.Lazy) opens now; one that
	// does not (logged) leaves search to keywords.
	if opts.Embedder = embed.Resolve(opts.Embedder); opts.Embedder != nil {
		if err := s.openVectors(ctx, opts); err != nil {
			return nil, err
		}
		go s.embedWorker()
	}
	go s.worker()
	s.stopWatch = c.Watch(s.watch)
	return s, nil
}

// Repaired is the number of keys OpenService indexed again or dropped to
// bring the index up to date with the store (every value, after a rebuild).
func (s *Service) Repaired() int { return s.repaired }

// repair indexes every stored key whose stamp differs from the index's,
// drops what the store no longer holds or the rules exclude, and saves
// the index when that changed it.
func (s *Service) repair(ctx context.Context, p Progress) (int, error) {
	indexed, dropped, err := s.sync(ctx, p, func(e backend.Entry) { s.base.Put(e.Key, e.Value, search.MetaOf(e.Info)) }, s.base.Delete)
	if err != nil {
		return 0, err
	}
	if n := indexed + dropped; n > 0 {
		if s.inMemory {
			s.log.Info("search index brought up to date with the store in memory only (this command writes nothing; a mount or memfs reindex saves it)",
				"indexed", indexed, "dropped", dropped)
			return n, nil
		}
		s.log.Info("search index brought up to date with the store", "indexed", indexed, "dropped", dropped)
		if _, err := s.base.Save(ctx, s.st); err != nil {
			return 0, fmt.Errorf("search index: save: %w", err)
		}
		return n, nil
	}
	return 0, nil
}

// sync walks the store and calls put with every stored value base should
// hold and does not (its stamp differs), and drop with every key base
// holds that the store no longer does or the rules now exclude.
func (s *Service) sync(ctx context.Context, p Progress, put func(backend.Entry), drop func(key string)) (indexed, dropped int, err error) {
	rules := s.rules.Load()
	stamps := s.base.Stamps()
	var stale []string
	// Walked, never held whole: only the stale keys are kept.
	err = backend.Walk(ctx, s.st, func(batch []backend.Entry) error {
		for _, e := range batch {
			if !e.Info.Mode.IsRegular() || rules.Ignored(e.Key) || s.working(e.Key) {
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
		return 0, 0, err
	}
	slices.Sort(stale)      // loaded in key order, as List gave them
	for k := range stamps { // indexed, no longer stored (or ignored)
		drop(k)
	}
	if p != nil {
		p.Start(len(stale))
	}
	const chunk = 512
	for i := 0; i < len(stale); i += chunk {
		// A value that does not load (gone since the listing, or
		// damaged) is left out: the index holds the rest.
		got, failed, err := backend.LoadEach(ctx, s.st, stale[i:min(i+chunk, len(stale))]...)
		if err != nil {
			return 0, 0, fmt.Errorf("search index: %w", err)
		}
		for _, k := range slices.Sorted(maps.Keys(failed)) {
			if backend.Damaged(failed[k]) {
				s.log.Warn("search index: a damaged value is left out of the index", "key", k, "err", failed[k])
			}
		}
		for _, e := range got {
			put(e)
		}
		if p != nil {
			p.Add(len(got))
		}
	}
	if p != nil {
		p.Done()
	}
	return len(stale), len(stamps), nil
}

// Saved follows a flush: the store now holds these values (redacted) and
// no longer these keys. Its signature is session.Options.Saved's. It only
// queues them: indexing and saving run in the worker, off the flush's path
// (saving a shard of a large index takes a while: see BENCHMARKS.md); a
// search applies what is queued first. After Close it does nothing.
func (s *Service) Saved(ctx context.Context, saved []backend.Entry, deleted []string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	for _, e := range saved {
		if e.Info.Mode.IsRegular() {
			s.pending = append(s.pending, change{e: e})
		}
	}
	for _, k := range deleted {
		s.pending = append(s.pending, change{e: backend.Entry{Key: k}, deleted: true})
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// apply moves the queued changes into base.
func (s *Service) apply() {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	s.mu.Lock()
	p := s.pending
	s.pending = nil
	if len(p) > 0 {
		s.dirty = true
	}
	s.mu.Unlock()
	rulesChanged := false
	for _, ch := range p {
		rulesChanged = rulesChanged || ignore.IsFile(ch.e.Key)
	}
	if rulesChanged {
		s.rulesStale.Store(true)
	}
	rules := s.currentRules(context.Background())
	for i, ch := range p {
		if !ch.deleted && (rules.Ignored(ch.e.Key) || s.working(ch.e.Key)) {
			p[i] = change{e: backend.Entry{Key: ch.e.Key}, deleted: true}
		}
	}
	s.applyChanges(p)
	if rulesChanged {
		s.reconcile()
	}
}

// applyChanges puts changes into base, and queues their vectors.
func (s *Service) applyChanges(p []change) {
	for _, ch := range p {
		if ch.deleted {
			s.base.Delete(ch.e.Key)
		} else {
			s.base.Put(ch.e.Key, ch.e.Value, search.MetaOf(ch.e.Info))
		}
	}
	if s.emb != nil {
		s.queueEmbeds(p)
	}
}

// reconcile brings base up to date with rules that changed: what they
// now exclude leaves it, what they no longer exclude enters it from the
// store. A failure is logged; the next open repairs the index.
func (s *Service) reconcile() {
	var p []change
	ctx := context.Background()
	indexed, dropped, err := s.sync(ctx, nil,
		func(e backend.Entry) { p = append(p, change{e: e}) },
		func(k string) { p = append(p, change{e: backend.Entry{Key: k}, deleted: true}) })
	if err != nil {
		s.log.Warn("search index: not brought up to date with the changed ignore rules; it is when next opened", "err", err)
		return
	}
	if len(p) == 0 {
		return
	}
	s.mu.Lock()
	s.dirty = true
	s.mu.Unlock()
	s.applyChanges(p)
	s.log.Info("search index follows the changed ignore rules", "indexed", indexed, "dropped", dropped)
}

// currentRules returns the ignore rules, read again first when an ignore
// file may have changed. Rules that do not load stay as they were (logged).
func (s *Service) currentRules(ctx context.Context) *ignore.Rules {
	if s.rulesStale.Load() {
		if _, err := s.loadRules(ctx); err != nil {
			s.log.Warn("search index: the ignore rules did not load; the previous ones stay", "err", err)
		}
	}
	return s.rules.Load()
}

// loadRules reads the session's ignore rules into s.rules.
func (s *Service) loadRules(ctx context.Context) (*ignore.Rules, error) {
	s.rulesStale.Store(false)
	r, err := ignore.Load(ctx, s.c)
	if err != nil {
		s.rulesStale.Store(true)
		return nil, err
	}
	s.rules.Store(r)
	return r, nil
}

// worker applies queued changes and saves the index s.delay after them.
func (s *Service) worker() {
	defer close(s.done)
	var timer <-chan time.Time
	for {
		select {
		case <-s.wake:
			s.apply()
			if timer == nil {
				timer = time.After(s.delay)
			}
		case <-timer:
			timer = nil
			if err := s.save(context.Background(), false); err != nil {
				// The next open finds the stale stamps and repairs the index.
				s.log.Warn("search index not saved; it is repaired when next opened", "err", err)
			}
		case <-s.stop:
			return
		}
	}
}

// save persists base when it changed since its last save, and the vector
// shards that changed, but, unless final, those holdShard holds back.
func (s *Service) save(ctx context.Context, final bool) error {
	s.mu.Lock()
	dirty := s.dirty
	s.dirty = false
	s.mu.Unlock()
	if s.inMemory {
		return nil
	}
	if s.vec != nil && s.vec.DirtyShards() > 0 {
		hold := s.holdShard
		if final {
			hold = nil
		}
		if _, err := s.vec.Save(ctx, s.st, hold); err != nil {
			return fmt.Errorf("search index: save vectors: %w", err)
		}
	}
	if !dirty {
		return nil
	}
	if _, err := s.base.Save(ctx, s.st); err != nil {
		return fmt.Errorf("search index: save: %w", err)
	}
	return nil
}

// watch follows the session (it must not block): a change that may touch
// an ignore file makes the rules stale, and external changes (other
// programs' in the store) reach the index.
func (s *Service) watch(ch session.Change) {
	if ignore.IsFile(ch.Key) || ignore.IsFile(ch.OldKey) || ch.Op == session.OpRename || ch.Op == session.OpRmdir {
		s.rulesStale.Store(true)
	}
	if ch.Origin == session.OriginExternal {
		s.external(ch)
	}
}

// external follows changes other programs made in the store.
func (s *Service) external(ch session.Change) {
	switch ch.Op {
	case session.OpRemove:
		s.Saved(context.Background(), nil, []string{ch.Key})
	case session.OpCreate, session.OpWrite, session.OpContent:
		v, ok := s.c.Get(ch.Key)
		e, found := s.c.Entry(ch.Key) // one key: no scan of the session
		if !ok || !found {
			return
		}
		e.Value = v
		s.Saved(context.Background(), []backend.Entry{e}, nil)
	}
}

// Close stops following the session, stops the worker, and saves what is
// not saved yet; an error is that save's (the next open repairs the
// index). A second Close does nothing.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stopWatch()
	close(s.stop)
	<-s.done
	if s.emb != nil {
		s.ecancel()
		<-s.edone
		s.inflight.Wait()
	}
	s.apply()
	return s.save(ctx, true)
}

// Result is one search hit with its snippet (a line of JSON in an answer
// with format:json).
type Result struct {
	Key     string  `json:"key"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet"`
}

// Search runs q over the store's index and the unflushed changes, for the
// caller in ctx (session.CredFrom; without one, ErrNoCaller): hits it may
// not read (session's Readable, as the kernel would decide through the
// mount) are dropped before the best q.TopK (10 when not positive) are
// taken, so it gets TopK hits it may read when there are. Hits are ordered
// by score, then key; a key removed meanwhile is left out. q.Mode
// semantic or hybrid (the default with an Embedder) ranks by vectors too
// (see Fusion); without an Embedder they are an error wrapping ErrQuery.
// A search waits at most EmbedWait for the embedder: a document not
// embedded yet, or a query whose vector is not ready, ranks by keyword.
func (s *Service) Search(ctx context.Context, q search.Query) ([]Result, error) {
	cr, ok := session.CredFrom(ctx)
	if !ok {
		return nil, ErrNoCaller
	}
	q = s.repoFor(q, cr)
	mode, err := search.ResolveMode(q.Mode, s.emb != nil)
	if err != nil {
		return nil, err
	}
	topK := q.TopK
	if topK <= 0 {
		topK = 10
	}
	s.apply() // what flushes queued
	rules := s.currentRules(ctx)
	dirty, removed := s.c.Pending().Unflushed()
	dirty = s.withWorking(ctx, dirty)
	overlay := search.New(s.opts)
	shadowed := make(map[string]bool, len(dirty)+len(removed))
	for _, e := range dirty {
		if !rules.Ignored(e.Key) {
			overlay.Put(e.Key, e.Value, search.MetaOf(e.Info))
		}
		shadowed[e.Key] = true
	}
	for _, k := range removed {
		shadowed[k] = true
	}
	// readable keeps the hits the caller may read, and that are not
	// shadowed by an unflushed change (which the overlay answers for) nor
	// excluded by rules changed since base took them.
	readable := func(hits []search.Hit, shadowed map[string]bool) []search.Hit {
		keys := make([]string, len(hits))
		for i, h := range hits {
			keys[i] = h.Key
		}
		ok := s.c.Access().Readable(cr, keys...)
		kept := hits[:0]
		for i, h := range hits {
			if ok[i] && !shadowed[h.Key] && !rules.Ignored(h.Key) && s.inScope(q, h.Key) {
				kept = append(kept, h)
			}
		}
		return kept
	}
	// collect asks the base index for more until want hits pass, or it
	// has no more: a caller who may read few of the best hits still gets
	// them.
	collect := func(want int, search func(k int) []search.Hit) []search.Hit {
		for k := want + len(shadowed); ; k *= 4 {
			got := search(k)
			n := len(got)
			hits := readable(got, shadowed)
			if len(hits) >= want || n < k {
				return hits
			}
		}
	}
	var hits []search.Hit
	ranked := false
	if mode != search.ModeKeyword && strings.TrimSpace(q.Text) != "" {
		hits, ranked = s.searchVectors(ctx, q, mode, topK, overlay, dirty, collect, readable)
	}
	if !ranked {
		hits = collect(topK, func(k int) []search.Hit {
			bq := q
			bq.TopK = k
			return s.base.Search(bq)
		})
		oq := q
		oq.TopK = max(topK, overlay.Len()) // every match: some may be dropped
		hits = append(hits, readable(overlay.Search(oq), nil)...)
		search.SortHits(hits)
		hits = hits[:min(len(hits), topK)]
	}
	s.tiersInOrder(hits)
	hits = copiesBelowOriginals(hits)
	out := make([]Result, 0, len(hits))
	for _, h := range hits {
		if err := s.c.Resolve(ctx, h.Key); err != nil {
			continue // removed meanwhile
		}
		v, _ := s.c.Get(h.Key)
		out = append(out, Result{Key: h.Key, Score: h.Score, Snippet: s.base.Snippet(h.Key, v, q, search.SnippetWidth)})
	}
	return out, nil
}

// tiersInOrder orders hits of one score by their tiers, working memory
// first and indexed sources last (the tie rule of a mount's tiers), each
// in the order it had.
func (s *Service) tiersInOrder(hits []search.Hit) {
	if len(s.workingAt) == 0 && s.route == nil {
		return
	}
	rank := func(key string) int {
		_, tier := s.routeOf(key)
		return slices.Index([]string{search.TierWorking, search.TierPersistent, search.TierIndexed}, tier)
	}
	slices.SortStableFunc(hits, func(a, b search.Hit) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(rank(a.Key), rank(b.Key))
	})
}

// routeOf is the route and the tier key lives in (ServiceOptions.Route).
func (s *Service) routeOf(key string) (name, tier string) {
	if s.route != nil {
		return s.route(key)
	}
	if s.working(key) {
		return "", search.TierWorking
	}
	return "default", search.TierPersistent
}

// inScope reports whether key passes q's route and tier filters.
func (s *Service) inScope(q search.Query, key string) bool {
	if q.Tier == "" && q.Route == "" {
		return true
	}
	name, tier := s.routeOf(key)
	return (q.Tier == "" || q.Tier == tier) && (q.Route == "" || q.Route == name)
}

// working reports whether key is in working memory (ServiceOptions.Working).
func (s *Service) working(key string) bool {
	for _, p := range s.workingAt {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// withWorking adds to dirty, the unflushed values, the regular files of
// working memory that are not among them, with their values: a search
// reads working memory from the session, never from the index.
func (s *Service) withWorking(ctx context.Context, dirty []backend.Entry) []backend.Entry {
	if len(s.workingAt) == 0 {
		return dirty
	}
	seen := make(map[string]bool, len(dirty))
	for _, e := range dirty {
		seen[e.Key] = true
	}
	for _, p := range s.workingAt {
		var unloaded []string
		for _, e := range s.c.Entries(p) {
			if e.Info.Mode.IsRegular() && !seen[e.Key] && e.Value == nil && e.Info.Size > 0 {
				unloaded = append(unloaded, e.Key)
			}
		}
		if len(unloaded) > 0 {
			s.c.Resolve(ctx, unloaded...) // a value missing still is one removed meanwhile
		}
		for _, e := range s.c.Entries(p) {
			if e.Info.Mode.IsRegular() && !seen[e.Key] {
				seen[e.Key] = true
				dirty = append(dirty, e)
			}
		}
	}
	return dirty
}

// copiesBelowOriginals moves each conflict copy that ranks above its
// original (see backend.ConflictOrigin), when the original is a hit
// too, right below it, its score just under the original's: the copy is
// one side of a conflict nobody has resolved yet, and should not be read
// before the note it is a copy of. Other hits keep their order.
func copiesBelowOriginals(hits []search.Hit) []search.Hit {
	at := make(map[string]int, len(hits))
	keys := make([]string, len(hits))
	for i, h := range hits {
		at[h.Key], keys[i] = i, h.Key
	}
	held := map[string][]search.Hit{} // original -> its copies ranked above it
	out := make([]search.Hit, 0, len(hits))
	origins := backend.NewConflictIndex(keys)
	for i, h := range hits {
		if orig, _, _, ok := origins.Origin(h.Key); ok {
			if j, hit := at[orig]; hit && j > i {
				held[orig] = append(held[orig], h)
				continue
			}
		}
		out = append(out, h)
		for _, c := range held[h.Key] {
			c.Score = math.Nextafter(h.Score, math.Inf(-1))
			out = append(out, c)
		}
	}
	return out
}

// Answer serves a request (search.ParseName reads one from a name under
// .memfs/search/): the results of its query as text blocks, or JSON lines
// (see FormatResults). Only the files the caller in ctx may read are
// searched (see Search).
func (s *Service) Answer(ctx context.Context, r search.Request) ([]byte, error) {
	res, err := s.Search(ctx, r.Query)
	if err != nil {
		return nil, err
	}
	return FormatResults(res, r.JSON), nil
}

// repoFor resolves q.RepoParents for cr: the first parent whose repo.json
// cr may read stands for q.Repo while cr may read none of q.Repo's (a
// memory it may not read is none: which one is searched says nothing of
// what it may not see), as the pack does (memfs.FS.ContextPack).
func (s *Service) repoFor(q search.Query, cr session.Cred) search.Query {
	if len(q.RepoParents) == 0 {
		return q
	}
	q.Repo = repo.Choose(q.Repo, q.RepoParents, func(hash string) bool {
		_, err := s.c.Stat(repo.InfoKey(hash))
		return err == nil && s.c.Access().CanRead(repo.InfoKey(hash), cr)
	})
	q.RepoParents = nil
	return q
}
