package eventlog

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/memfs/memfs/backend"
)

// The log's records, as the store holds them: what a mount shows read-only
// as .memfs/events/ and .memfs/events.head, so that a reader (memfs log
// --mount) opens, queries and verifies the live log as it would the store.
// They are the chunks under events/ (every record there: an empty one, a
// superseded chunk, a failed Append's leftover and a damaged tail as found
// included, since Verify reads them) and the head record, not the copies
// under events.damaged/.
//
// The Log knows their names and sizes without asking the store: listed by
// Open, then updated by each save and removal it makes. A save that
// failed may still have landed (the store cannot tell); until the next
// successful Append rewrites the record, the Log shows it as it was
// before. Bytes come from memory for the head and an unchanged tail, from
// the chunk cache or the store (with the caller's ctx) for the others.

// noteSaved records that the store holds data as name.
func (l *Log) noteSaved(name string, data []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records[name] = int64(len(data))
	if name == headName {
		l.head = data
	}
}

// noteRemoved records that the store no longer holds names.
func (l *Log) noteRemoved(names []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range names {
		delete(l.records, n)
	}
}

// isRecord reports whether name is one of the records the Log follows.
func isRecord(name string) bool {
	return strings.HasPrefix(name, chunkPrefix) || name == headName
}

// RecordNames returns the names of the log's records that start with
// prefix, sorted: chunk names (events/...) and events.head. It does no
// I/O.
func (l *Log) RecordNames(prefix string) []string {
	l.mu.Lock()
	var names []string
	for n := range l.records {
		if strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	l.mu.Unlock()
	slices.Sort(names)
	return names
}

// RecordSize returns the size of the log's record name as the store holds
// it, and false when the store holds no such record. It does no I/O.
func (l *Log) RecordSize(name string) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	size, ok := l.records[name]
	return size, ok
}

// ReadRecord returns the bytes of the log's record name as the store holds
// it. The head and an unchanged tail come from memory, a chunk of the log
// from the cache Query and ReadAt share (or the store), any other record
// (see RecordNames) from the store, read with ctx. A name that is not one
// of the log's records gives an error satisfying errors.Is(err,
// fs.ErrNotExist). The caller must not modify the bytes.
func (l *Log) ReadRecord(ctx context.Context, name string) ([]byte, error) {
	l.mu.Lock()
	size, ok := l.records[name]
	head := l.head
	v := l.viewLocked()
	l.mu.Unlock()
	if !ok || !isRecord(name) {
		return nil, backend.NotFound("read record", name)
	}
	if name == headName {
		return head, nil
	}
	if name == v.tail.name && size == int64(len(v.data)) {
		// The bytes below len(tailData) never change, and the store's
		// tail differs from memory's only by a cut end (longer) or a
		// failed Append's lines (longer).
		return v.data, nil
	}
	if i := sort.Search(len(v.full), func(i int) bool { return v.full[i].name >= name }); i < len(v.full) && v.full[i].name == name && v.full[i].size == size {
		return l.chunkData(ctx, &v, i)
	}
	data, err := l.load(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("eventlog: read record %s: %w", name, err)
	}
	return data, nil
}
