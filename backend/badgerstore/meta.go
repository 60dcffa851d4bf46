package badgerstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"time"

	"github.com/memfs/memfs/backend"
)

const (
	metaPrefix  = "m/" // "m/"+key: the key's Info, encoded by encodeMeta
	valuePrefix = "v/" // "v/"+key: the key's value

	// metaVersion leads every metadata record, so that a later layout can
	// be told apart from this one.
	metaVersion = 3
	// metaLen is version, size, mtime seconds, mtime nanoseconds, mode,
	// uid, gid. Seconds and nanoseconds apart, not Unix nanoseconds: an
	// int64 of nanoseconds ends in 2262, and touch(1) accepts later dates.
	metaLen = 1 + 8 + 8 + 4 + 4 + 4 + 4
	// Version 3 adds the extended attributes after version 2's fields:
	// a count (uint16), then per attribute, in name order, the name's
	// length (uint8), the name, the value's length (uint16), the value.
	metaVersion2 = 2
	// metaLenV1 is version 1, written by memfs before version 2: the same
	// fields with the mtime in Unix nanoseconds.
	metaLenV1 = 1 + 8 + 8 + 4 + 4 + 4
)

func metaKey(key string) []byte  { return []byte(metaPrefix + key) }
func valueKey(key string) []byte { return []byte(valuePrefix + key) }

func encodeMeta(info backend.Info) []byte {
	b := make([]byte, 0, metaLen+2)
	b = append(b, metaVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(info.Size))
	b = binary.BigEndian.AppendUint64(b, uint64(info.MTime.Unix()))
	b = binary.BigEndian.AppendUint32(b, uint32(info.MTime.Nanosecond()))
	b = binary.BigEndian.AppendUint32(b, uint32(info.Mode.Perm()))
	b = binary.BigEndian.AppendUint32(b, info.UID)
	b = binary.BigEndian.AppendUint32(b, info.GID)
	names := slices.Sorted(maps.Keys(info.XAttrs))
	// Save has checked the attributes: names of at most 255 bytes, all of
	// them at most backend.MaxXAttrSize bytes.
	b = binary.BigEndian.AppendUint16(b, uint16(len(names)))
	for _, n := range names {
		v := info.XAttrs[n]
		b = append(b, byte(len(n)))
		b = append(b, n...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(v)))
		b = append(b, v...)
	}
	return b
}

// decodeXAttrs decodes version 3's attribute list.
func decodeXAttrs(b []byte) (map[string][]byte, error) {
	if len(b) < 2 {
		return nil, errors.New("attribute count missing")
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if n == 0 {
		if len(b) != 0 {
			return nil, errors.New("bytes after the attributes")
		}
		return nil, nil
	}
	out := make(map[string][]byte, n)
	for range n {
		if len(b) < 1 || len(b) < 1+int(b[0])+2 {
			return nil, errors.New("attribute name cut short")
		}
		name := string(b[1 : 1+int(b[0])])
		b = b[1+int(b[0]):]
		vl := int(binary.BigEndian.Uint16(b))
		b = b[2:]
		if len(b) < vl {
			return nil, errors.New("attribute value cut short")
		}
		out[name] = bytes.Clone(b[:vl])
		if out[name] == nil {
			out[name] = []byte{}
		}
		b = b[vl:]
	}
	if len(b) != 0 {
		return nil, errors.New("bytes after the attributes")
	}
	return out, nil
}

func decodeMeta(key string, b []byte) (backend.Info, error) {
	switch {
	case len(b) >= metaLen && b[0] == metaVersion:
		x, err := decodeXAttrs(b[metaLen:])
		if err != nil {
			return backend.Info{}, fmt.Errorf("%s: metadata record: %w", key, err)
		}
		info, err := decodeMeta(key, append([]byte{metaVersion2}, b[1:metaLen]...))
		info.XAttrs = x
		return info, err
	case len(b) == metaLen && b[0] == metaVersion2:
		b = b[1:]
		return backend.Info{
			Size:  int64(binary.BigEndian.Uint64(b[0:])),
			MTime: time.Unix(int64(binary.BigEndian.Uint64(b[8:])), int64(binary.BigEndian.Uint32(b[16:]))),
			Mode:  fs.FileMode(binary.BigEndian.Uint32(b[20:])).Perm(),
			UID:   binary.BigEndian.Uint32(b[24:]),
			GID:   binary.BigEndian.Uint32(b[28:]),
		}, nil
	case len(b) == metaLenV1 && b[0] == 1:
		b = b[1:]
		return backend.Info{
			Size:  int64(binary.BigEndian.Uint64(b[0:])),
			MTime: time.Unix(0, int64(binary.BigEndian.Uint64(b[8:]))),
			Mode:  fs.FileMode(binary.BigEndian.Uint32(b[16:])).Perm(),
			UID:   binary.BigEndian.Uint32(b[20:]),
			GID:   binary.BigEndian.Uint32(b[24:]),
		}, nil
	}
	return backend.Info{}, fmt.Errorf("%s: metadata record of %d bytes, version %d: want at least %d bytes, version %d",
		key, len(b), firstByte(b), metaLen, metaVersion)
}

func firstByte(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}
