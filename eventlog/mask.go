package eventlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/memfs/memfs/internal/linemask"
)

// A reader who may not see every key (a mount's caller other than root)
// reads the log masked: each line about a key it may not see (Key, or
// OldKey for a rename) is replaced by a placeholder of the same length,
// {"seq":N,"hidden":true} padded with spaces, which keeps the event's
// seq. Every reader so sees the same sizes and offsets, and the chain of
// seqs stays whole. [Placeholder] recognizes such a line, [DirSys] opens a
// log whose lines may be placeholders, and [VerifyMasked] checks what a
// masked view lets it check.

// lineKeys are the fields of an Event that decide whether a reader may
// see its line (their tags are Event's: TestLineKeysAreEventFields).
type lineKeys struct {
	Seq    uint64 `json:"seq"`
	Key    string `json:"key"`
	OldKey string `json:"old_key"`
}

// decideLine is linemask.Decide for the log's lines.
func decideLine(line []byte) ([]string, string) {
	var k lineKeys
	err := json.Unmarshal(line, &k)
	p := linemask.Hidden
	if k.Seq > 0 {
		p = placeholder(k.Seq)
	}
	switch {
	case err != nil || k.Key == "":
		return nil, p
	case k.OldKey != "":
		return []string{k.Key, k.OldKey}, p
	}
	return []string{k.Key}, p
}

// placeholder is the line that stands for event seq in a masked view.
func placeholder(seq uint64) string {
	return `{"seq":` + strconv.FormatUint(seq, 10) + `,"hidden":true}`
}

// Placeholder reports whether line (with or without its newline and
// padding) is the placeholder of an event hidden from the reader, and
// that event's seq.
func Placeholder(line []byte) (seq uint64, ok bool) {
	var p struct {
		Seq    uint64 `json:"seq"`
		Hidden bool   `json:"hidden"`
	}
	if json.Unmarshal(line, &p) != nil || !p.Hidden {
		return 0, false
	}
	return p.Seq, true
}

// isPlaceholder reports whether ev was decoded from a placeholder: no op
// and no key, which no event of the log lacks.
func isPlaceholder(ev *Event) bool { return ev.Op == "" && ev.Key == "" }

// maskLines masks, in place, the lines of buf that visible does not show
// (see linemask.Mask). buf starts at the start of a line.
func maskLines(buf []byte, visible func(keys ...string) []bool) {
	linemask.Mask(buf, decideLine, visible)
}

// ReadMaskedAt is [Log.ReadAt] for a reader who sees only the keys that
// visible shows: each line about another key reads as its placeholder.
// visible is called once per call, with the keys of every line read. A
// line is decided by its keys, so the lines that p cuts are read whole:
// from a little before off to a little after the end, widened until both
// ends are found.
func (l *Log) ReadMaskedAt(ctx context.Context, p []byte, off int64, visible func(keys ...string) []bool) (int, error) {
	back, ahead := int64(4096), int64(4096)
	for {
		lo := max(0, off-back)
		buf := make([]byte, off-lo+int64(len(p))+ahead)
		n, err := l.ReadAt(ctx, buf, lo)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		eof := n < len(buf)
		buf = buf[:n]
		rel := off - lo
		if int64(n) <= rel {
			return 0, io.EOF
		}
		start := 0
		if lo > 0 {
			j := bytes.LastIndexByte(buf[:rel], '\n')
			if j < 0 {
				back *= 2 // a line longer than what was read before off
				continue
			}
			start = j + 1
		}
		last := min(int64(n), rel+int64(len(p))) - 1 // the last byte wanted
		end := len(buf)
		if k := bytes.IndexByte(buf[last:], '\n'); k >= 0 {
			end = int(last) + k + 1
		} else if !eof {
			ahead *= 2
			continue
		}
		maskLines(buf[start:end], visible)
		return copy(p, buf[rel:end]), nil
	}
}

// ReadRecordMasked is [Log.ReadRecord] for a reader who sees only the keys
// that visible shows: a chunk's lines about other keys read as their
// placeholders (the head names no key). The bytes are the caller's.
func (l *Log) ReadRecordMasked(ctx context.Context, name string, visible func(keys ...string) []bool) ([]byte, error) {
	b, err := l.ReadRecord(ctx, name)
	if err != nil || !strings.HasPrefix(name, chunkPrefix) {
		return b, err
	}
	b = bytes.Clone(b) // the Log shares it
	maskLines(b, visible)
	return b, nil
}

// QueryVisible is [Log.Query] over a masked view (see [DirSys]) without
// the placeholders of hidden events: it pages on until it has q.Limit
// events or the log has no more, and returns how many placeholders it
// skipped.
func (l *Log) QueryVisible(ctx context.Context, q Query) (Page, int, error) {
	forward := q.Forward || q.After > 0
	var out []Event
	hidden := 0
	for {
		page, err := l.Query(ctx, q)
		if err != nil {
			return Page{}, 0, err
		}
		var shown []Event
		for _, ev := range page.Events {
			if isPlaceholder(&ev) {
				hidden++
			} else {
				shown = append(shown, ev)
			}
		}
		if forward {
			out = append(out, shown...)
		} else {
			out = append(shown, out...)
		}
		if len(out) >= q.Limit || !page.More || len(page.Events) == 0 {
			return trimPage(out, q.Limit, page.More, forward), hidden, nil
		}
		if forward {
			q.After = page.Events[len(page.Events)-1].Seq
		} else {
			q.Before = page.Events[0].Seq
		}
	}
}

// trimPage is the page of the last (or, forward, the first) limit of
// evs; more is whether the log has more events beyond evs.
func trimPage(evs []Event, limit int, more, forward bool) Page {
	if len(evs) > limit {
		more = true
		if forward {
			evs = evs[:limit]
		} else {
			evs = evs[len(evs)-limit:]
		}
	}
	return Page{Events: evs, More: more}
}
