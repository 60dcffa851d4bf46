package etcdstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/memfs/memfs/backend"
)

// gcMark is g/mark: the revision a Collect saw, and when.
type gcMark struct {
	Rev  int64 `json:"rev"`
	Time int64 `json:"time"` // Unix nanoseconds
}

// Collect removes the chunks no record names and that were last
// written before the mark an earlier Collect left at least
// Config.ChunkGrace ago; then it leaves a new mark. The first call (and
// any call sooner than ChunkGrace after the mark) only leaves the mark, so
// a chunk is removed no sooner than ChunkGrace after it was last written.
// A save writes its chunks (again, if they are stored already: a new
// revision) before the record that names them, under an intent (see
// intent) that spares them however long the save takes; the grace spares
// those of a writer that puts no intent (an older memfs) as long as it
// takes less than ChunkGrace. Each chunk is deleted only if
// its revision is still the one read. A record that does not decode may
// name any chunk: while one is in the namespace, nothing is removed.
func (s *Store) Collect(ctx context.Context) (backend.Collected, error) {
	done := backend.Collected{Wait: s.cfg.grace()}
	if err := s.begin(ctx, "collect"); err != nil {
		return done, err
	}
	markKey := s.prefix + "g/mark"
	resp, err := s.get(ctx, markKey)
	if err != nil {
		return done, mapErr("collect", err, ctx)
	}
	now := s.cfg.now()
	var mark gcMark
	markRev := int64(0) // ModRevision of g/mark; 0: none
	if len(resp.Kvs) > 0 {
		markRev = resp.Kvs[0].ModRevision
		if json.Unmarshal(resp.Kvs[0].Value, &mark) != nil {
			mark = gcMark{}
		}
	}
	ripe := mark.Rev != 0 && now.Sub(time.Unix(0, mark.Time)) >= s.cfg.grace()
	if ripe {
		done.Swept = true
		if done.Removed, err = s.sweep(ctx, mark.Rev); err != nil {
			return done, err
		}
	}
	if mark.Rev == 0 || ripe {
		b, _ := json.Marshal(gcMark{Rev: resp.Header.Revision, Time: now.UnixNano()})
		// Only one collector moves the mark from what it read.
		_, err := s.txn(ctx, []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(markKey), "=", markRev)},
			[]clientv3.Op{clientv3.OpPut(markKey, string(b))})
		if err != nil {
			return done, mapErr("collect", err, ctx)
		}
	}
	return done, nil
}

// sweep deletes the chunks not named at the current revision whose last
// write is at or before rev, and before every intent live then.
func (s *Store) sweep(ctx context.Context, rev int64) (int, error) {
	used := map[string]bool{}
	damaged := false
	at, err := s.rangeEach(ctx, s.prefix+"m/", listPage, false, func(kv *mvccpb.KeyValue) error {
		r, err := decodeRecord(kv.Value)
		if err != nil {
			damaged = true
			return nil
		}
		for _, h := range r.Chunks {
			used[h] = true
		}
		return nil
	})
	if err != nil {
		return 0, mapErr("collect", err, ctx)
	}
	// What MoveAside kept is kept whole, its chunks included.
	// Records are moved aside because they do not decode: the chunks
	// such a record names are read leniently, and one that is not even
	// JSON keeps every chunk, as a damaged record under m/ does.
	_, err = s.rangeEach(ctx, s.prefix+asideDir, listPage, false, func(kv *mvccpb.KeyValue) error {
		// x/STAMP/m/KEY is a record; x/STAMP/v/KEY an inline value.
		if _, rest, _ := strings.Cut(string(kv.Key[len(s.prefix)+len(asideDir):]), "/"); !strings.HasPrefix(rest, "m/") {
			return nil
		}
		var r struct {
			Chunks []string `json:"chunks"`
		}
		if json.Unmarshal(kv.Value, &r) != nil {
			damaged = true
			return nil
		}
		for _, h := range r.Chunks {
			used[h] = true
		}
		return nil
	})
	if err != nil {
		return 0, mapErr("collect", err, ctx)
	}
	// What the saves in progress at that revision wrote since their
	// intents stays.
	ir, err := s.get(ctx, s.prefix+"g/w/", clientv3.WithPrefix(), clientv3.WithRev(at))
	if err != nil {
		return 0, mapErr("collect", err, ctx)
	}
	oldest := int64(math.MaxInt64)
	for _, kv := range ir.Kvs {
		oldest = min(oldest, kv.CreateRevision)
	}
	_, err = s.rangeEach(ctx, s.prefix+"s/", sysPage, false, func(kv *mvccpb.KeyValue) error {
		_, man, err := decodeSys(kv.Value)
		if err != nil {
			damaged = true
			return nil
		}
		if man != nil {
			for _, h := range man.Chunks {
				used[h] = true
			}
		}
		return nil
	})
	if err != nil {
		return 0, mapErr("collect", err, ctx)
	}
	if damaged {
		// A damaged record may name chunks no one can tell: keep
		// every chunk rather than guess.
		return 0, fmt.Errorf("etcdstore: collect: a record is damaged (memfs fsck lists it); no chunk removed")
	}
	type cand struct {
		key string
		rev int64
	}
	var gone []cand
	dir := s.prefix + "c/"
	_, err = s.rangeEach(ctx, dir, listPage, true, func(kv *mvccpb.KeyValue) error {
		if !used[string(kv.Key[len(dir):])] && kv.ModRevision <= rev && kv.ModRevision <= at && kv.ModRevision < oldest {
			gone = append(gone, cand{string(kv.Key), kv.ModRevision})
		}
		return nil
	})
	if err != nil {
		return 0, mapErr("collect", err, ctx)
	}
	removed := 0
	for _, c := range gone {
		resp, err := s.txn(ctx, []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(c.key), "=", c.rev)},
			[]clientv3.Op{clientv3.OpDelete(c.key)})
		if err != nil {
			return removed, mapErr("collect", err, ctx)
		}
		if resp.Succeeded {
			removed++
		}
	}
	return removed, nil
}

// Lead campaigns for g/lead/ (an etcd election on a lease of its own,
// leaseTTL seconds) until this process is the namespace's collector or ctx
// is done. The context it returns ends when ctx does, when resign is
// called, when the store closes, or when the lease is lost (etcd away for
// longer than its TTL: another process may be elected meanwhile).
func (s *Store) Lead(ctx context.Context) (context.Context, func(), error) {
	if err := s.begin(ctx, "lead"); err != nil {
		return nil, nil, err
	}
	// The campaign, its lease and its keep-alive live while ctx does and
	// the store is open: a campaign with etcd away ends with ctx.
	lead, cancel := context.WithCancel(ctx)
	unlink := context.AfterFunc(s.life, cancel)
	end := func() { unlink(); cancel() }
	sess, err := concurrency.NewSession(s.cli, concurrency.WithTTL(leaseTTL), concurrency.WithContext(lead))
	if err != nil {
		end()
		return nil, nil, mapErr("lead", err, ctx)
	}
	revoke := func() {
		sess.Orphan()
		rctx, rcancel := s.req(context.Background())
		defer rcancel()
		s.cli.Revoke(rctx, sess.Lease()) // best effort: it expires anyway
	}
	el := concurrency.NewElection(sess, s.prefix+"g/lead/")
	if err := el.Campaign(lead, "collector"); err != nil {
		end()
		revoke()
		return nil, nil, mapErr("lead", err, ctx)
	}
	s.workers.Add(1)
	go func() {
		defer s.workers.Done()
		select {
		case <-sess.Done():
		case <-lead.Done():
		}
		end()
		revoke() // resigns: the next candidate is elected
	}()
	return lead, cancel, nil
}

// An intent is a save in progress that writes chunks: g/w/<id>, on the
// store's lease, put before the chunks and removed after the record that
// names them. Collect spares every chunk written since the oldest intent
// live at the revision it read the records at, and the record's
// transaction holds only if its intent is still live: a save whose lease
// ended (its process paused, or etcd away, for longer than leaseTTL) fails
// instead of naming chunks a collection may have taken meanwhile. So no
// chunk a save names is removed, however long the save takes.
type intent struct {
	key string
	rev int64 // its CreateRevision
}

// intend puts a new intent.
func (s *Store) intend(ctx context.Context) (*intent, error) {
	_, lease, err := s.lease(ctx)
	if err != nil {
		return nil, err
	}
	var id [12]byte
	rand.Read(id[:])
	key := s.prefix + "g/w/" + hex.EncodeToString(id[:])
	rctx, cancel := s.req(ctx)
	defer cancel()
	resp, err := s.cli.Put(rctx, key, "", clientv3.WithLease(lease))
	if err != nil {
		return nil, err
	}
	return &intent{key: key, rev: resp.Header.Revision}, nil
}

// held is the comparison a transaction naming the intent's chunks makes;
// none for a nil intent (no chunks).
func (in *intent) held() []clientv3.Cmp {
	if in == nil {
		return nil
	}
	return []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(in.key), "=", in.rev)}
}

// lost reports whether the intent ended before its save committed; a
// transaction that failed with it live failed on another comparison.
func (s *Store) lost(ctx context.Context, in *intent) (bool, error) {
	if in == nil {
		return false, nil
	}
	resp, err := s.get(ctx, in.key)
	if err != nil {
		return false, err
	}
	return len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != in.rev, nil
}

// release removes the intent: best effort, its lease ends it anyway.
func (s *Store) release(in *intent) {
	if in == nil {
		return
	}
	rctx, cancel := s.req(context.Background())
	defer cancel()
	s.cli.Delete(rctx, in.key)
}

// errIntentLost is the error of a save whose intent ended first.
var errIntentLost = fmt.Errorf("%w: the save's lease ended before it could commit (etcd unreachable, or the process paused, for over %d s); nothing of it was written", backend.ErrUnavailable, leaseTTL)
