package etcdstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/memfs/memfs/backend"
)

// System records live in s/<name>: a head record that holds the data (up
// to 1 MiB) or lists its chunks, written after them, so that a record is
// replaced whole or not at all.

func checkSysNames(op string, names ...string) error {
	for _, n := range names {
		if err := backend.ValidateKey(n); err != nil {
			return fmt.Errorf("etcdstore: %s: %w", op, err)
		}
	}
	return nil
}

// SaveSys atomically replaces the system record name with data.
func (s *Store) SaveSys(ctx context.Context, name string, data []byte) error {
	if err := checkSysNames("savesys", name); err != nil {
		return err
	}
	if err := s.begin(ctx, "savesys"); err != nil {
		return err
	}
	head, hashes, chunks := encodeSys(data)
	var in *intent
	if len(hashes) > 0 {
		var err error
		if in, err = s.intend(ctx); err != nil {
			return mapErr("savesys "+name, err, ctx)
		}
		defer s.release(in)
	}
	if err := s.putChunks(ctx, hashes, chunks); err != nil {
		return mapErr("savesys "+name, err, ctx)
	}
	resp, err := s.txn(ctx, in.held(), []clientv3.Op{clientv3.OpPut(s.sys(name), string(head))})
	if err != nil {
		return mapErr("savesys "+name, err, ctx)
	}
	if !resp.Succeeded {
		return mapErr("savesys "+name, errIntentLost, ctx)
	}
	return nil
}

// LoadSys returns the system record name.
func (s *Store) LoadSys(ctx context.Context, name string) ([]byte, error) {
	if err := checkSysNames("loadsys", name); err != nil {
		return nil, err
	}
	if err := s.begin(ctx, "loadsys"); err != nil {
		return nil, err
	}
	resp, err := s.get(ctx, s.sys(name))
	if err != nil {
		return nil, mapErr("loadsys "+name, err, ctx)
	}
	if len(resp.Kvs) == 0 {
		return nil, backend.NotFound("loadsys", name)
	}
	return s.sysData(ctx, "loadsys", name, resp.Kvs[0].Value, resp.Header.Revision)
}

// sysData returns the data of the record name whose head is raw, reading
// its chunks at rev.
func (s *Store) sysData(ctx context.Context, op, name string, raw []byte, rev int64) ([]byte, error) {
	corrupt := func(err error) error {
		return &fs.PathError{Op: op, Path: name, Err: &backend.CorruptError{Raw: bytes.Clone(raw), Reason: err.Error()}}
	}
	data, man, err := decodeSys(raw)
	if err != nil {
		return nil, corrupt(err)
	}
	if man == nil {
		return bytes.Clone(data), nil
	}
	data, err = s.readChunks(ctx, man.Chunks, man.Size, rev)
	var ce chunkError
	if errors.As(err, &ce) {
		return nil, corrupt(err)
	}
	if err != nil {
		return nil, mapErr(op+" "+name, err, ctx)
	}
	return data, nil
}

// sysPage is how many head records one request reads: system records are
// mostly small (events), and a page of large ones stays far below the
// client's limit on a response (2 GiB).
const sysPage = 128

// ListSys returns the system records whose name starts with prefix,
// sorted, with their sizes. It reads their head records (up to 1 MiB
// each: a record's size is known only from its head).
func (s *Store) ListSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	if err := s.begin(ctx, "listsys"); err != nil {
		return nil, err
	}
	dir := s.prefix + "s/"
	var out []backend.Entry
	var bad []string
	_, err := s.rangeEach(ctx, dir+prefix, sysPage, false, func(kv *mvccpb.KeyValue) error {
		name := string(kv.Key[len(dir):])
		data, man, err := decodeSys(kv.Value)
		if err != nil {
			bad = append(bad, name) // damaged: LoadSys reports it, DamagedSys names it
			return nil
		}
		size := int64(len(data))
		if man != nil {
			size = man.Size
		}
		out = append(out, backend.Entry{Key: name, Info: backend.Info{Size: size, Rev: kv.ModRevision}})
		return nil
	})
	if err != nil {
		return nil, mapErr("listsys", err, ctx)
	}
	s.noteDamagedSys(prefix, bad)
	return out, nil
}

var _ backend.SysScanner = (*Store)(nil)

// ScanSys reads the head records under prefix a page of 128 per request,
// all at one revision, and the chunks of the large ones at that revision
// (backend.SysScanner).
func (s *Store) ScanSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	if err := s.begin(ctx, "scansys"); err != nil {
		return nil, err
	}
	dir := s.prefix + "s/"
	var out []backend.Entry
	rev, err := s.rangeEach(ctx, dir+prefix, sysPage, false, func(kv *mvccpb.KeyValue) error {
		out = append(out, backend.Entry{Key: string(kv.Key[len(dir):]), Value: kv.Value})
		return nil
	})
	if err != nil {
		return nil, mapErr("scansys", err, ctx)
	}
	for i := range out {
		e := &out[i]
		if e.Value, err = s.sysData(ctx, "scansys", e.Key, e.Value, rev); err != nil {
			return nil, err
		}
		e.Info.Size = int64(len(e.Value))
	}
	return out, nil
}

// DamagedSys returns the system records that ListSys found but left out
// because they do not decode, sorted (under the prefixes listed so far).
// They are kept as they are.
func (s *Store) DamagedSys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.damagedSys))
}

// noteDamagedSys replaces what DamagedSys knows under prefix with bad.
func (s *Store) noteDamagedSys(prefix string, bad []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.damagedSys == nil {
		s.damagedSys = map[string]bool{}
	}
	for n := range s.damagedSys {
		if strings.HasPrefix(n, prefix) {
			delete(s.damagedSys, n)
		}
	}
	for _, n := range bad {
		s.damagedSys[n] = true
	}
}

// DeleteSys removes system records; missing names are ignored.
func (s *Store) DeleteSys(ctx context.Context, names ...string) error {
	if err := checkSysNames("deletesys", names...); err != nil {
		return err
	}
	if err := s.begin(ctx, "deletesys"); err != nil {
		return err
	}
	names = dedupe(names)
	for start := 0; start < len(names); start += maxTxnOps {
		var ops []clientv3.Op
		for _, n := range names[start:min(len(names), start+maxTxnOps)] {
			ops = append(ops, clientv3.OpDelete(s.sys(n)))
		}
		if _, err := s.txn(ctx, nil, ops); err != nil {
			return mapErr("deletesys", err, ctx)
		}
	}
	return nil
}

// SwapSys saves puts and deletes dels in one transaction if the system
// record guard holds exactly old (nil: absent), comparing its head record
// with the head old would have. The chunks of large records are written
// first. More than 128 puts and deletes, or more than 1.4 MiB of head
// records (a record up to 1 MiB is its own head), are refused with backend.ErrBatchTooLarge.
func (s *Store) SwapSys(ctx context.Context, guard string, old []byte, puts map[string][]byte, dels []string) (bool, error) {
	if err := checkSysNames("swapsys", guard); err != nil {
		return false, err
	}
	if err := checkSysNames("swapsys", dels...); err != nil {
		return false, err
	}
	names := make([]string, 0, len(puts))
	for n := range puts {
		names = append(names, n)
	}
	slices.Sort(names)
	if err := checkSysNames("swapsys", names...); err != nil {
		return false, err
	}
	dels = dedupe(dels)
	for _, d := range dels {
		if _, ok := puts[d]; ok {
			return false, &fs.PathError{Op: "swapsys", Path: d, Err: backend.ErrSavedAndDeleted}
		}
	}
	if err := s.begin(ctx, "swapsys"); err != nil {
		return false, err
	}
	var ops []clientv3.Op
	size := 0
	type chunked struct {
		hashes []string
		chunks [][]byte
	}
	var big []chunked
	for _, n := range names {
		head, hashes, chunks := encodeSys(puts[n])
		ops = append(ops, clientv3.OpPut(s.sys(n), string(head)))
		size += len(s.sys(n)) + len(head)
		big = append(big, chunked{hashes, chunks})
	}
	for _, d := range dels {
		ops = append(ops, clientv3.OpDelete(s.sys(d)))
	}
	if len(ops) > maxTxnOps || size > maxSwapBytes {
		return false, fmt.Errorf("etcdstore: swapsys: %d operations of %d bytes, over one transaction's %d and %d: %w",
			len(ops), size, maxTxnOps, maxTxnBytes, backend.ErrBatchTooLarge)
	}
	var in *intent
	for _, c := range big {
		if len(c.hashes) > 0 && in == nil {
			var err error
			if in, err = s.intend(ctx); err != nil {
				return false, mapErr("swapsys", err, ctx)
			}
			defer s.release(in)
		}
		if err := s.putChunks(ctx, c.hashes, c.chunks); err != nil {
			return false, mapErr("swapsys", err, ctx)
		}
	}
	var cmp clientv3.Cmp
	if old == nil {
		cmp = clientv3.Compare(clientv3.CreateRevision(s.sys(guard)), "=", 0)
	} else {
		head, _, _ := encodeSys(old)
		cmp = clientv3.Compare(clientv3.Value(s.sys(guard)), "=", string(head))
	}
	resp, err := s.txn(ctx, append(in.held(), cmp), ops)
	if err != nil {
		return false, mapErr("swapsys", err, ctx)
	}
	if !resp.Succeeded && old != nil {
		// old may be a damaged record as stored (backend.CorruptError's
		// Raw): then the guard holds if the stored bytes are old,
		// unchanged since they were read here.
		cur, err := s.get(ctx, s.sys(guard))
		if err != nil {
			return false, mapErr("swapsys", err, ctx)
		}
		if len(cur.Kvs) > 0 && bytes.Equal(cur.Kvs[0].Value, old) {
			cmp = clientv3.Compare(clientv3.ModRevision(s.sys(guard)), "=", cur.Kvs[0].ModRevision)
			if resp, err = s.txn(ctx, append(in.held(), cmp), ops); err != nil {
				return false, mapErr("swapsys", err, ctx)
			}
		}
	}
	if !resp.Succeeded {
		lost, err := s.lost(ctx, in)
		if err != nil {
			return false, mapErr("swapsys", err, ctx)
		}
		if lost {
			return false, mapErr("swapsys", errIntentLost, ctx)
		}
	}
	return resp.Succeeded, nil
}

// maxSwapBytes bounds the head records of one SwapSys: under etcd's 1.5
// MiB per request, with room for the request's framing, so that one
// record of up to 1 MiB kept inline fits.
const maxSwapBytes = 1536<<10 - 64<<10
