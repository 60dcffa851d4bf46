package etcdstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memfs/memfs/backend"
)

var (
	_ backend.Store      = (*Store)(nil)
	_ backend.SysStore   = (*Store)(nil)
	_ backend.Walker     = (*Store)(nil)
	_ backend.Versioned  = (*Store)(nil)
	_ backend.Batcher    = (*Store)(nil)
	_ backend.Watcher    = (*Store)(nil)
	_ backend.SysSwapper = (*Store)(nil)
	_ backend.Presence   = (*Store)(nil)
	_ backend.Collector  = (*Store)(nil)

	_ backend.ReadAheader = (*Store)(nil)
)

// Store is a backend.Store on an etcd v3 cluster. Make one with Open.
type Store struct {
	cli     *clientv3.Client // immutable after Open
	cfg     Config           // immutable after Open
	prefix  string           // "/memfs/<ns>/", immutable
	life    context.Context  // cancelled by Close: ends the goroutines
	stop    context.CancelFunc
	workers sync.WaitGroup // the watch and presence goroutines

	mu       sync.Mutex // guards the fields below
	closed   bool
	listRev  int64           // header revision of the last List or Walk
	damaged  map[string]bool // keys whose record did not decode
	presence *presence       // nil until the first Register

	// damagedSys are the system records ListSys found that do not
	// decode (left out of its listings): see DamagedSys. Guarded by mu.
	damagedSys map[string]bool
}

// Open connects to the cluster cfg names and checks that it answers:
// within DialTimeout plus RequestTimeout, or it fails with an error
// wrapping backend.ErrUnavailable.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if err := checkNamespace(cfg.Namespace); err != nil {
		return nil, err
	}
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcdstore: no endpoints")
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.dialTimeout(),
		TLS:         cfg.TLS,
		Username:    cfg.Username,
		Password:    cfg.Password,
		Context:     context.WithoutCancel(ctx),
		// The client's own log lines (retries, reconnections) would
		// go to stderr of the mount; the store reports errors instead.
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, mapErr("open", fmt.Errorf("connect to %s: %w", strings.Join(cfg.Endpoints, ","), err), ctx)
	}
	s := &Store{cli: cli, cfg: cfg, prefix: "/memfs/" + cfg.Namespace + "/", damaged: map[string]bool{}}
	s.life, s.stop = context.WithCancel(context.Background())
	// The probe: a read of one key, bounded by the dial and request
	// timeouts together (the connection is made on first use).
	pctx, cancel := context.WithTimeout(ctx, cfg.dialTimeout()+cfg.requestTimeout())
	defer cancel()
	if _, err := cli.Get(pctx, s.prefix+"probe", clientv3.WithCountOnly()); err != nil {
		cli.Close()
		return nil, mapErr("open", fmt.Errorf("probe %s: %w", strings.Join(cfg.Endpoints, ","), err), ctx)
	}
	return s, nil
}

// Close stops the store's watches and presence and closes the client.
// Closing a closed Store does nothing.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	p := s.presence
	s.mu.Unlock()
	s.stop()
	if p != nil {
		p.revoke(s)
	}
	s.workers.Wait()
	return s.cli.Close()
}

// Damaged returns the keys whose records do not decode, sorted: those the
// last whole List or Walk left out, and those Load refused since.
func (s *Store) Damaged() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.damaged))
	for k := range s.damaged {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// markDamaged records key as damaged (Load found its record so).
func (s *Store) markDamaged(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.damaged[key] = true
}

// setDamaged replaces the damaged keys with those a whole listing found.
func (s *Store) setDamaged(keys map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.damaged = keys
}

// The key layout under the prefix.
func (s *Store) meta(key string) string   { return s.prefix + "m/" + key }
func (s *Store) value(key string) string  { return s.prefix + "v/" + key }
func (s *Store) chunk(hash string) string { return s.prefix + "c/" + hash }
func (s *Store) sys(name string) string   { return s.prefix + "s/" + name }
func (s *Store) peer(id string) string    { return s.prefix + "p/" + id }

// begin checks that s is open and ctx live, for op.
func (s *Store) begin(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("etcdstore: %s: %w", op, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("etcdstore: %s: %w", op, fs.ErrClosed)
	}
	return nil
}

// req is a context for one request: ctx bounded by RequestTimeout.
func (s *Store) req(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.requestTimeout())
}

// mapErr translates a client error for op: the caller's own cancellation
// stays what it is; a timeout or an unreachable cluster wraps
// backend.ErrUnavailable; a request over etcd's limits wraps
// backend.ErrBatchTooLarge.
func mapErr(op string, err error, ctx context.Context) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("etcdstore: %s: %w", op, cerr)
	}
	if unavailable(err) {
		return fmt.Errorf("etcdstore: %s: %w: %w", op, backend.ErrUnavailable, err)
	}
	if errors.Is(err, rpctypes.ErrTooManyOps) || errors.Is(err, rpctypes.ErrRequestTooLarge) {
		return fmt.Errorf("etcdstore: %s: %w: %w", op, backend.ErrBatchTooLarge, err)
	}
	return fmt.Errorf("etcdstore: %s: %w", op, err)
}

func unavailable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code() == codes.Unavailable || ee.Code() == codes.DeadlineExceeded
	}
	if st, ok := status.FromError(err); ok {
		return st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded
	}
	return false
}

// txn commits one transaction within RequestTimeout.
func (s *Store) txn(ctx context.Context, cmps []clientv3.Cmp, ops []clientv3.Op) (*clientv3.TxnResponse, error) {
	rctx, cancel := s.req(ctx)
	defer cancel()
	return s.cli.Txn(rctx).If(cmps...).Then(ops...).Commit()
}

// get is one Get within RequestTimeout.
func (s *Store) get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	rctx, cancel := s.req(ctx)
	defer cancel()
	return s.cli.Get(rctx, key, opts...)
}

// rangeEach reads every key under dir (a prefix ending in "/") at one
// revision, page by page, calling fn with each key-value; it returns the
// revision read.
func (s *Store) rangeEach(ctx context.Context, dir string, page int64, keysOnly bool, fn func(kv *mvccpb.KeyValue) error) (int64, error) {
	end := clientv3.GetPrefixRangeEnd(dir)
	from := dir
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(page), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		if keysOnly {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		resp, err := s.get(ctx, from, opts...)
		if err != nil {
			return 0, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			if err := fn(kv); err != nil {
				return 0, err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		if err := ctx.Err(); err != nil {
			return 0, err
		}
	}
}

// listPage is how many records one List request reads.
const listPage = 4096

// each reads every record at one revision and passes each entry to add;
// a record that does not decode is left out and recorded in damaged.
func (s *Store) each(ctx context.Context, page int64, damaged map[string]bool, add func(backend.Entry) error) (int64, error) {
	dir := s.prefix + "m/"
	return s.rangeEach(ctx, dir, page, false, func(kv *mvccpb.KeyValue) error {
		key := string(kv.Key[len(dir):])
		if backend.CheckStoreKey(key) != nil {
			return nil // not a key memfs wrote; never handed out
		}
		r, err := decodeRecord(kv.Value)
		if err != nil {
			damaged[key] = true
			return nil
		}
		return add(backend.Entry{Key: key, Info: r.info(kv.ModRevision)})
	})
}

// List returns every key with its Info (Rev: the revision of its
// record), sorted by key, read at one revision. A record that does not
// decode is left out and reported by Damaged.
func (s *Store) List(ctx context.Context) ([]backend.Entry, error) {
	if err := s.begin(ctx, "list"); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		var out []backend.Entry
		damaged := map[string]bool{}
		rev, err := s.each(ctx, listPage, damaged, func(e backend.Entry) error {
			out = append(out, e)
			return nil
		})
		if errors.Is(err, rpctypes.ErrCompacted) && attempt < compactedAttempts {
			continue // compacted past the revision of the first page: again
		}
		if err != nil {
			return nil, mapErr("list", err, ctx)
		}
		s.setListRev(rev)
		s.setDamaged(damaged)
		return out, nil
	}
}

// compactedAttempts bounds how often a read that spans several requests
// at one revision starts again when etcd compacts that revision away
// meanwhile.
const compactedAttempts = 3

func (s *Store) setListRev(rev int64) {
	s.mu.Lock()
	s.listRev = rev
	s.mu.Unlock()
}

// Walk reports what List returns, backend.WalkBatch entries at a time,
// in key order, read at one revision.
func (s *Store) Walk(ctx context.Context, fn func(batch []backend.Entry) error) error {
	if err := s.begin(ctx, "walk"); err != nil {
		return err
	}
	var fnErr error // fn's own error, returned as it is
	var rev int64
	damaged := map[string]bool{}
	err := backend.WalkEach(func(add func(backend.Entry) error) error {
		var err error
		rev, err = s.each(ctx, backend.WalkBatch, damaged, add)
		return err
	}, func(batch []backend.Entry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		fnErr = fn(batch)
		return fnErr
	})
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return mapErr("walk", err, ctx)
	}
	s.setListRev(rev)
	s.setDamaged(damaged)
	return nil
}

// loadGroup is how many keys one Load transaction reads (two gets each).
const loadGroup = maxTxnOps / 2

// ReadAhead lets a session load up to two transactions' worth of a
// directory's small files with the one it opens: a cold read of a
// directory then costs two round trips, not one per file (BENCHMARKS.md,
// "Shared store: cold reads"). Chunked values (over inlineMax) cost
// requests of their own and are left out.
func (s *Store) ReadAhead() (keys int, bytes, fileBytes int64) {
	return 2*loadGroup - 1, 2 << 20, inlineMax
}

// Load returns the entries for keys, in order, values included, all read
// at one revision. A damaged record, a missing or damaged chunk, or a
// value whose length disagrees with its record gives an error wrapping
// backend.ErrCorrupt that names the key.
func (s *Store) Load(ctx context.Context, keys ...string) ([]backend.Entry, error) {
	for _, k := range keys {
		if err := backend.CheckStoreKey(k); err != nil {
			return nil, fmt.Errorf("etcdstore: load: %w", err)
		}
	}
	if err := s.begin(ctx, "load"); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		out, err := s.load(ctx, keys)
		if errors.Is(err, rpctypes.ErrCompacted) && attempt < compactedAttempts {
			continue // compacted past the revision of the first request: again
		}
		if err != nil && !errors.Is(err, backend.ErrKeyNotFound) && !errors.Is(err, backend.ErrCorrupt) {
			return nil, mapErr("load", err, ctx)
		}
		return out, err
	}
}

// load is one attempt of Load; client errors come back as they are.
func (s *Store) load(ctx context.Context, keys []string) ([]backend.Entry, error) {
	out := make([]backend.Entry, len(keys))
	err := s.readPairs(ctx, keys, func(i int, k string, m, v []*mvccpb.KeyValue, rev int64) error {
		if len(m) == 0 {
			return backend.NotFound("load", k)
		}
		e, err := s.assemble(ctx, k, m[0], v, rev)
		if err != nil {
			return err
		}
		out[i] = e
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readPairs reads the record (m/) and the inline value (v/) of each of
// keys, all at one revision, loadGroup keys a transaction, and calls fn
// with each key's index, the key-values found (none when absent) and the
// revision read; fn's error ends it.
func (s *Store) readPairs(ctx context.Context, keys []string, fn func(i int, key string, m, v []*mvccpb.KeyValue, rev int64) error) error {
	var rev int64
	for start := 0; start < len(keys); start += loadGroup {
		group := keys[start:min(len(keys), start+loadGroup)]
		var at []clientv3.OpOption
		if rev != 0 {
			at = append(at, clientv3.WithRev(rev))
		}
		var ops []clientv3.Op
		for _, k := range group {
			ops = append(ops, clientv3.OpGet(s.meta(k), at...), clientv3.OpGet(s.value(k), at...))
		}
		resp, err := s.txn(ctx, nil, ops)
		if err != nil {
			return err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for i, k := range group {
			m := resp.Responses[2*i].GetResponseRange().Kvs
			v := resp.Responses[2*i+1].GetResponseRange().Kvs
			if err := fn(start+i, k, m, v, rev); err != nil {
				return err
			}
		}
	}
	return nil
}

// assemble makes the entry of key from its record and value, reading its
// chunks at rev.
func (s *Store) assemble(ctx context.Context, key string, m *mvccpb.KeyValue, v []*mvccpb.KeyValue, rev int64) (backend.Entry, error) {
	corrupt := func(format string, a ...any) error {
		return &fs.PathError{Op: "load", Path: key, Err: fmt.Errorf("%w: %s", backend.ErrCorrupt, fmt.Sprintf(format, a...))}
	}
	r, err := decodeRecord(m.Value)
	if err != nil {
		s.markDamaged(key)
		return backend.Entry{}, corrupt("record: %v", err)
	}
	e := backend.Entry{Key: key, Info: r.info(m.ModRevision)}
	if r.chunked() {
		val, err := s.readChunks(ctx, r.Chunks, r.Size, rev)
		if err != nil {
			var ce chunkError
			if errors.As(err, &ce) {
				return backend.Entry{}, corrupt("%v", err)
			}
			return backend.Entry{}, fmt.Errorf("%s: %w", key, err)
		}
		e.Value = val
		return e, nil
	}
	var val []byte
	if len(v) > 0 {
		val = bytes.Clone(v[0].Value)
	}
	if int64(len(val)) != r.Size {
		return backend.Entry{}, corrupt("value of %d bytes, record says %d", len(val), r.Size)
	}
	e.Value = val // nil for an empty value
	return e, nil
}

// chunkError is a chunk that is missing or does not match its name.
type chunkError struct{ msg string }

func (e chunkError) Error() string { return e.msg }

// chunkGroup is how many chunks one request reads (at most 4 MiB).
const chunkGroup = 8

// readChunks reads the chunks named by hashes at rev (0: the latest) and
// checks each against its name and the whole against size.
func (s *Store) readChunks(ctx context.Context, hashes []string, size, rev int64) ([]byte, error) {
	out := make([]byte, 0, size)
	var at []clientv3.OpOption
	if rev != 0 {
		at = append(at, clientv3.WithRev(rev))
	}
	for start := 0; start < len(hashes); start += chunkGroup {
		group := hashes[start:min(len(hashes), start+chunkGroup)]
		var ops []clientv3.Op
		for _, h := range group {
			ops = append(ops, clientv3.OpGet(s.chunk(h), at...))
		}
		resp, err := s.txn(ctx, nil, ops)
		if err != nil {
			return nil, err
		}
		for i, h := range group {
			kvs := resp.Responses[i].GetResponseRange().Kvs
			if len(kvs) == 0 {
				return nil, chunkError{fmt.Sprintf("chunk %s is missing", h)}
			}
			sum := sha256.Sum256(kvs[0].Value)
			if hex.EncodeToString(sum[:]) != h {
				return nil, chunkError{fmt.Sprintf("chunk %s does not match its name", h)}
			}
			out = append(out, kvs[0].Value...)
		}
	}
	if int64(len(out)) != size {
		return nil, chunkError{fmt.Sprintf("chunks hold %d bytes, record says %d", len(out), size)}
	}
	return out, nil
}

// putChunks writes chunks (each named by its hash), one request each,
// under an intent (see intent). A chunk already stored is written again:
// its new revision tells Collect that a save is about to name it.
func (s *Store) putChunks(ctx context.Context, hashes []string, chunks [][]byte) error {
	for i, h := range hashes {
		rctx, cancel := s.req(ctx)
		_, err := s.cli.Put(rctx, s.chunk(h), string(chunks[i]))
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// intendFor puts an intent when one of preps has chunks; nil otherwise.
func (s *Store) intendFor(ctx context.Context, preps []prepared) (*intent, error) {
	for _, p := range preps {
		if len(p.hashes) > 0 {
			return s.intend(ctx)
		}
	}
	return nil, nil
}

// prepared is one entry ready to commit: its record and value ops.
type prepared struct {
	key    string
	rec    record
	inline []byte   // the value when not chunked
	hashes []string // the chunks, when chunked
	chunks [][]byte
}

// prepare makes the record of e, saved at now.
func prepare(e backend.Entry, now time.Time) prepared {
	info := backend.SavedInfo(e, now)
	p := prepared{key: e.Key}
	if len(e.Value) > inlineMax {
		p.hashes, p.chunks = split(e.Value)
	} else {
		p.inline = e.Value
	}
	p.rec = newRecord(info, p.hashes)
	return p
}

// ops are the operations that write p, and their size in bytes.
func (s *Store) ops(p prepared) ([]clientv3.Op, int) {
	mk, vk := s.meta(p.key), s.value(p.key)
	rec := p.rec.encode()
	if len(p.inline) > 0 {
		return []clientv3.Op{clientv3.OpPut(mk, string(rec)), clientv3.OpPut(vk, string(p.inline))},
			len(mk) + len(rec) + len(vk) + len(p.inline)
	}
	return []clientv3.Op{clientv3.OpPut(mk, string(rec)), clientv3.OpDelete(vk)}, len(mk) + len(rec) + len(vk)
}

// lastOf keeps the last entry of each key (etcd refuses a transaction
// that writes a key twice), in order.
func lastOf(entries []backend.Entry) []int {
	last := make(map[string]int, len(entries))
	for i, e := range entries {
		last[e.Key] = i
	}
	var idx []int
	for i, e := range entries {
		if last[e.Key] == i {
			idx = append(idx, i)
		}
	}
	return idx
}

// Save stores entries. Each entry is atomic (its record and value in one
// transaction, its chunks written before); the batch as a whole is
// atomic when it fits in one transaction (128 operations, 1 MiB: about
// 64 small entries), else it is written in several. Info.Rev of each
// entry is set to the revision of the transaction that wrote it.
func (s *Store) Save(ctx context.Context, entries ...backend.Entry) error {
	if err := s.KeyLimit().ValidateEntries(entries); err != nil {
		return fmt.Errorf("etcdstore: save: %w", err)
	}
	if err := s.begin(ctx, "save"); err != nil {
		return err
	}
	now := time.Now().Round(0)
	idx := lastOf(entries)
	preps := make([]prepared, len(idx))
	for j, i := range idx {
		preps[j] = prepare(entries[i], now)
	}
	in, err := s.intendFor(ctx, preps)
	if err != nil {
		return mapErr("save", err, ctx)
	}
	defer s.release(in)
	for _, p := range preps {
		if err := s.putChunks(ctx, p.hashes, p.chunks); err != nil {
			return mapErr("save "+p.key, err, ctx)
		}
	}
	revOf := map[string]int64{}
	var ops []clientv3.Op
	var keys []string
	size := 0
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		resp, err := s.txn(ctx, in.held(), ops)
		if err != nil {
			return mapErr("save", err, ctx)
		}
		if !resp.Succeeded {
			return mapErr("save", errIntentLost, ctx)
		}
		for _, k := range keys {
			revOf[k] = resp.Header.Revision
		}
		ops, keys, size = ops[:0], keys[:0], 0
		return nil
	}
	for _, p := range preps {
		o, n := s.ops(p)
		if len(ops)+len(o) > maxTxnOps || (size+n > maxTxnBytes && len(ops) > 0) {
			if err := flush(); err != nil {
				return err
			}
		}
		ops, keys, size = append(ops, o...), append(keys, p.key), size+n
	}
	if err := flush(); err != nil {
		return err
	}
	for i := range entries {
		entries[i].Info.Rev = revOf[entries[i].Key]
	}
	return nil
}

// Delete removes keys (their records and values; chunks stay for
// Collect), in transactions of up to 64 keys.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		if err := backend.CheckStoreKey(k); err != nil {
			return fmt.Errorf("etcdstore: delete: %w", err)
		}
	}
	if err := s.begin(ctx, "delete"); err != nil {
		return err
	}
	seen := map[string]bool{}
	var ops []clientv3.Op
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		ops = append(ops, clientv3.OpDelete(s.meta(k)), clientv3.OpDelete(s.value(k)))
		if len(ops) == maxTxnOps {
			if _, err := s.txn(ctx, nil, ops); err != nil {
				return mapErr("delete", err, ctx)
			}
			ops = ops[:0]
		}
	}
	if len(ops) > 0 {
		if _, err := s.txn(ctx, nil, ops); err != nil {
			return mapErr("delete", err, ctx)
		}
	}
	return nil
}

// Stat returns the Info of key without its value (one small request): what
// a mount following the watch compares with what it holds. A missing key
// gives backend.NotFound; a damaged record, backend.ErrCorrupt.
func (s *Store) Stat(ctx context.Context, key string) (backend.Info, error) {
	if err := backend.CheckStoreKey(key); err != nil {
		return backend.Info{}, fmt.Errorf("etcdstore: stat: %w", err)
	}
	if err := s.begin(ctx, "stat"); err != nil {
		return backend.Info{}, err
	}
	resp, err := s.get(ctx, s.meta(key))
	if err != nil {
		return backend.Info{}, mapErr("stat", err, ctx)
	}
	if len(resp.Kvs) == 0 {
		return backend.Info{}, backend.NotFound("stat", key)
	}
	r, err := decodeRecord(resp.Kvs[0].Value)
	if err != nil {
		s.markDamaged(key)
		return backend.Info{}, &fs.PathError{Op: "stat", Path: key, Err: fmt.Errorf("%w: record: %v", backend.ErrCorrupt, err)}
	}
	return r.info(resp.Kvs[0].ModRevision), nil
}
