package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/memorytool"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/mountclient"
	"github.com/memfs/memfs/search"
)

// store is what the tools work on: an open store (engine) or a running
// mount that serves it (mount), whose session stays the one writer.
type store interface {
	files() memorytool.Files
	// search answers the search file name (search.Name).
	search(ctx context.Context, name string) ([]byte, error)
	// contextPack is the context file name (contextpack.Name).
	contextPack(ctx context.Context, name string) ([]byte, error)
	query(ctx context.Context, q eventlog.Query) (eventlog.Page, error)
	versions(ctx context.Context, key string) ([]history.Version, error)
	setTags(ctx context.Context, key, value string, by meta.WriterInfo) error
	// revert writes key as of to ("": its version before the last; a seq;
	// a snapshot) as a new version and returns that version's seq.
	revert(ctx context.Context, key, to string) (uint64, error)
	snapshot(ctx context.Context, name, by string) error
	addSummary(ctx context.Context, s contextpack.Summary) error
	// flush makes the changes durable (a mount's door fsyncs each).
	flush(ctx context.Context) error
	// watch tells fn of each change (the feed .memfs/changes shows) until
	// ctx ends; fn must not block.
	watch(ctx context.Context, fn func(memfs.Change))
}

type engine struct {
	f   *memfs.FS
	log *slog.Logger
}

func (e engine) files() memorytool.Files { return memorytool.Engine(e.f) }

func (e engine) search(ctx context.Context, name string) ([]byte, error) {
	r, err := search.ParseName(name)
	if err != nil {
		return nil, err
	}
	b, late, err := e.f.Answer(memfs.AsProcess(ctx), r, 30*time.Second)
	if late != nil {
		e.log.Info("mcp: search ranked some notes by their words", "why", late)
	}
	return b, err
}

func (e engine) contextPack(ctx context.Context, name string) ([]byte, error) {
	o, _, manifest, err := contextpack.ParseName(name)
	if err != nil {
		return nil, err
	}
	p, err := e.f.ContextPack(memfs.AsProcess(ctx), o)
	if err != nil {
		return nil, err
	}
	return p.File(manifest), nil
}

func (e engine) query(ctx context.Context, q eventlog.Query) (eventlog.Page, error) {
	return e.f.Events().Query(ctx, q)
}

func (e engine) versions(ctx context.Context, key string) ([]history.Version, error) {
	return e.f.Versions(ctx, key)
}

func (e engine) setTags(ctx context.Context, key, value string, by meta.WriterInfo) error {
	return e.f.SetAttr(ctx, key, meta.Tags, []byte(value), by)
}

func (e engine) revert(ctx context.Context, key, to string) (uint64, error) {
	v, err := e.f.Revert(ctx, key, to)
	return v.Seq, err
}

func (e engine) snapshot(ctx context.Context, name, by string) error {
	_, err := e.f.CreateSnapshot(ctx, name, by)
	return err
}

func (e engine) addSummary(ctx context.Context, s contextpack.Summary) error {
	return e.f.AddSummary(ctx, s)
}

func (e engine) flush(ctx context.Context) error { return e.f.Flush(ctx) }

func (e engine) watch(ctx context.Context, fn func(memfs.Change)) {
	stop := e.f.Watch(fn)
	context.AfterFunc(ctx, stop)
}

// mount goes through a running mount's files as this process's user.
type mount struct {
	c   *mountclient.Client
	log *slog.Logger
}

func (m mount) files() memorytool.Files { return memorytool.Mount(m.c) }

func (m mount) search(_ context.Context, name string) ([]byte, error) { return m.c.Ask("search", name) }

func (m mount) contextPack(_ context.Context, name string) ([]byte, error) {
	return m.c.Ask("context", name)
}

func (m mount) query(ctx context.Context, q eventlog.Query) (eventlog.Page, error) {
	sys, err := m.c.Events()
	if err != nil {
		return eventlog.Page{}, err
	}
	l, err := eventlog.Open(ctx, sys, m.log)
	if err != nil {
		return eventlog.Page{}, err
	}
	page, _, err := l.QueryVisible(ctx, q)
	return page, err
}

func (m mount) versions(_ context.Context, key string) ([]history.Version, error) {
	b, err := m.c.History(key)
	if err != nil {
		return nil, err
	}
	vs := []history.Version{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := history.ParseLogLine(line); ok {
			vs = append(vs, logVersion(key, line, v))
		}
	}
	return vs, nil
}

func (m mount) setTags(_ context.Context, key, value string, _ meta.WriterInfo) error {
	var v []byte // nil: no tags
	if value != "" {
		v = []byte(value)
	}
	return m.c.SetAttr(key, meta.Tags, v)
}

func (m mount) revert(_ context.Context, key, to string) (uint64, error) {
	seq, err := strconv.ParseUint(cmp.Or(to, "0"), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("through a mount, to is a seq (history lists them); a snapshot's files are in %s/.memfs/snapshots/%s/", m.c.Dir, to)
	}
	return m.c.Revert(key, seq)
}

func (m mount) snapshot(_ context.Context, name, _ string) error { return m.c.Snapshot(name) }

func (m mount) addSummary(_ context.Context, s contextpack.Summary) error { return m.c.AddSummary(s) }

func (m mount) flush(context.Context) error { return nil }

// watch follows the mount's .memfs/changes (as tail -f does: the feed's
// size grows as changes are made), from its end when watch is called.
func (m mount) watch(ctx context.Context, fn func(memfs.Change)) {
	feed := filepath.Join(m.c.Dir, ".memfs", "changes")
	f, err := os.Open(feed)
	if err != nil {
		m.log.Error("mcp: no change feed: resource updates are not sent", "err", err)
		return
	}
	off, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return
	}
	go func() {
		defer f.Close()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		var rest []byte
		buf := make([]byte, 64<<10)
		for {
			for {
				n, err := f.ReadAt(buf, off)
				off += int64(n)
				rest = feedLines(append(rest, buf[:n]...), fn)
				if n < len(buf) || err != nil {
					break
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// feedLines passes each whole line of b to fn and returns the rest.
func feedLines(b []byte, fn func(memfs.Change)) []byte {
	for {
		i := strings.IndexByte(string(b), '\n')
		if i < 0 {
			return b
		}
		var r memfs.Change
		if json.Unmarshal(b[:i], &r) == nil && r.Key != "" { // {"hidden":true}: a key this user may not see
			fn(r)
		}
		b = b[i+1:]
	}
}

// logVersion fills v, parsed from line of key's log (history.Version.LogLine:
// "SEQ TIME OP SIZE WRITER [OLDKEY] [(redacted)]"), with what the line
// says beyond the seq and op: the key, time, size and old key.
func logVersion(key, line string, v history.Version) history.Version {
	v.Key = key
	f := strings.Fields(line)
	if t, err := time.Parse(time.RFC3339Nano, f[1]); err == nil {
		v.CTime = t.UnixNano()
	}
	v.Size, _ = strconv.ParseInt(f[3], 10, 64)
	if len(f) > 5 && strings.HasPrefix(f[5], `"`) {
		if i := strings.Index(line, ` "`); i >= 0 {
			v.OldKey, _ = strconv.QuotedPrefix(line[i+1:])
			v.OldKey, _ = strconv.Unquote(v.OldKey)
		}
	}
	return v
}
