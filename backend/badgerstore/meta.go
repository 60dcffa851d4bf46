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
	// be told apart from this one. Version 4 keeps every field of
	// backend.Info: version, size, mtime, atime, ctime (each Unix seconds
	// then nanoseconds: an int64 of nanoseconds ends in 2262, and touch(1)
	// accepts later dates), st_mode (backend.UnixMode: node type, setuid,
	// setgid, sticky, permissions), uid, gid, rdev, then the hard-link
	// group (its length as a uint8, then its bytes) and version 3's
	// attribute list.
	metaVersion = 4
	// metaLen is the fixed part of a version 4 record, up to rdev.
	metaLen = 1 + 8 + 3*(8+4) + 4 + 4 + 4 + 8

	// Versions 1 to 3, written by earlier memfs, keep permission bits only
	// (every key was a regular file) and are read unchanged.
	//
	// Version 3 is version 2 followed by the extended attributes: a count
	// (uint16), then per attribute, in name order, the name's length
	// (uint8), the name, the value's length (uint16), the value.
	metaVersion3 = 3
	// metaVersion2 is version, size, mtime seconds, mtime nanoseconds,
	// permission bits, uid, gid.
	metaVersion2 = 2
	metaLenV2    = 1 + 8 + 8 + 4 + 4 + 4 + 4
	// metaLenV1 is version 1, written before version 2: the same fields
	// with the mtime in Unix nanoseconds.
	metaLenV1 = 1 + 8 + 8 + 4 + 4 + 4
)

func metaKey(key string) []byte  { return []byte(metaPrefix + key) }
func valueKey(key string) []byte { return []byte(valuePrefix + key) }

func appendTime(b []byte, t time.Time) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(t.Unix()))
	return binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
}

func readTime(b []byte) time.Time {
	return time.Unix(int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint32(b[8:])))
}

// encodeMeta encodes info as a version 4 record. Save has checked the
// entry with backend.ValidateEntry: a link name and attribute names of at
// most 255 bytes, all attributes together at most backend.MaxXAttrSize.
func encodeMeta(info backend.Info) []byte {
	b := make([]byte, 0, metaLen+1+len(info.Link)+2)
	b = append(b, metaVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(info.Size))
	b = appendTime(b, info.MTime)
	b = appendTime(b, info.ATime)
	b = appendTime(b, info.CTime)
	b = binary.BigEndian.AppendUint32(b, backend.UnixMode(info.Mode))
	b = binary.BigEndian.AppendUint32(b, info.UID)
	b = binary.BigEndian.AppendUint32(b, info.GID)
	b = binary.BigEndian.AppendUint64(b, info.Rdev)
	b = append(b, byte(len(info.Link)))
	b = append(b, info.Link...)
	return appendXAttrs(b, info.XAttrs)
}

// appendXAttrs appends version 3's attribute list.
func appendXAttrs(b []byte, attrs map[string][]byte) []byte {
	names := slices.Sorted(maps.Keys(attrs))
	b = binary.BigEndian.AppendUint16(b, uint16(len(names)))
	for _, n := range names {
		v := attrs[n]
		b = append(b, byte(len(n)))
		b = append(b, n...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(v)))
		b = append(b, v...)
	}
	return b
}

// decodeXAttrs decodes version 3's attribute list, which ends the record.
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

// decodeMeta decodes a metadata record of any version. A record that does
// not parse gives an error wrapping backend.ErrCorrupt that names key.
func decodeMeta(key string, b []byte) (backend.Info, error) {
	info, err := decodeAny(b)
	if err != nil {
		return backend.Info{}, fmt.Errorf("%s: metadata record of %d bytes, version %d: %w: %w",
			key, len(b), firstByte(b), err, backend.ErrCorrupt)
	}
	return info, nil
}

func decodeAny(b []byte) (backend.Info, error) {
	switch firstByte(b) {
	case metaVersion:
		return decodeV4(b)
	case metaVersion3:
		if len(b) < metaLenV2 {
			return backend.Info{}, errors.New("cut short")
		}
		x, err := decodeXAttrs(b[metaLenV2:])
		if err != nil {
			return backend.Info{}, err
		}
		info := decodeV2(b[:metaLenV2])
		info.XAttrs = x
		return info, nil
	case metaVersion2:
		if len(b) != metaLenV2 {
			return backend.Info{}, fmt.Errorf("want %d bytes", metaLenV2)
		}
		return decodeV2(b), nil
	case 1:
		if len(b) != metaLenV1 {
			return backend.Info{}, fmt.Errorf("want %d bytes", metaLenV1)
		}
		b = b[1:]
		mt := time.Unix(0, int64(binary.BigEndian.Uint64(b[8:])))
		return backend.Info{
			Size:  int64(binary.BigEndian.Uint64(b[0:])),
			MTime: mt,
			ATime: mt,
			CTime: mt,
			Mode:  fs.FileMode(binary.BigEndian.Uint32(b[16:])).Perm(),
			UID:   binary.BigEndian.Uint32(b[20:]),
			GID:   binary.BigEndian.Uint32(b[24:]),
		}, nil
	}
	return backend.Info{}, fmt.Errorf("unknown version (this memfs writes %d)", metaVersion)
}

// decodeV2 decodes the metaLenV2 bytes of a version 2 record, or the
// same leading bytes of a version 3 record.
func decodeV2(b []byte) backend.Info {
	b = b[1:]
	mt := readTime(b[8:])
	return backend.Info{
		Size:  int64(binary.BigEndian.Uint64(b[0:])),
		MTime: mt,
		ATime: mt,
		CTime: mt,
		Mode:  fs.FileMode(binary.BigEndian.Uint32(b[20:])).Perm(),
		UID:   binary.BigEndian.Uint32(b[24:]),
		GID:   binary.BigEndian.Uint32(b[28:]),
	}
}

func decodeV4(b []byte) (backend.Info, error) {
	if len(b) < metaLen+1 {
		return backend.Info{}, errors.New("cut short")
	}
	mode := binary.BigEndian.Uint32(b[45:])
	if backend.UnixMode(backend.FileMode(mode)) != mode {
		return backend.Info{}, fmt.Errorf("st_mode %#o is not one a store keeps", mode)
	}
	info := backend.Info{
		Size:  int64(binary.BigEndian.Uint64(b[1:])),
		MTime: readTime(b[9:]),
		ATime: readTime(b[21:]),
		CTime: readTime(b[33:]),
		Mode:  backend.FileMode(mode),
		UID:   binary.BigEndian.Uint32(b[49:]),
		GID:   binary.BigEndian.Uint32(b[53:]),
		Rdev:  binary.BigEndian.Uint64(b[57:]),
	}
	b = b[metaLen:]
	n := int(b[0])
	if len(b) < 1+n {
		return backend.Info{}, errors.New("hard-link group cut short")
	}
	info.Link = string(b[1 : 1+n])
	x, err := decodeXAttrs(b[1+n:])
	if err != nil {
		return backend.Info{}, err
	}
	info.XAttrs = x
	return info, nil
}

func firstByte(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}
