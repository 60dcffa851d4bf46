package live

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/search"
)

// Lock order for vectors: Service.mu, then vecIndex.mu, then Index.mu
// (a vector search with filters asks the Index while it holds vecIndex.mu
// for reading). vecCache.mu is taken alone. A vector save holds the
// Vectors' save lock, not vecIndex.mu, when it asks holdShard for
// Service.mu.

// DefaultEmbedWait is how long a search waits for the embedder (the
// query's vector and the unflushed values') unless ServiceOptions say
// otherwise.
const DefaultEmbedWait = time.Second

// cacheSize bounds the vectors a Service keeps of queries and unflushed
// values.
const cacheSize = 4096

// searchEmbeds bounds the search-time embeds running at once (each may
// outlive its search): searches of a slow model do not pile requests up
// on it. A search that finds no slot ranks what is not cached by keyword.
const searchEmbeds = 4

// overlayEmbeds bounds the unflushed values one search embeds: beyond,
// they rank by keyword (their BM25 share stands for their likeness).
const overlayEmbeds = 256

// embedJob is a document whose vector is missing or stale: the text to
// embed and the stamp of the value it is made from, or, with load, only
// the key (the repair at open: the value is read from the store when its
// turn comes, so that the queue does not hold every value).
type embedJob struct {
	text  string
	stamp search.Stamp
	load  bool
}

// VectorStatus is the state of a Service's vectors (for .memfs/status).
type VectorStatus struct {
	Embedder    string    // the embedder's ID; "" without one (keyword-only search)
	Dim         int       // the vectors' length; 0 until the first
	Vectors     int       // documents with a vector
	Pending     int       // documents waiting to be embedded (again)
	LastError   string    // the embedder's last failure; "" after a success
	LastErrorAt time.Time // when it failed
	Refused     int       // documents the model refused alone (they have no vector; they rank by keyword)
}

// VectorStatus returns the state of the vectors.
func (s *Service) VectorStatus() VectorStatus {
	if s.emb == nil {
		return VectorStatus{}
	}
	st := VectorStatus{Embedder: s.emb.ID(), Vectors: s.vec.Len()}
	st.Dim = s.vec.Dim()
	s.mu.Lock()
	st.Pending = s.embedQ.len()
	st.Refused = s.refused
	if s.lastErr != nil {
		st.LastError, st.LastErrorAt = s.lastErr.Error(), s.lastErrAt
	}
	s.mu.Unlock()
	return st
}

// openVectors loads the persisted vectors of the embedder (none after a
// rebuild, or the first time it is used on this store), drops them whole
// when one shard is corrupt, and queues every document of base whose
// vector is missing or stale.
func (s *Service) openVectors(ctx context.Context, opts ServiceOptions) error {
	s.emb = opts.Embedder
	s.fusion = search.FusionOf(s.emb)
	if opts.Fusion != nil {
		s.fusion = *opts.Fusion
	}
	s.embedWait = opts.EmbedWait
	if s.embedWait <= 0 {
		s.embedWait = DefaultEmbedWait
	}
	s.cache = &vecCache{m: make(map[[sha256.Size]byte][]float32)}
	s.slots = make(chan struct{}, searchEmbeds)
	s.ewake = make(chan struct{}, 1)
	s.edone = make(chan struct{})
	id := s.emb.ID()
	vx, err := search.LoadVectors(ctx, s.st, id)
	switch {
	case errors.Is(err, search.ErrCorrupt):
		s.log.Warn("search vectors corrupt; embedding every value again", "err", err)
		vx = search.NewVectors(id)
		vx.MarkAllDirty()
	case err != nil:
		return fmt.Errorf("search index: %w", err)
	}
	s.vec = vx
	vs := vx.Stamps()
	for k, st := range s.base.Stamps() {
		if v, ok := vs[k]; !ok || v != st {
			s.embedQ.put(k, &embedJob{load: true})
		}
		delete(vs, k)
	}
	for k := range vs { // no longer indexed
		vx.Delete(k)
	}
	if n := s.embedQ.len() + len(vs); n > 0 {
		s.log.Info("search vectors to bring up to date", "embedder", id, "embed", s.embedQ.len(), "dropped", len(vs))
	}
	if vx.DirtyShards() > 0 && !s.inMemory {
		if _, err := vx.Save(ctx, s.st, nil); err != nil {
			return fmt.Errorf("search index: save vectors: %w", err)
		}
	}
	s.ectx, s.ecancel = context.WithCancel(context.Background())
	return nil
}

// queueEmbeds queues the vectors of changes just applied to base: from
// the redacted value, as base indexes it, so that a vector never encodes
// a secret. A deleted key, or one base does not index (a secret in its
// name), loses its vector.
func (s *Service) queueEmbeds(p []change) {
	type item struct {
		key string
		job *embedJob // nil: delete
	}
	items := make([]item, 0, len(p))
	for _, ch := range p {
		k := ch.e.Key
		if ch.deleted || !s.base.Has(k) {
			items = append(items, item{key: k})
			continue
		}
		items = append(items, item{k, &embedJob{text: s.docText(s.base, k, ch.e.Value), stamp: search.StampOf(search.MetaOf(ch.e.Info))}})
	}
	s.mu.Lock()
	for _, it := range items {
		if it.job == nil {
			s.embedQ.remove(it.key)
			s.vec.Delete(it.key)
		} else {
			s.embedQ.put(it.key, it.job)
		}
	}
	s.mu.Unlock()
	select {
	case s.ewake <- struct{}{}:
	default:
	}
}

// docText is what is embedded of key's value: redacted by ix (as ix
// indexes it); of a binary value, only the key's words.
func (s *Service) docText(ix *search.Index, key string, v []byte) string {
	if search.IsBinary(v) {
		return search.EmbedText(key, nil)
	}
	return search.EmbedText(key, ix.RedactValue(key, v))
}

// embedWorker embeds the queued documents in batches until Close,
// retrying after a failure with a growing delay, and has each batch
// saved by the worker.
func (s *Service) embedWorker() {
	defer close(s.edone)
	backoff := time.Duration(0)
	fails := 0 // the batches failed in a row
	for {
		keys, jobs := s.nextBatch()
		if len(keys) == 0 {
			select {
			case <-s.ewake:
				continue
			case <-s.ectx.Done():
				return
			}
		}
		err := s.embedJobs(keys, jobs)
		if s.ectx.Err() != nil {
			return
		}
		if err != nil {
			fails++
			if fails >= 2 && len(keys) > 1 && s.isolate(keys, jobs) {
				err = nil // the batch is done: those the model refused are dropped
			}
		}
		if err != nil {
			backoff = min(max(2*backoff, time.Second), time.Minute)
			s.log.Warn("search: embedding failed; retrying", "embedder", s.emb.ID(), "err", err, "retry", backoff)
			select {
			case <-time.After(backoff):
			case <-s.ectx.Done():
				return
			}
			continue
		}
		fails, backoff = 0, 0
		select {
		case s.wake <- struct{}{}: // the worker saves
		default:
		}
	}
}

// isolate embeds a batch that failed twice one document at a time, so
// that a text the model refuses (too long, bad input) does not hold up
// the others: when some succeed, the ones that fail alone are refused
// for good (dropped from the queue, counted in VectorStatus.Refused; they
// rank by keyword). When none succeeds the model is down, not the texts:
// nothing is dropped, and it reports false.
func (s *Service) isolate(keys []string, jobs []*embedJob) bool {
	var bad []int
	for i := range keys {
		if err := s.embedJobs(keys[i:i+1], jobs[i:i+1]); err != nil {
			if s.ectx.Err() != nil {
				return false
			}
			bad = append(bad, i)
		}
	}
	if len(bad) == len(keys) {
		return false
	}
	s.mu.Lock()
	for _, i := range bad {
		if s.embedQ.get(keys[i]) == jobs[i] {
			s.embedQ.remove(keys[i])
			s.refused++
		}
	}
	s.mu.Unlock()
	if len(bad) > 0 {
		// The names are not logged: a count, and the model's error above.
		s.log.Warn("search: the embedder refused documents on their own; they have no vector and rank by keyword",
			"embedder", s.emb.ID(), "refused", len(bad))
	}
	return true
}

// nextBatch returns up to embedBatch queued documents, a shard at a time
// (embedQueue.batch), left queued until their vectors are in.
func (s *Service) nextBatch() ([]string, []*embedJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.embedQ.batch(search.EmbedBatch)
}

// holdShard reports whether a save leaves vector shard sh for later: a
// backlog (more than a batch) is being embedded and some of it is sh's,
// which is written once they are in (see embedQueue). A few documents
// queued hold nothing back: a note written now and again is saved as
// soon as it is embedded.
func (s *Service) holdShard(sh int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.embedQ.len() > search.EmbedBatch && s.embedQ.pending(sh)
}

// noteErr records the embedder's failure for VectorStatus.
func (s *Service) noteErr(err error) {
	s.mu.Lock()
	s.lastErr, s.lastErrAt = err, time.Now()
	s.mu.Unlock()
}

// embedJobs embeds one batch and puts the vectors of the jobs still
// current (a job replaced meanwhile is left for its successor).
func (s *Service) embedJobs(keys []string, jobs []*embedJob) error {
	texts := make([]string, len(keys))
	stamps := make([]search.Stamp, len(keys))
	drop := make([]bool, len(keys))
	var load []int // the jobs whose value is read from the store
	for i, j := range jobs {
		texts[i], stamps[i] = j.text, j.stamp
		if j.load {
			load = append(load, i)
		}
	}
	if len(load) > 0 {
		loaded, err := s.loadValues(keys, load)
		if err != nil {
			s.noteErr(err)
			return fmt.Errorf("load values to embed: %w", err)
		}
		for _, i := range load {
			e, ok := loaded[keys[i]]
			if !ok || !s.base.Has(keys[i]) {
				drop[i] = true // gone: its deletion comes through Saved or the next open
				continue
			}
			texts[i], stamps[i] = s.docText(s.base, keys[i], e.Value), search.StampOf(search.MetaOf(e.Info))
		}
	}
	var todo []string
	for i, t := range texts {
		if !drop[i] {
			todo = append(todo, t)
		}
	}
	var vecs [][]float32
	if len(todo) > 0 {
		var err error
		vecs, err = s.emb.Embed(s.ectx, todo)
		if err == nil && len(vecs) != len(todo) {
			err = fmt.Errorf("%d vectors for %d texts", len(vecs), len(todo))
		}
		if err != nil {
			if s.ectx.Err() == nil {
				s.noteErr(err)
			}
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr = nil
	n := 0
	for i, k := range keys {
		if s.embedQ.get(k) != jobs[i] {
			if !drop[i] {
				n++
			}
			continue
		}
		s.embedQ.remove(k)
		if drop[i] {
			continue
		}
		if err := s.vec.Put(k, stamps[i], vecs[n]); err != nil {
			s.lastErr, s.lastErrAt = err, time.Now()
			s.log.Warn("search: a vector not kept", "embedder", s.emb.ID(), "err", err)
		}
		n++
	}
	return nil
}

// loadValues reads the values of keys[i] for i in at; a key gone from
// the store, or whose value is damaged, is left out.
func (s *Service) loadValues(keys []string, at []int) (map[string]backend.Entry, error) {
	ks := make([]string, len(at))
	for j, i := range at {
		ks[j] = keys[i]
	}
	es, _, err := backend.LoadEach(s.ectx, s.st, ks...)
	if err != nil {
		return nil, err
	}
	out := make(map[string]backend.Entry, len(es))
	for _, e := range es {
		out[e.Key] = e
	}
	return out, nil
}

// vecCache holds the vectors of recent texts (queries, unflushed values)
// by the SHA-256 of the text, up to cacheSize; when full it is emptied.
type vecCache struct {
	mu sync.Mutex // guards m
	m  map[[sha256.Size]byte][]float32
}

func (c *vecCache) get(text string) ([]float32, bool) {
	h := sha256.Sum256([]byte(text))
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[h]
	return v, ok
}

func (c *vecCache) put(text string, v []float32) {
	h := sha256.Sum256([]byte(text))
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= cacheSize {
		clear(c.m)
	}
	c.m[h] = v
}

// embedNow returns the vectors of texts, from the cache or the embedder,
// waiting until ctx is done at most: a text whose vector is not ready by
// then gets nil (the embedding goes on, and its vector is cached for the
// next search, until Close).
func (s *Service) embedNow(ctx context.Context, texts []string) [][]float32 {
	out := make([][]float32, len(texts))
	var miss []string
	var at []int
	for i, t := range texts {
		if v, ok := s.cache.get(t); ok {
			out[i] = v
		} else {
			miss, at = append(miss, t), append(at, i)
		}
	}
	if len(miss) == 0 {
		return out
	}
	select {
	case s.slots <- struct{}{}:
	default:
		return out // the model has enough to do: keyword for these
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.slots
		return out
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	ch := make(chan [][]float32, 1)
	go func() {
		defer s.inflight.Done()
		defer func() { <-s.slots }()
		ectx, cancel := context.WithTimeout(s.ectx, time.Minute)
		defer cancel()
		got := make([][]float32, 0, len(miss))
		for i := 0; i < len(miss); i += search.EmbedBatch {
			part := miss[i:min(i+search.EmbedBatch, len(miss))]
			vs, err := s.emb.Embed(ectx, part)
			if err == nil && len(vs) != len(part) {
				err = fmt.Errorf("%d vectors for %d texts", len(vs), len(part))
			}
			if err != nil {
				if ectx.Err() == nil {
					s.noteErr(err)
				}
				break
			}
			for j, v := range vs {
				s.cache.put(part[j], v)
			}
			got = append(got, vs...)
		}
		ch <- got
	}()
	select {
	case got := <-ch:
		for j, v := range got {
			out[at[j]] = v
		}
	case <-ctx.Done():
	}
	return out
}

// searchVectors ranks q's hits in a semantic or hybrid mode; ok is false
// when the query's vector is not ready within EmbedWait (the caller ranks
// by keyword). Unflushed values are embedded as they are searched (or
// come from the cache); one not ready in time ranks by keyword only.
func (s *Service) searchVectors(ctx context.Context, q search.Query, mode search.Mode, topK int, overlay *search.Index, dirty []backend.Entry,
	collect func(want int, search func(k int) []search.Hit) []search.Hit, readable func([]search.Hit, map[string]bool) []search.Hit) ([]search.Hit, bool) {
	// The unflushed values the caller may read and the filters pass.
	lq := q
	lq.Text, lq.MinScore, lq.TopK = "", 0, max(1, overlay.Len())
	ovHits := readable(overlay.Search(lq), nil)
	values := make(map[string][]byte, len(dirty))
	for _, e := range dirty {
		values[e.Key] = e.Value
	}
	qtext, _ := s.opts.Redact("", []byte(q.Text)) // the query may be sent to a remote model
	wctx, cancel := context.WithTimeout(ctx, s.embedWait)
	defer cancel()
	// The query first and alone: many unflushed values must not keep its
	// vector from being ready in time.
	qvs := s.embedNow(wctx, []string{string(qtext)})
	if qvs[0] == nil {
		s.log.Debug("search: the query's vector is not ready; ranking by keyword", "embedder", s.emb.ID())
		return nil, false
	}
	var texts []string
	for _, h := range ovHits[:min(len(ovHits), overlayEmbeds)] {
		texts = append(texts, s.docText(overlay, h.Key, values[h.Key]))
	}
	vecs := s.embedNow(wctx, texts)
	qf := qvs[0]
	qv := search.NewQueryVec(qf)
	ovCos := make(map[string]float64, len(ovHits))
	var ovVec []search.Hit
	for i, h := range ovHits[:len(vecs)] {
		if v := vecs[i]; len(v) == len(qf) {
			c := 0.0
			for j := range v {
				c += float64(v[j]) * float64(qf[j])
			}
			ovCos[h.Key] = c
			if c > s.fusion.Floor {
				ovVec = append(ovVec, search.Hit{Key: h.Key, Score: c})
			}
		}
	}
	n := topK
	if mode == search.ModeHybrid {
		n = s.fusion.PerRanking(topK)
	}
	keep := s.base.Matcher(q)
	vecHits := collect(n, func(k int) []search.Hit { return s.vec.Nearest(qv, k, keep, s.fusion.Floor) })
	vecHits = append(vecHits, ovVec...)
	if mode == search.ModeSemantic {
		search.SortHits(vecHits)
		return search.Cut(vecHits, q.MinScore, topK), true
	}
	bq := q
	bq.MinScore = 0
	bmHits := collect(n, func(k int) []search.Hit {
		bq.TopK = k
		return s.base.Search(bq)
	})
	oq := bq
	oq.TopK = max(n, overlay.Len())
	bmHits = append(bmHits, readable(overlay.Search(oq), nil)...)
	cosOf := func(k string) (float64, bool) {
		if c, ok := ovCos[k]; ok {
			return c, true
		}
		if overlay.Has(k) {
			return 0, false // not embedded in time
		}
		return s.vec.Cosine(k, qv)
	}
	return search.Cut(search.Fuse(bmHits, vecHits, cosOf, s.fusion), q.MinScore, topK), true
}

// WaitEmbedded waits until no document waits for its vector: for a command
// that searches once and ends, or rebuilds the index, so that it neither
// answers before the vectors are in nor leaves them unmade. It ends early
// with ctx's error, or with an error when the embedder fails meanwhile
// (the documents left are embedded at the next open). Without an embedder
// it returns at once.
func (s *Service) WaitEmbedded(ctx context.Context) error {
	if s.emb == nil {
		return nil
	}
	start := time.Now()
	for {
		st := s.VectorStatus()
		if st.Pending == 0 {
			return nil
		}
		if st.LastError != "" && !st.LastErrorAt.Before(start) {
			return fmt.Errorf("search: %d documents not embedded: the embedder failed: %s", st.Pending, st.LastError)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("search: %d documents not embedded: %w", st.Pending, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
