package etcdstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/memfs/memfs/backend"
)

// Sizes of values, chunks and requests.
const (
	// inlineMax is the largest value kept in v/<key>; a larger one is
	// cut into chunks.
	inlineMax = 64 << 10
	// chunkSize is the largest chunk.
	chunkSize = 512 << 10
	// sysInlineMax is the largest system record kept in its head record.
	sysInlineMax = 1 << 20
	// maxTxnOps is etcd's default --max-txn-ops.
	maxTxnOps = 128
	// maxTxnBytes bounds the keys and values of one transaction, under
	// etcd's default --max-request-bytes (1.5 MiB) with room for the
	// request's own framing.
	maxTxnBytes = 1 << 20
)

// recordVersion is the format of the records this package writes.
const recordVersion = 1

// record is the metadata of one key, m/<key>, as JSON: the Info (times as
// seconds and nanoseconds, so that every year round-trips) and where the
// value is: inline in v/<key> (Chunks nil; no v/ for an empty value), or
// in the chunks listed.
type record struct {
	V      int               `json:"v"`
	Size   int64             `json:"size"`
	Mode   uint32            `json:"mode"` // fs.FileMode
	UID    uint32            `json:"uid"`
	GID    uint32            `json:"gid"`
	Rdev   uint64            `json:"rdev,omitempty"`
	MTime  [2]int64          `json:"mtime"`
	ATime  [2]int64          `json:"atime"`
	CTime  [2]int64          `json:"ctime"`
	Link   string            `json:"link,omitempty"`
	XAttrs map[string][]byte `json:"xattrs,omitempty"`
	Chunks []string          `json:"chunks,omitempty"` // sha256 hex of each chunk, in order
}

func timeOf(t [2]int64) time.Time { return time.Unix(t[0], t[1]).UTC() }
func stamp(t time.Time) [2]int64  { return [2]int64{t.Unix(), int64(t.Nanosecond())} }

// newRecord is the record of info (a saved Info: SavedInfo's) with the
// value's chunks (nil: inline).
func newRecord(info backend.Info, chunks []string) record {
	return record{
		V: recordVersion, Size: info.Size, Mode: uint32(info.Mode), UID: info.UID, GID: info.GID, Rdev: info.Rdev,
		MTime: stamp(info.MTime), ATime: stamp(info.ATime), CTime: stamp(info.CTime),
		Link: info.Link, XAttrs: info.XAttrs, Chunks: chunks,
	}
}

// info is the Info r describes, at revision rev.
func (r *record) info(rev int64) backend.Info {
	return backend.Info{
		Size: r.Size, Mode: fs.FileMode(r.Mode), UID: r.UID, GID: r.GID, Rdev: r.Rdev,
		MTime: timeOf(r.MTime), ATime: timeOf(r.ATime), CTime: timeOf(r.CTime),
		Link: r.Link, XAttrs: backend.CloneXAttrs(r.XAttrs), Rev: rev,
	}
}

func (r *record) chunked() bool { return len(r.Chunks) > 0 }

func (r *record) encode() []byte {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // a record of plain fields always marshals
	}
	return b
}

var errBadRecord = errors.New("not a record")

// decodeRecord parses a record, checking what a damaged one would break.
func decodeRecord(b []byte) (*record, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadRecord, err)
	}
	switch {
	case r.V != recordVersion:
		return nil, fmt.Errorf("%w: format %d, this memfs reads %d", errBadRecord, r.V, recordVersion)
	case r.Size < 0:
		return nil, fmt.Errorf("%w: size %d", errBadRecord, r.Size)
	}
	if r.chunked() {
		n := (r.Size + chunkSize - 1) / chunkSize
		if int64(len(r.Chunks)) != n {
			return nil, fmt.Errorf("%w: %d chunks for %d bytes", errBadRecord, len(r.Chunks), r.Size)
		}
		for _, h := range r.Chunks {
			if !validHash(h) {
				return nil, fmt.Errorf("%w: chunk name %q", errBadRecord, h)
			}
		}
	}
	return &r, nil
}

func validHash(h string) bool {
	if len(h) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// split cuts v into chunks and names each by its SHA-256.
func split(v []byte) (hashes []string, chunks [][]byte) {
	for len(v) > 0 {
		n := min(len(v), chunkSize)
		sum := sha256.Sum256(v[:n])
		hashes = append(hashes, hex.EncodeToString(sum[:]))
		chunks = append(chunks, v[:n])
		v = v[n:]
	}
	return hashes, chunks
}

// sysHead is the head record of a system record, s/<name>: a tag byte,
// then the data itself (tagInline) or a JSON sysManifest (tagChunked).
const (
	tagInline  = 0
	tagChunked = 1
)

type sysManifest struct {
	Size   int64    `json:"size"`
	Chunks []string `json:"chunks"`
}

// encodeSys returns the head record for data, and the chunks it names.
// The head is a function of data alone, so SwapSys can compare a guard's
// head with the head of the data it expects.
func encodeSys(data []byte) (head []byte, hashes []string, chunks [][]byte) {
	if len(data) <= sysInlineMax {
		return append([]byte{tagInline}, data...), nil, nil
	}
	hashes, chunks = split(data)
	m, _ := json.Marshal(sysManifest{Size: int64(len(data)), Chunks: hashes})
	return append([]byte{tagChunked}, m...), hashes, chunks
}

// decodeSys reads a head record: the data (inline) or the manifest.
func decodeSys(head []byte) (data []byte, m *sysManifest, err error) {
	if len(head) == 0 {
		return nil, nil, errBadRecord
	}
	switch head[0] {
	case tagInline:
		return head[1:], nil, nil
	case tagChunked:
		var man sysManifest
		if err := json.Unmarshal(head[1:], &man); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errBadRecord, err)
		}
		if man.Size < 0 || int64(len(man.Chunks)) != (man.Size+chunkSize-1)/chunkSize {
			return nil, nil, fmt.Errorf("%w: %d chunks for %d bytes", errBadRecord, len(man.Chunks), man.Size)
		}
		for _, h := range man.Chunks {
			if !validHash(h) {
				return nil, nil, fmt.Errorf("%w: chunk name %q", errBadRecord, h)
			}
		}
		return nil, &man, nil
	}
	return nil, nil, fmt.Errorf("%w: tag %d", errBadRecord, head[0])
}
