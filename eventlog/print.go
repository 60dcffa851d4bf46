package eventlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"text/tabwriter"

	"github.com/memfs/memfs/internal/names"
)

// ParseOps checks the operation names a query filters on (Query.Ops):
// write, delete, rename, attr or break.
func ParseOps(ops []string) ([]string, error) {
	var out []string
	for _, op := range ops {
		if !slices.Contains([]string{OpWrite, OpDelete, OpRename, OpAttr, OpConflict, OpBreak, OpRedact}, op) {
			return nil, fmt.Errorf("%q: want write, delete, rename, attr, conflict, break or redact", op)
		}
		out = append(out, op)
	}
	return out, nil
}

// WriteJSON writes events to w as JSON lines, as stored.
func WriteJSON(w io.Writer, events []Event) error {
	enc := json.NewEncoder(w)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// WriteTable writes events to w a line each, as memfs log shows them:
// seq, local time, operation, key (old -> new for a rename), size and
// writer; a conflict shows its outcome and copy, a break event shows the damaged record and why. Names are
// printed as names.Show shows them.
func WriteTable(w io.Writer, events []Event) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, e := range events {
		key := names.Show(e.Key)
		if e.Op == OpRename {
			key = names.Show(e.OldKey) + " -> " + key
		}
		who := fmt.Sprintf("%s[%d] uid %d", names.Show(e.Writer.Comm), e.Writer.PID, e.Writer.UID)
		if e.Writer.Agent != "" {
			who += " agent " + names.Show(e.Writer.Agent)
		}
		if e.Op == OpConflict && e.Conflict != nil {
			how := e.Conflict.Outcome
			if e.Conflict.Copy != "" {
				how += ", copy " + names.Show(e.Conflict.Copy)
			}
			key += " (" + how + ")"
		}
		if e.Reason != "" {
			key += " (" + e.Reason + ")"
		}
		if e.Op == OpBreak && e.Break != nil {
			key, who = names.Show(e.Break.Record)+": "+e.Break.Reason, "memfs (damage found at open)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", e.Seq, e.Time.Local().Format("2006-01-02 15:04:05.000"), e.Op, key, e.Size, who)
	}
	return tw.Flush()
}

// NextHint tells the reader of p, the answer to q, how to ask for the
// next page, as memfs log's flags: "(more: --after SEQ)" paging forward,
// "(earlier events: --before SEQ)" paging back; "" when p is the last.
func (p Page) NextHint(q Query) string {
	switch {
	case !p.More || len(p.Events) == 0:
		return ""
	case q.After > 0 || q.Forward:
		return fmt.Sprintf("(more: --after %d)", p.Events[len(p.Events)-1].Seq)
	}
	return fmt.Sprintf("(earlier events: --before %d)", p.Events[0].Seq)
}

// Print writes p, the answer to q, as memfs log shows it: a table on w
// (WriteTable) and then, on hints, how to ask for the next page
// (NextHint); with asJSON, JSON lines as stored (WriteJSON) and no hint.
func (p Page) Print(w, hints io.Writer, q Query, asJSON bool) error {
	if asJSON {
		return WriteJSON(w, p.Events)
	}
	err := WriteTable(w, p.Events)
	if h := p.NextHint(q); err == nil && h != "" {
		fmt.Fprintln(hints, h)
	}
	return err
}

// Show opens the log sys holds and prints the answer to q as memfs log
// does: the visible events (QueryVisible) on w (Page.Print), and on hints
// how many events were hidden from uid (a masked view: the caller may not
// read their files) and how to ask for the next page.
func Show(ctx context.Context, sys Sys, log *slog.Logger, q Query, uid int, w, hints io.Writer, asJSON bool) error {
	l, err := Open(ctx, sys, log)
	if err != nil {
		return err
	}
	page, hidden, err := l.QueryVisible(ctx, q)
	if err != nil {
		return err
	}
	if hidden > 0 {
		fmt.Fprintf(hints, "(%d events skipped: they concern files uid %d may not read)\n", hidden, uid)
	}
	return page.Print(w, hints, q, asJSON)
}

// Summary is the one-line verdict of a Verify: the chain intact, or
// where it breaks.
func (r Report) Summary() string {
	if !r.OK {
		return fmt.Sprintf("event log broken at event %d: %s (%d events in %d chunks read)", r.Seq, r.Problem, r.Events, r.Chunks)
	}
	return fmt.Sprintf("event log ok: %d events in %d chunks, hash chain intact", r.Events, r.Chunks)
}

// Summary tells the reader uid of a filtered view what was checked, and
// fails: the whole chain was not. text is "" when the view is broken
// (the error says where).
func (r MaskedReport) Summary(uid int) (text string, err error) {
	if r.Problem != "" {
		return "", fmt.Errorf("event log broken at event %d: %s (a filtered view: %d of %d events hidden from uid %d)",
			r.Seq, r.Problem, r.Hidden, r.Events, uid)
	}
	return fmt.Sprintf("event log: a filtered view: %d of %d events are hidden from uid %d (they concern files it may not read).\n"+
			"Checked: the seqs run without a gap, and the %d links between visible neighbours hold; the %d links that touch a hidden event cannot be checked here.\n",
			r.Hidden, r.Events, uid, r.Links, max(0, r.Events-1-r.Links)),
		errors.New("event log not fully verified: run memfs log --verify as root, or on the store, to check the whole hash chain")
}
