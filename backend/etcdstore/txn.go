package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/memfs/memfs/backend"
)

// maxAttempts bounds how often a conditional write reads, decides and
// commits again because another writer changed a key in between.
const maxAttempts = 16

// found is what a key held when a conditional write read it.
type found struct {
	rev    int64   // ModRevision of m/<key>; 0: absent
	rec    *record // nil: absent
	inline []byte  // v/<key>
}

func (f found) version() backend.Version {
	if f.rec == nil {
		return backend.Version{}
	}
	return backend.VersionOf(f.rec.info(f.rev))
}

// readFound reads the records and values of keys at one revision.
func (s *Store) readFound(ctx context.Context, keys []string) (map[string]found, error) {
	out := make(map[string]found, len(keys))
	err := s.readPairs(ctx, keys, func(_ int, k string, m, v []*mvccpb.KeyValue, _ int64) error {
		if len(m) == 0 {
			out[k] = found{}
			return nil
		}
		f := found{rev: m[0].ModRevision}
		if r, err := decodeRecord(m[0].Value); err == nil {
			f.rec = r
		} else {
			// A damaged record is replaced like any other version,
			// but never copied: there is nothing to copy.
			f.rec = &record{V: recordVersion, Size: -1}
		}
		if len(v) > 0 {
			f.inline = v[0].Value
		}
		out[k] = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SaveIf saves entries as Save does, each expecting its key's stored
// version (backend.Versioned): a version found that does not match is
// copied to its conflict key in the transaction that saves the entry.
// The check and the write are one transaction per group of entries (up to
// 30 and 512 KiB): each compares the revisions of the records it read, and
// is read and decided again when another writer changed one in between.
func (s *Store) SaveIf(ctx context.Context, entries []backend.Entry, expect []backend.Version) (map[string]string, error) {
	if len(expect) != len(entries) {
		return nil, fmt.Errorf("etcdstore: SaveIf: %d entries, %d versions", len(entries), len(expect))
	}
	if err := backend.ValidateEntries(entries); err != nil {
		return nil, fmt.Errorf("etcdstore: save: %w", err)
	}
	if err := s.begin(ctx, "save"); err != nil {
		return nil, err
	}
	conflicts := map[string]string{}
	for start := 0; start < len(entries); {
		end, cost := start, 0
		for end < len(entries) && end-start < 30 {
			c := len(entries[end].Value) + inlineMax + 2*len(entries[end].Key) + 4096
			if len(entries[end].Value) > inlineMax {
				c = inlineMax + 4096 + 64*len(entries[end].Value)/chunkSize
			}
			if end > start && cost+c > maxTxnBytes/2 {
				break
			}
			cost += c
			end++
		}
		group := entries[start:end]
		want := map[string]backend.Version{}
		for i := range group {
			want[group[i].Key] = expect[start+i]
		}
		c, err := s.apply(ctx, "save", group, want, nil, nil, false)
		if err != nil {
			return nil, err
		}
		for k, v := range c {
			conflicts[k] = v
		}
		start = end
	}
	return conflicts, nil
}

// Apply saves b.Saves and deletes b.Deletes in one transaction
// (backend.Batcher), with b.Expect checked as SaveIf checks it, or with
// b.FailOnConflict, nothing written and a *backend.ConflictError. A batch
// is refused with backend.ErrBatchTooLarge, before anything is written,
// when it needs more than etcd's 128 operations in one transaction (each
// save, delete and conflict copy takes two) or more than 1 MiB of records
// and values (values over 64 KiB count only their chunk list: their
// chunks are written before the transaction).
func (s *Store) Apply(ctx context.Context, b backend.Batch) (map[string]string, error) {
	if err := backend.ValidateBatch(b); err != nil {
		return nil, fmt.Errorf("etcdstore: apply: %w", err)
	}
	if err := s.begin(ctx, "apply"); err != nil {
		return nil, err
	}
	if n := 2*len(lastOf(b.Saves)) + 2*len(dedupe(b.Deletes)); n > maxTxnOps {
		return nil, fmt.Errorf("etcdstore: apply: %d saves and %d deletes take %d operations, over etcd's %d in one transaction: %w",
			len(b.Saves), len(b.Deletes), n, maxTxnOps, backend.ErrBatchTooLarge)
	}
	var expDel map[string]backend.Version
	if b.FailOnConflict {
		expDel = b.ExpectDeleted
	}
	return s.apply(ctx, "apply", b.Saves, b.Expect, b.Deletes, expDel, b.FailOnConflict)
}

func dedupe(keys []string) []string {
	seen := make(map[string]bool, len(keys))
	var out []string
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// apply is one atomic conditional write: saves (a save whose key is in
// expect checked against it), deletes (one in expDel checked against it),
// conflicts kept beside the key or, with fail, refused.
func (s *Store) apply(ctx context.Context, op string, saves []backend.Entry, expect map[string]backend.Version,
	deletes []string, expDel map[string]backend.Version, fail bool) (map[string]string, error) {
	deletes = dedupe(deletes)
	var check []string
	for _, e := range saves {
		if _, ok := expect[e.Key]; ok && !slices.Contains(check, e.Key) {
			check = append(check, e.Key)
		}
	}
	for _, k := range deletes {
		if _, ok := expDel[k]; ok {
			check = append(check, k)
		}
	}
	idx := lastOf(saves)
	chunksWritten := false
	var in *intent // the intent the chunks were written under
	defer func() { s.release(in) }()
	for range maxAttempts {
		now := time.Now().Round(0)
		var fnd map[string]found
		if len(check) > 0 {
			var err error
			if fnd, err = s.readFound(ctx, check); err != nil {
				return nil, mapErr(op, err, ctx)
			}
		}
		// Decide each key's fate from what was read.
		var conflicts []backend.Conflict
		copies := map[string]string{}
		var ops []clientv3.Op
		size := 0
		for _, i := range idx {
			k := saves[i].Key
			want, ok := expect[k]
			f := fnd[k]
			if !ok || f.rec == nil || want.Matches(f.version()) {
				continue
			}
			if fail {
				conflicts = append(conflicts, backend.Conflict{Key: k, Found: f.version()})
				continue
			}
			if f.rec.Size < 0 {
				continue // a damaged record: nothing to keep
			}
			ck := backend.ConflictKey(k, now)
			cp := *f.rec
			cp.Link = ""
			mk, rec := s.meta(ck), cp.encode()
			ops = append(ops, clientv3.OpPut(mk, string(rec)))
			size += len(mk) + len(rec)
			if !cp.chunked() && len(f.inline) > 0 {
				ops = append(ops, clientv3.OpPut(s.value(ck), string(f.inline)))
				size += len(ck) + len(f.inline)
			}
			copies[k] = ck
		}
		for _, k := range deletes {
			want, ok := expDel[k]
			f := fnd[k]
			if ok && f.rec != nil && !want.Matches(f.version()) {
				conflicts = append(conflicts, backend.Conflict{Key: k, Found: f.version(), Delete: true})
			}
		}
		if len(conflicts) > 0 {
			slices.SortFunc(conflicts, func(a, b backend.Conflict) int { return strings.Compare(a.Key, b.Key) })
			return nil, &backend.ConflictError{Conflicts: conflicts}
		}
		preps := make([]prepared, len(idx))
		for j, i := range idx {
			preps[j] = prepare(saves[i], now)
			o, n := s.ops(preps[j])
			ops, size = append(ops, o...), size+n
		}
		for _, k := range deletes {
			ops = append(ops, clientv3.OpDelete(s.meta(k)), clientv3.OpDelete(s.value(k)))
			size += len(s.meta(k)) + len(s.value(k))
		}
		if len(ops) > maxTxnOps || size > maxTxnBytes {
			return nil, fmt.Errorf("etcdstore: %s: %d operations of %d bytes, over one transaction's %d and %d: %w",
				op, len(ops), size, maxTxnOps, maxTxnBytes, backend.ErrBatchTooLarge)
		}
		if !chunksWritten {
			var err error
			if in, err = s.intendFor(ctx, preps); err != nil {
				return nil, mapErr(op, err, ctx)
			}
			for _, p := range preps {
				if err := s.putChunks(ctx, p.hashes, p.chunks); err != nil {
					return nil, mapErr(op+" "+p.key, err, ctx)
				}
			}
			chunksWritten = true
		}
		cmps := in.held()
		for _, k := range check {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(s.meta(k)), "=", fnd[k].rev))
		}
		resp, err := s.txn(ctx, cmps, ops)
		if err != nil {
			return nil, mapErr(op, err, ctx)
		}
		if !resp.Succeeded {
			lost, err := s.lost(ctx, in)
			if err != nil {
				return nil, mapErr(op, err, ctx)
			}
			if lost { // the chunks again, under a new intent
				s.release(in)
				in, chunksWritten = nil, false
			}
			continue // or another writer changed a key read: read and decide again
		}
		for i := range saves {
			saves[i].Info.Rev = resp.Header.Revision
		}
		return copies, nil
	}
	return nil, fmt.Errorf("etcdstore: %s: other writers changed the keys %d times in a row: %w", op, maxAttempts, errBusy)
}

var errBusy = errors.New("too many concurrent writers")
