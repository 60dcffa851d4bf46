package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/eventlog"
)

func logCommand() *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "show the event log: every change that reached the store, newest last",
		Description: "Pages back from the end of the log: --limit events (default 20), then\n" +
			"--before SEQ for the page before. Reads a store, or a live mount with --mount\n" +
			"(through .memfs/events/). --verify checks the whole hash chain instead.\n\n" +
			"Through a mount, events about files you may not read are hidden from you: the\n" +
			"mount shows each as a placeholder, {\"seq\":N,\"hidden\":true}, which log skips and\n" +
			"counts. --verify then checks what it can (no gap in the seqs, each visible event\n" +
			"chained to a visible one before it), says how many events were hidden, and fails:\n" +
			"only root, or a reader of the store, can check the whole chain.",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.StringFlag{Name: "mount", Usage: "read the log of the live mount at DIR"},
			&cli.StringFlag{Name: "key", Usage: "only events whose key (or old key) starts with PREFIX"},
			&cli.StringFlag{Name: "since", Usage: "only events at or after T (RFC 3339, YYYY-MM-DD, or a duration ago such as 24h)"},
			&cli.StringFlag{Name: "until", Usage: "only events before T"},
			&cli.StringSliceFlag{Name: "op", Usage: "only these operations: write, delete, rename, attr, break (damage recorded in the log) (repeatable)"},
			&cli.IntFlag{Name: "limit", Value: 20, Usage: "events per page (at least 1)"},
			&cli.Uint64Flag{Name: "before", Usage: "only events before sequence number SEQ (the previous page)"},
			&cli.Uint64Flag{Name: "after", Usage: "only events after sequence number SEQ, paging forward (0: from the first event)"},
			&cli.BoolFlag{Name: "json", Usage: "print the events as JSON lines, as stored"},
			&cli.BoolFlag{Name: "verify", Usage: "check the hash chain of the whole log and say where it breaks"},
		},
		Action: func(c *cli.Context) error {
			q := eventlog.Query{KeyPrefix: c.String("key"), Limit: c.Int("limit"), Before: c.Uint64("before"), After: c.Uint64("after"), Forward: c.IsSet("after")}
			var err error
			if q.Since, err = parseWhen("since", c.String("since")); err != nil {
				return err
			}
			if q.Until, err = parseWhen("until", c.String("until")); err != nil {
				return err
			}
			for _, op := range c.StringSlice("op") {
				if !slices.Contains([]string{eventlog.OpWrite, eventlog.OpDelete, eventlog.OpRename, eventlog.OpAttr, eventlog.OpBreak}, op) {
					return fmt.Errorf("--op %q: want write, delete, rename, attr or break", op)
				}
				q.Ops = append(q.Ops, op)
			}
			return withEventSys(c, func(ctx context.Context, sys eventlog.Sys) error {
				if c.Bool("verify") {
					return verifyLog(c, ctx, sys)
				}
				l, err := eventlog.Open(ctx, sys, logger(c, false))
				if err != nil {
					return err
				}
				page, hidden, err := queryVisible(ctx, l, q)
				if err != nil {
					return err
				}
				if hidden > 0 {
					fmt.Fprintf(c.App.ErrWriter, "(%d events skipped: they concern files uid %d may not read)\n", hidden, os.Geteuid())
				}
				return printEvents(c, q, page)
			})
		},
	}
}

// hiddenEvent reports whether ev is the placeholder a mount shows in place
// of an event its reader may not see: {"seq":N,"hidden":true}, so no op and
// no key, which no event of the log lacks.
func hiddenEvent(ev eventlog.Event) bool { return ev.Op == "" && ev.Key == "" }

// queryVisible is Log.Query without the placeholders of hidden events: it
// pages on until it has q.Limit events or the log has no more, and
// returns how many placeholders it skipped.
func queryVisible(ctx context.Context, l *eventlog.Log, q eventlog.Query) (eventlog.Page, int, error) {
	forward := q.Forward || q.After > 0
	var out []eventlog.Event
	hidden := 0
	for {
		page, err := l.Query(ctx, q)
		if err != nil {
			return eventlog.Page{}, 0, err
		}
		var shown []eventlog.Event
		for _, ev := range page.Events {
			if hiddenEvent(ev) {
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
			more := page.More
			if len(out) > q.Limit {
				more = true
				if forward {
					out = out[:q.Limit]
				} else {
					out = out[len(out)-q.Limit:]
				}
			}
			return eventlog.Page{Events: out, More: more}, hidden, nil
		}
		if forward {
			q.After = page.Events[len(page.Events)-1].Seq
		} else {
			q.Before = page.Events[0].Seq
		}
	}
}

func verifyLog(c *cli.Context, ctx context.Context, sys eventlog.Sys) error {
	// Through a mount, a reader other than root may be shown a filtered
	// view (root sees every event, and Verify checks it).
	if m, ok := sys.(mountSys); ok && os.Geteuid() != 0 {
		mr, err := verifyMasked(ctx, m)
		if err != nil {
			return err
		}
		if mr.hidden > 0 {
			return mr.report(c)
		}
	}
	r, err := eventlog.Verify(ctx, sys)
	if err != nil {
		return err
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", w)
	}
	for _, d := range r.Damage {
		fmt.Fprintf(c.App.ErrWriter, "damage: %s\n", d)
	}
	if !r.OK {
		return cli.Exit(fmt.Sprintf("event log broken at event %d: %s (%d events in %d chunks read)", r.Seq, r.Problem, r.Events, r.Chunks), 1)
	}
	fmt.Fprintf(c.App.Writer, "event log ok: %d events in %d chunks, hash chain intact\n", r.Events, r.Chunks)
	return nil
}

func printEvents(c *cli.Context, q eventlog.Query, page eventlog.Page) error {
	w := c.App.Writer
	if c.Bool("json") {
		enc := json.NewEncoder(w)
		for _, e := range page.Events {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, e := range page.Events {
		key := showName(e.Key)
		if e.Op == eventlog.OpRename {
			key = showName(e.OldKey) + " -> " + key
		}
		who := fmt.Sprintf("%s[%d] uid %d", showName(e.Writer.Comm), e.Writer.PID, e.Writer.UID)
		if e.Writer.Agent != "" {
			who += " agent " + showName(e.Writer.Agent)
		}
		if e.Op == eventlog.OpBreak && e.Break != nil {
			key, who = showName(e.Break.Record)+": "+e.Break.Reason, "memfs (damage found at open)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", e.Seq, e.Time.Local().Format("2006-01-02 15:04:05.000"), e.Op, key, e.Size, who)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if page.More && len(page.Events) > 0 {
		if q.After > 0 || q.Forward {
			fmt.Fprintf(c.App.ErrWriter, "(more: --after %d)\n", page.Events[len(page.Events)-1].Seq)
		} else {
			fmt.Fprintf(c.App.ErrWriter, "(earlier events: --before %d)\n", page.Events[0].Seq)
		}
	}
	return nil
}

// withEventSys runs fn over the event log of a live mount (--mount) or of
// the store.
func withEventSys(c *cli.Context, fn func(context.Context, eventlog.Sys) error) error {
	t, err := locate(c)
	if err != nil {
		return err
	}
	if t.mnt != "" {
		if _, err := os.Stat(filepath.Join(t.mnt, ".memfs", "events")); err != nil {
			return fmt.Errorf("%s is not a memfs mount with an event log: %w", t.mnt, err)
		}
		return fn(c.Context, mountSys{dir: filepath.Join(t.mnt, ".memfs")})
	}
	spec := t.spec
	if err := mustExist(spec); err != nil {
		return err
	}
	st, err := openReadOnly(spec, logger(c, false))
	if err != nil {
		if errors.Is(err, backend.ErrStoreInUse) {
			return fmt.Errorf("%w\n  to read the log of a live mount: memfs log --mount MOUNTPOINT", err)
		}
		return err
	}
	defer st.Close()
	return fn(c.Context, st)
}

// mountSys reads the event log's records through a live mount: the mount
// serves them read-only under .memfs/ (events/ and events.head), so the
// log's index (the chunk names) works there as on the store.
type mountSys struct{ dir string }

func (m mountSys) SaveSys(ctx context.Context, name string, data []byte) error {
	return fmt.Errorf("%s: the mount's event log is read-only (the mount repairs it)", name)
}

func (m mountSys) LoadSys(ctx context.Context, name string) ([]byte, error) {
	b, err := m.load(name)
	if err != nil || name != eventlogHead {
		return b, err
	}
	return m.viewHead(ctx, b)
}

func (m mountSys) load(name string) ([]byte, error) {
	if err := backend.ValidateKey(name); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(m.dir, filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, backend.NotFound("load", name)
	}
	return b, err
}

// eventlogHead is the record that names the log's last event.
const eventlogHead = "events.head"

// viewHead returns the head record for the log as this reader sees it.
// When the last event is hidden from it, its line is a placeholder, whose
// hash is not the one the head names, and eventlog.Open would cut it as a
// torn line (and fail to save the repair): the head of the view vouches
// for the placeholder instead. verifyMasked reads the true head.
func (m mountSys) viewHead(ctx context.Context, head []byte) ([]byte, error) {
	chunks, err := m.chunks(ctx)
	if err != nil || len(chunks) == 0 {
		return head, err
	}
	data, err := m.load(chunks[len(chunks)-1])
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	last := lines[len(lines)-1]
	seq, hidden := placeholderSeq(last)
	if !hidden {
		return head, nil
	}
	sum := sha256.Sum256([]byte(last))
	return json.Marshal(struct {
		Seq  uint64 `json:"seq"`
		Hash string `json:"hash"`
	}{seq, hex.EncodeToString(sum[:])})
}

// placeholderSeq reports whether line is a hidden event's placeholder,
// and its seq.
func placeholderSeq(line string) (uint64, bool) {
	var p struct {
		Seq    uint64 `json:"seq"`
		Hidden bool   `json:"hidden"`
	}
	if json.Unmarshal([]byte(line), &p) != nil || !p.Hidden {
		return 0, false
	}
	return p.Seq, true
}

// chunks lists the log's chunk records in order, as eventlog reads them:
// by name, the later of two names with the same first seq.
func (m mountSys) chunks(ctx context.Context) ([]string, error) {
	entries, err := m.ListSys(ctx, "events/")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Info.Size > 0 {
			names = append(names, e.Key)
		}
	}
	slices.Sort(names)
	const seqEnd = len("events/") + 12 // the 12-digit first seq
	var out []string
	for _, n := range names {
		if k := len(out); k > 0 && len(n) > seqEnd && len(out[k-1]) > seqEnd && n[:seqEnd] == out[k-1][:seqEnd] {
			out[k-1] = n
			continue
		}
		out = append(out, n)
	}
	return out, nil
}

// maskedReport is what verifyMasked found.
type maskedReport struct {
	events, hidden int
	links          int    // pairs of visible events one after the other: their link was checked
	problem        string // the first break found, "" if none
	seq            uint64 // the event the problem puts in doubt
}

// verifyMasked checks the log as a mount shows it to a reader who may not
// see every event. Where no event is hidden it only counts (Verify checks
// such a log whole). Otherwise it checks what can be checked: every line
// parses, seqs run from 1 without a gap, each visible event's prev is the
// hash of the event before it when that one is visible too, times do not
// go backwards, and the head names the last seq (and its hash, when the
// last event is visible).
func verifyMasked(ctx context.Context, m mountSys) (maskedReport, error) {
	var r maskedReport
	fail := func(seq uint64, format string, args ...any) {
		if r.problem == "" {
			r.problem, r.seq = fmt.Sprintf(format, args...), seq
		}
	}
	chunks, err := m.chunks(ctx)
	if err != nil {
		return r, err
	}
	var (
		seq      uint64
		prevLine string // the line before, "" when hidden (or none)
		lastTime time.Time
	)
	for _, name := range chunks {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		data, err := m.load(name)
		if err != nil {
			return r, err
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			fail(seq+1, "chunk %s: the last line has no newline", name)
		}
		for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
			r.events++
			seq++
			if s, ok := placeholderSeq(line); ok {
				r.hidden++
				if s != seq {
					fail(seq, "event %d: the line holds event %d", seq, s)
				}
				prevLine = ""
				continue
			}
			var ev eventlog.Event
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				fail(seq, "event %d (%s) does not parse: %v", seq, name, err)
				prevLine = ""
				continue
			}
			sum := sha256.Sum256([]byte(prevLine))
			switch {
			case ev.Seq != seq:
				fail(seq, "event %d: the line holds event %d", seq, ev.Seq)
			case seq == 1 && ev.Prev != "":
				fail(1, "event 1: prev is %q, want empty", ev.Prev)
			case prevLine != "" && ev.Prev != hex.EncodeToString(sum[:]):
				fail(seq-1, "event %d: prev hash does not match event %d (one of them edited)", seq, seq-1)
			case ev.Time.Before(lastTime):
				fail(seq, "event %d: time goes backwards", seq)
			}
			if prevLine != "" {
				r.links++
			}
			prevLine, lastTime = line, ev.Time
		}
	}
	if r.hidden == 0 {
		return r, nil
	}
	head, err := m.load(eventlogHead)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return r, nil
		}
		return r, err
	}
	var hd struct {
		Seq  uint64 `json:"seq"`
		Hash string `json:"hash"`
	}
	sum := sha256.Sum256([]byte(prevLine))
	switch {
	case json.Unmarshal(head, &hd) != nil:
		fail(0, "the head record %s does not parse", eventlogHead)
	case hd.Seq > seq:
		fail(seq+1, "the head record is at event %d but the log ends at event %d (events removed at the end)", hd.Seq, seq)
	case hd.Seq == seq && prevLine != "" && hd.Hash != hex.EncodeToString(sum[:]):
		fail(seq, "event %d does not match the head record (last event edited)", seq)
	}
	return r, nil
}

// report tells the reader of a filtered view what was checked, and fails:
// the whole chain was not.
func (r maskedReport) report(c *cli.Context) error {
	uid := os.Geteuid()
	if r.problem != "" {
		return fmt.Errorf("event log broken at event %d: %s (a filtered view: %d of %d events hidden from uid %d)",
			r.seq, r.problem, r.hidden, r.events, uid)
	}
	fmt.Fprintf(c.App.Writer, "event log: a filtered view: %d of %d events are hidden from uid %d (they concern files it may not read).\n"+
		"Checked: the seqs run without a gap, and the %d links between visible neighbours hold; the %d links that touch a hidden event cannot be checked here.\n",
		r.hidden, r.events, uid, r.links, max(0, r.events-1-r.links))
	return errors.New("event log not fully verified: run memfs log --verify as root, or on the store, to check the whole hash chain")
}

func (m mountSys) ListSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	dir, _ := backend.Split(strings.TrimSuffix(prefix, "/") + "/x")
	ents, err := os.ReadDir(filepath.Join(m.dir, filepath.FromSlash(dir)))
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
