package eventlog

import (
	"context"
	"errors"
	"io"
	"sort"
)

// Size returns the length of the log as one JSONL stream: the chunks
// concatenated in seq order.
func (l *Log) Size() int64 {
	v := l.view()
	return v.size()
}

// ReadAt reads the JSONL stream at off, as io.ReaderAt does: it returns
// io.EOF when it reads less than len(p) because the stream ends. The
// chunk sizes the Log keeps map off to a chunk; the tail is served from
// memory, so a reader following the end (tail -f) does not touch the store.
func (l *Log) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("eventlog: read: negative offset")
	}
	v := l.view()
	n := 0
	if off < v.size() {
		count := v.count()
		i := sort.Search(count, func(i int) bool { return v.at(i).off > off }) - 1
		for ; n < len(p) && i < count; i++ {
			c := v.at(i)
			data, err := l.chunkData(ctx, &v, i)
			if err != nil {
				return n, err
			}
			k := copy(p[n:], data[off-c.off:])
			n += k
			off += int64(k)
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
