package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

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
				page, hidden, err := l.QueryVisible(ctx, q)
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

func verifyLog(c *cli.Context, ctx context.Context, sys eventlog.Sys) error {
	// Through a mount, a reader other than root may be shown a filtered
	// view (root sees every event, and Verify checks it).
	if d, ok := sys.(eventlog.DirSys); ok && os.Geteuid() != 0 {
		mr, err := eventlog.VerifyMasked(ctx, d)
		if err != nil {
			return err
		}
		if mr.Hidden > 0 {
			return reportMasked(c, mr)
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
		return fn(c.Context, eventlog.NewDirSys(filepath.Join(t.mnt, ".memfs")))
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

// report tells the reader of a filtered view what was checked, and fails:
// the whole chain was not.
func reportMasked(c *cli.Context, r eventlog.MaskedReport) error {
	uid := os.Geteuid()
	if r.Problem != "" {
		return fmt.Errorf("event log broken at event %d: %s (a filtered view: %d of %d events hidden from uid %d)",
			r.Seq, r.Problem, r.Hidden, r.Events, uid)
	}
	fmt.Fprintf(c.App.Writer, "event log: a filtered view: %d of %d events are hidden from uid %d (they concern files it may not read).\n"+
		"Checked: the seqs run without a gap, and the %d links between visible neighbours hold; the %d links that touch a hidden event cannot be checked here.\n",
		r.Hidden, r.Events, uid, r.Links, max(0, r.Events-1-r.Links))
	return errors.New("event log not fully verified: run memfs log --verify as root, or on the store, to check the whole hash chain")
}
