package history

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"

	"github.com/memfs/memfs/meta"
)

// A version record is binary (format 1): the byte versionFormat, then the
// fields in this order, an integer as a varint (uvarint, or zig-zag varint
// for a signed one), a string or byte string as its length (uvarint) and
// its bytes:
//
//	seq, op (one byte: its index in versionOps), flags (one byte:
//	flagAddr, flagRedacted), key, old key, the address (32 bytes, if
//	flagAddr), size (signed), mode, uid, gid, rdev, link, mtime, atime,
//	ctime (signed), the count of attributes then each name and value in
//	name order, the writer's uid, pid, comm and agent, the session.
//
// Nothing may follow. A note's version is ~150 bytes, where its JSON with
// field names and the hex address was ~400 (BENCHMARKS.md). Records an
// older memfs wrote are JSON, and read as such: a JSON record starts with
// '{', a binary one with versionFormat. Indexes (Index) stay JSON lines:
// they are chunked values, read whole. A memfs older than this format
// reports a binary record as damaged (ErrCorrupt, naming it) and changes
// nothing: a store once flushed by this memfs wants this memfs or later
// for its history.
const versionFormat = 0x01

const (
	flagAddr     = 1 << 0
	flagRedacted = 1 << 1
	knownFlags   = flagAddr | flagRedacted
)

// versionOps are the ops by their code in a binary record.
var versionOps = [...]string{OpWrite, OpDelete, OpRename, OpAttr, OpConflict}

// encodeVersion is v's record.
func encodeVersion(v *Version) []byte {
	b := make([]byte, 0, 96+len(v.Key)+len(v.OldKey)+len(v.Link)+len(v.Writer.Comm)+len(v.Writer.Agent)+len(v.Session))
	b = append(b, versionFormat)
	b = binary.AppendUvarint(b, v.Seq)
	b = append(b, byte(slices.Index(versionOps[:], v.Op)))
	var flags byte
	if !v.Addr.IsZero() {
		flags |= flagAddr
	}
	if v.Redacted {
		flags |= flagRedacted
	}
	b = append(b, flags)
	b = appendString(b, v.Key)
	b = appendString(b, v.OldKey)
	if flags&flagAddr != 0 {
		b = append(b, v.Addr[:]...)
	}
	b = binary.AppendVarint(b, v.Size)
	b = binary.AppendUvarint(b, uint64(v.Mode))
	b = binary.AppendUvarint(b, uint64(v.UID))
	b = binary.AppendUvarint(b, uint64(v.GID))
	b = binary.AppendUvarint(b, v.Rdev)
	b = appendString(b, v.Link)
	b = binary.AppendVarint(b, v.MTime)
	b = binary.AppendVarint(b, v.ATime)
	b = binary.AppendVarint(b, v.CTime)
	b = binary.AppendUvarint(b, uint64(len(v.XAttrs)))
	for _, k := range slices.Sorted(maps.Keys(v.XAttrs)) {
		b = appendString(b, k)
		b = appendString(b, string(v.XAttrs[k]))
	}
	b = binary.AppendUvarint(b, uint64(v.Writer.UID))
	b = binary.AppendUvarint(b, uint64(v.Writer.PID))
	b = appendString(b, v.Writer.Comm)
	b = appendString(b, v.Writer.Agent)
	return appendString(b, v.Session)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// unmarshalVersion parses a record, binary or JSON, into v (the checks
// of what it holds are decodeVersion's).
func unmarshalVersion(b []byte, v *Version) error {
	if len(b) > 0 && b[0] == '{' {
		return json.Unmarshal(b, v)
	}
	if len(b) == 0 || b[0] != versionFormat {
		return errors.New("neither a binary version record nor JSON")
	}
	d := versionDecoder{b: b[1:]}
	*v = Version{Seq: d.uvarint()}
	op, flags := d.byte(), d.byte()
	if int(op) < len(versionOps) {
		v.Op = versionOps[op]
	}
	if flags&^knownFlags != 0 {
		d.fail("unknown flags")
	}
	v.Key, v.OldKey = d.string(), d.string()
	if flags&flagAddr != 0 {
		copy(v.Addr[:], d.take(len(v.Addr)))
	}
	v.Redacted = flags&flagRedacted != 0
	v.Size = d.varint()
	v.Mode = fs.FileMode(d.uint32())
	v.UID, v.GID = d.uint32(), d.uint32()
	v.Rdev = d.uvarint()
	v.Link = d.string()
	v.MTime, v.ATime, v.CTime = d.varint(), d.varint(), d.varint()
	if n := d.uvarint(); n > 0 && d.err == nil {
		if n > uint64(len(d.b)) {
			d.fail("attribute count")
		}
		v.XAttrs = make(map[string][]byte, min(n, uint64(len(d.b))))
		for range min(n, uint64(len(d.b))) {
			k := d.string()
			v.XAttrs[k] = []byte(d.string())
		}
	}
	v.Writer = meta.WriterInfo{UID: d.uint32(), PID: d.uint32(), Comm: d.string(), Agent: d.string()}
	v.Session = d.string()
	if d.err == nil && len(d.b) > 0 {
		d.fail(fmt.Sprintf("%d bytes after its end", len(d.b)))
	}
	return d.err
}

// versionDecoder reads a binary record's fields; the first failure
// sticks, and every read after it gives zero.
type versionDecoder struct {
	b   []byte
	err error
}

func (d *versionDecoder) fail(why string) {
	if d.err == nil {
		d.err = errors.New(why)
	}
	d.b = nil
}

func (d *versionDecoder) take(n int) []byte {
	if n < 0 || n > len(d.b) {
		d.fail("cut short")
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *versionDecoder) byte() byte {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *versionDecoder) uvarint() uint64 {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("cut short")
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *versionDecoder) varint() int64 {
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("cut short")
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *versionDecoder) uint32() uint32 {
	x := d.uvarint()
	if x > 1<<32-1 {
		d.fail("a 32-bit field over its range")
		return 0
	}
	return uint32(x)
}

func (d *versionDecoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("cut short")
		return ""
	}
	return string(d.take(int(n)))
}
