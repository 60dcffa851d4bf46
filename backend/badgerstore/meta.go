package badgerstore

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"time"

	"github.com/memfs/memfs/backend"
)

const (
	metaPrefix  = "m/" // "m/"+key: the key's Info, encoded by encodeMeta
	valuePrefix = "v/" // "v/"+key: the key's value

	// metaVersion leads every metadata record, so that a later layout can
	// be told apart from this one.
	metaVersion = 2
	// metaLen is version, size, mtime seconds, mtime nanoseconds, mode,
	// uid, gid. Seconds and nanoseconds apart, not Unix nanoseconds: an
	// int64 of nanoseconds ends in 2262, and touch(1) accepts later dates.
	metaLen = 1 + 8 + 8 + 4 + 4 + 4 + 4
	// metaLenV1 is version 1, written by memfs before version 2: the same
	// fields with the mtime in Unix nanoseconds.
	metaLenV1 = 1 + 8 + 8 + 4 + 4 + 4
)

func metaKey(key string) []byte  { return []byte(metaPrefix + key) }
func valueKey(key string) []byte { return []byte(valuePrefix + key) }

func encodeMeta(info backend.Info) []byte {
	b := make([]byte, 0, metaLen)
	b = append(b, metaVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(info.Size))
	b = binary.BigEndian.AppendUint64(b, uint64(info.MTime.Unix()))
	b = binary.BigEndian.AppendUint32(b, uint32(info.MTime.Nanosecond()))
	b = binary.BigEndian.AppendUint32(b, uint32(info.Mode.Perm()))
	b = binary.BigEndian.AppendUint32(b, info.UID)
	b = binary.BigEndian.AppendUint32(b, info.GID)
	return b
}

func decodeMeta(key string, b []byte) (backend.Info, error) {
	switch {
	case len(b) == metaLen && b[0] == metaVersion:
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
	return backend.Info{}, fmt.Errorf("%s: metadata record of %d bytes, version %d: want %d bytes, version %d",
		key, len(b), firstByte(b), metaLen, metaVersion)
}

func firstByte(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}
