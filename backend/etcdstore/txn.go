package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	if err := s.KeyLimit().ValidateEntries(entries); err != nil {
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
	if err := s.KeyLimit().ValidateBatch(b); err != nil {
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
	a := &applyRun{s: s, op: op, saves: saves, idx: lastOf(saves), expect: expect,
		deletes: dedupe(deletes), expDel: expDel, fail: fail}
	a.check = a.checked()
	defer func() { s.release(a.in) }()
	for range maxAttempts {
		if copies, done, err := a.attempt(ctx); done || err != nil {
			return copies, err
		}
	}
	return nil, fmt.Errorf("etcdstore: %s: other writers changed the keys %d times in a row: %w", op, maxAttempts, errBusy)
}

// applyRun is one apply: what it writes, what it checks, and the intent
// its chunks were written under.
type applyRun struct {
	s       *Store
	op      string
	saves   []backend.Entry
	idx     []int // the last save of each key (lastOf)
	expect  map[string]backend.Version
	deletes []string // without repeats
	expDel  map[string]backend.Version
	fail    bool
	check   []string         // the keys whose versions are read and compared at commit
	emptied map[string]int64 // directories replaced or deleted -> the revision no key was under them at (filledDirs)

	chunksWritten bool
	in            *intent // the intent the chunks were written under
}

// checked lists the keys whose versions a save or a delete expects.
func (a *applyRun) checked() []string {
	var check []string
	for _, e := range a.saves {
		if _, ok := a.expect[e.Key]; ok && !slices.Contains(check, e.Key) {
			check = append(check, e.Key)
		}
	}
	for _, k := range a.deletes {
		if _, ok := a.expDel[k]; ok {
			check = append(check, k)
		}
	}
	return check
}

// attempt reads the checked keys, decides each key's fate and commits;
// not done when the commit found a key changed since it was read (or the
// intent lost): read and decide again.
func (a *applyRun) attempt(ctx context.Context) (copies map[string]string, done bool, err error) {
	now := time.Now().Round(0)
	var fnd map[string]found
	if len(a.check) > 0 {
		if fnd, err = a.s.readFound(ctx, a.check); err != nil {
			return nil, true, mapErr(a.op, err, ctx)
		}
	}
	ops, size, copies, conflicts := a.conflictCopies(fnd, now)
	if err := a.overDirectory(fnd); err != nil {
		return nil, true, err
	}
	conflicts = append(conflicts, a.deleteConflicts(fnd)...)
	filled, err := a.filledDirs(ctx, fnd)
	if err != nil {
		return nil, true, err
	}
	conflicts = append(conflicts, filled...)
	if len(conflicts) > 0 {
		slices.SortFunc(conflicts, func(a, b backend.Conflict) int { return strings.Compare(a.Key, b.Key) })
		return nil, true, &backend.ConflictError{Conflicts: conflicts}
	}
	preps, ops, size := a.writes(ops, size, now)
	if len(ops) > maxTxnOps || size > maxTxnBytes {
		return nil, true, fmt.Errorf("etcdstore: %s: %d operations of %d bytes, over one transaction's %d and %d: %w",
			a.op, len(ops), size, maxTxnOps, maxTxnBytes, backend.ErrBatchTooLarge)
	}
	if err := a.writeChunks(ctx, preps); err != nil {
		return nil, true, err
	}
	committed, err := a.commit(ctx, fnd, ops)
	if err != nil || !committed {
		return nil, err != nil, err
	}
	return copies, true, nil
}

// conflictCopies decides the saves' fate from what was read (fnd): a save
// over a version it does not expect is a conflict or, without fail, keeps
// that version beside the key as a conflict copy. It returns the copies'
// operations, their size, and the copies by key.
func (a *applyRun) conflictCopies(fnd map[string]found, now time.Time) (ops []clientv3.Op, size int, copies map[string]string, conflicts []backend.Conflict) {
	copies = map[string]string{}
	for _, i := range a.idx {
		k := a.saves[i].Key
		want, ok := a.expect[k]
		f := fnd[k]
		if !ok || f.rec == nil || want.Matches(f.version()) {
			continue
		}
		if a.fail {
			conflicts = append(conflicts, backend.Conflict{Key: k, Found: f.version()})
			continue
		}
		if f.rec.Size < 0 || fs.FileMode(f.rec.Mode).IsDir() {
			continue // a damaged record: nothing to keep; a directory: overDirectory
		}
		ck := backend.ConflictKeyWithin(k, "", now, maxKeyLen)
		cp := *f.rec
		cp.Link = ""
		mk, rec := a.s.meta(ck), cp.encode()
		ops = append(ops, clientv3.OpPut(mk, string(rec)))
		size += len(mk) + len(rec)
		if !cp.chunked() && len(f.inline) > 0 {
			ops = append(ops, clientv3.OpPut(a.s.value(ck), string(f.inline)))
			size += len(ck) + len(f.inline)
		}
		copies[k] = ck
	}
	return ops, size, copies, conflicts
}

// overDirectory refuses, with EEXIST, a save (keep beside) of a node
// other than a directory where it meets another writer's directory
// record: the directory keeps the name (its keys are under it), and is
// never copied beside as a record of nothing.
func (a *applyRun) overDirectory(fnd map[string]found) error {
	if a.fail {
		return nil // conflictCopies listed it
	}
	for _, i := range a.idx {
		e := a.saves[i]
		want, ok := a.expect[e.Key]
		f := fnd[e.Key]
		if ok && f.rec != nil && !want.Matches(f.version()) && fs.FileMode(f.rec.Mode).IsDir() && !e.Info.Mode.IsDir() {
			return fmt.Errorf("etcdstore: %s %s: another writer's directory holds the name: %w", a.op, e.Key, fs.ErrExist)
		}
	}
	return nil
}

// filledDirs finds the directory records that the batch replaces by a
// node of another type, or deletes, at the version it expects, while the
// store holds keys under them that the batch does not delete: keys the
// writer has not seen yet (another writer's, made after the version it
// expects was read, or with it). The directory keeps its name, as rmdir
// of a directory that is not empty fails: with fail each is a conflict,
// else a save there is refused with EEXIST. The others are recorded in
// a.emptied with the revision they were listed at, for commit to check
// that no key was made under them since.
func (a *applyRun) filledDirs(ctx context.Context, fnd map[string]found) ([]backend.Conflict, error) {
	a.emptied = nil
	var conflicts []backend.Conflict
	deleted := make(map[string]bool, len(a.deletes))
	for _, k := range a.deletes {
		deleted[k] = true
	}
	look := func(k string, del bool) error {
		f := fnd[k]
		if f.rec == nil || !fs.FileMode(f.rec.Mode).IsDir() {
			return nil
		}
		resp, err := a.s.cli.Get(ctx, a.s.meta(k)+"/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			return mapErr(a.op, err, ctx)
		}
		for _, kv := range resp.Kvs {
			if deleted[strings.TrimPrefix(string(kv.Key), a.s.meta(""))] {
				continue
			}
			if !a.fail && !del {
				return fmt.Errorf("etcdstore: %s %s: another writer's directory holds the name and keys under it: %w", a.op, k, fs.ErrExist)
			}
			conflicts = append(conflicts, backend.Conflict{Key: k, Found: f.version(), Delete: del})
			return nil
		}
		if a.emptied == nil {
			a.emptied = make(map[string]int64)
		}
		a.emptied[k] = resp.Header.Revision
		return nil
	}
	for _, i := range a.idx {
		e := a.saves[i]
		if want, ok := a.expect[e.Key]; ok && !e.Info.Mode.IsDir() && want.Matches(fnd[e.Key].version()) {
			if err := look(e.Key, false); err != nil {
				return nil, err
			}
		}
	}
	for _, k := range a.deletes {
		if want, ok := a.expDel[k]; ok && want.Matches(fnd[k].version()) {
			if err := look(k, true); err != nil {
				return nil, err
			}
		}
	}
	return conflicts, nil
}

// deleteConflicts are the deletes of a version they do not expect.
func (a *applyRun) deleteConflicts(fnd map[string]found) []backend.Conflict {
	var conflicts []backend.Conflict
	for _, k := range a.deletes {
		want, ok := a.expDel[k]
		f := fnd[k]
		if ok && f.rec != nil && !want.Matches(f.version()) {
			conflicts = append(conflicts, backend.Conflict{Key: k, Found: f.version(), Delete: true})
		}
	}
	return conflicts
}

// writes adds to ops (of size bytes) the saves, prepared at now, and the
// deletes.
func (a *applyRun) writes(ops []clientv3.Op, size int, now time.Time) ([]prepared, []clientv3.Op, int) {
	preps := make([]prepared, len(a.idx))
	for j, i := range a.idx {
		preps[j] = prepare(a.saves[i], now)
		o, n := a.s.ops(preps[j])
		ops, size = append(ops, o...), size+n
	}
	for _, k := range a.deletes {
		ops = append(ops, clientv3.OpDelete(a.s.meta(k)), clientv3.OpDelete(a.s.value(k)))
		size += len(a.s.meta(k)) + len(a.s.value(k))
	}
	return preps, ops, size
}

// writeChunks writes the chunks of preps under an intent, once.
func (a *applyRun) writeChunks(ctx context.Context, preps []prepared) error {
	if a.chunksWritten {
		return nil
	}
	var err error
	if a.in, err = a.s.intendFor(ctx, preps); err != nil {
		return mapErr(a.op, err, ctx)
	}
	for _, p := range preps {
		if err := a.s.putChunks(ctx, p.hashes, p.chunks); err != nil {
			return mapErr(a.op+" "+p.key, err, ctx)
		}
	}
	a.chunksWritten = true
	return nil
}

// commit runs ops if the intent still holds and no checked key changed
// since fnd was read; not committed otherwise (and when the intent was
// lost, the chunks are written again under a new one at the next
// attempt).
func (a *applyRun) commit(ctx context.Context, fnd map[string]found, ops []clientv3.Op) (committed bool, err error) {
	cmps := a.in.held()
	for _, k := range a.check {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(a.s.meta(k)), "=", fnd[k].rev))
	}
	for k, rev := range a.emptied {
		// No key made under the directory since it was listed.
		cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(a.s.meta(k)+"/").WithPrefix(), "<", rev+1))
	}
	resp, err := a.s.txn(ctx, cmps, ops)
	if err != nil {
		return false, mapErr(a.op, err, ctx)
	}
	if !resp.Succeeded {
		lost, err := a.s.lost(ctx, a.in)
		if err != nil {
			return false, mapErr(a.op, err, ctx)
		}
		if lost { // the chunks again, under a new intent
			a.s.release(a.in)
			a.in, a.chunksWritten = nil, false
		}
		return false, nil // or another writer changed a key read: read and decide again
	}
	for i := range a.saves {
		a.saves[i].Info.Rev = resp.Header.Revision
	}
	return true, nil
}

var errBusy = errors.New("too many concurrent writers")
