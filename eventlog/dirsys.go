package eventlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memfs/memfs/backend"
)

// DirSys is a read-only [Sys] over a directory that holds the log's
// records as files: events/<chunk> and events.head, as a live mount
// serves them under .memfs/ (see [Log.RecordNames]). [Open], [Log.Query]
// and [Verify] work on it as on the store. Its lines may be placeholders
// of events hidden from the reader (a masked view): its head then vouches
// for a hidden last event's placeholder, so that Open does not take it
// for a torn line; [Log.QueryVisible] skips them and [VerifyMasked]
// checks what such a view lets it check.
type DirSys struct{ dir string }

// NewDirSys returns the records in dir.
func NewDirSys(dir string) DirSys { return DirSys{dir: dir} }

// SaveSys fails: the records are read-only.
func (d DirSys) SaveSys(ctx context.Context, name string, data []byte) error {
	return fmt.Errorf("%s: the mount's event log is read-only (the mount repairs it)", name)
}

// LoadSys reads record name. The head is the one of the view (see DirSys).
func (d DirSys) LoadSys(ctx context.Context, name string) ([]byte, error) {
	b, err := d.load(name)
	if err != nil || name != headName {
		return b, err
	}
	return d.viewHead(ctx, b)
}

// ListSys lists the records under prefix, regular files only.
func (d DirSys) ListSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	dir, _ := backend.Split(strings.TrimSuffix(prefix, "/") + "/x")
	ents, err := os.ReadDir(filepath.Join(d.dir, filepath.FromSlash(dir)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []backend.Entry
	for _, e := range ents {
		name := backend.Join(dir, e.Name())
		if !strings.HasPrefix(name, prefix) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, backend.Entry{Key: name, Info: backend.Info{Size: fi.Size(), MTime: fi.ModTime()}})
	}
	return out, nil
}

func (d DirSys) load(name string) ([]byte, error) {
	if err := backend.ValidateKey(name); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(d.dir, filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, backend.NotFound("load", name)
	}
	return b, err
}

// viewHead returns the head record for the log as this reader sees it.
// When the last event is hidden from it, its line is a placeholder, whose
// hash is not the one the head names, and Open would cut it as a torn
// line (and fail to save the repair): the head of the view vouches for
// the placeholder instead. VerifyMasked reads the true head.
func (d DirSys) viewHead(ctx context.Context, hd []byte) ([]byte, error) {
	entries, err := d.ListSys(ctx, chunkPrefix)
	if err != nil {
		return nil, err
	}
	chunks, _ := index(entries)
	if len(chunks) == 0 {
		return hd, nil
	}
	data, err := d.load(chunks[len(chunks)-1].name)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimSuffix(data, []byte("\n"))
	last := data[bytes.LastIndexByte(data, '\n')+1:]
	seq, hidden := Placeholder(last)
	if !hidden {
		return hd, nil
	}
	return json.Marshal(head{Seq: seq, Hash: lineHash(last)})
}

// MaskedReport is what VerifyMasked found.
type MaskedReport struct {
	Events int // events read, hidden ones included
	Hidden int // placeholders among them
	// Links is the count of pairs of visible events one after the
	// other: their link was checked.
	Links int
	// Problem is the first break found, "" if none; Seq the event it
	// puts in doubt.
	Problem string
	Seq     uint64
}

// VerifyMasked checks the log in d as a masked view shows it to a
// reader who may not see every event. Where no event is hidden it only
// counts ([Verify] checks such a log whole). Otherwise it checks what can
// be checked: every line parses, seqs run from 1 without a gap, each
// visible event's prev is the hash of the event before it when that one
// is visible too, times do not go backwards, and the head names the last
// seq (and its hash, when the last event is visible). It reads the chunks
// as Open does (see the package doc, "Layout"). The error is for failures
// to read.
func VerifyMasked(ctx context.Context, d DirSys) (MaskedReport, error) {
	entries, err := d.ListSys(ctx, chunkPrefix)
	if err != nil {
		return MaskedReport{}, err
	}
	chunks, _ := index(entries)
	var v maskedVerifier
	for _, c := range chunks {
		if err := ctx.Err(); err != nil {
			return v.r, err
		}
		data, err := d.load(c.name)
		if err != nil {
			return v.r, err
		}
		v.chunk(c.name, data)
	}
	if v.r.Hidden == 0 {
		return v.r, nil
	}
	hd, err := d.load(headName) // the true head, not the view's
	if errors.Is(err, fs.ErrNotExist) {
		return v.r, nil
	}
	if err != nil {
		return v.r, err
	}
	v.head(hd)
	return v.r, nil
}

// maskedVerifier is VerifyMasked's state, line to line.
type maskedVerifier struct {
	r        MaskedReport
	seq      uint64
	prevLine []byte // the line before, nil when hidden (or none)
	lastTime time.Time
}

func (v *maskedVerifier) fail(seq uint64, format string, args ...any) {
	if v.r.Problem == "" {
		v.r.Problem, v.r.Seq = fmt.Sprintf(format, args...), seq
	}
}

func (v *maskedVerifier) chunk(name string, data []byte) {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		v.fail(v.seq+1, "chunk %s: the last line has no newline", name)
	}
	for line := range bytes.SplitSeq(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		v.line(name, line)
	}
}

func (v *maskedVerifier) line(name string, line []byte) {
	v.r.Events++
	v.seq++
	seq := v.seq
	if s, ok := Placeholder(line); ok {
		v.r.Hidden++
		if s != seq {
			v.fail(seq, "event %d: the line holds event %d", seq, s)
		}
		v.prevLine = nil
		return
	}
	ev, err := decodeLine(line)
	if err != nil {
		v.fail(seq, "event %d (%s) does not parse: %v", seq, name, err)
		v.prevLine = nil
		return
	}
	switch {
	case ev.Seq != seq:
		v.fail(seq, "event %d: the line holds event %d", seq, ev.Seq)
	case seq == 1 && ev.Prev != "":
		v.fail(1, "event 1: prev is %q, want empty", ev.Prev)
	case v.prevLine != nil && ev.Prev != lineHash(v.prevLine):
		v.fail(seq-1, "event %d: prev hash does not match event %d (one of them edited)", seq, seq-1)
	case ev.Time.Before(v.lastTime):
		v.fail(seq, "event %d: time goes backwards", seq)
	}
	if v.prevLine != nil {
		v.r.Links++
	}
	v.prevLine, v.lastTime = line, ev.Time
}

func (v *maskedVerifier) head(data []byte) {
	var hd head
	switch {
	case json.Unmarshal(data, &hd) != nil:
		v.fail(0, "the head record %s does not parse", headName)
	case hd.Seq > v.seq:
		v.fail(v.seq+1, "the head record is at event %d but the log ends at event %d (events removed at the end)", hd.Seq, v.seq)
	case hd.Seq == v.seq && v.prevLine != nil && hd.Hash != lineHash(v.prevLine):
		v.fail(v.seq, "event %d does not match the head record (last event edited)", v.seq)
	}
}
