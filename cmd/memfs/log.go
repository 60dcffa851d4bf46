package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
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
			mountFlag("read the log of"),
			&cli.StringFlag{Name: "key", Usage: "only events whose key (or old key) starts with PREFIX"},
			&cli.StringFlag{Name: "run", Usage: "only the events of run RUN (memfs runs)"},
			&cli.StringFlag{Name: "since", Usage: "only events at or after T (RFC 3339, YYYY-MM-DD, or a duration ago such as 24h)"},
			&cli.StringFlag{Name: "until", Usage: "only events before T"},
			&cli.StringSliceFlag{Name: "op", Usage: "only these operations: write, delete, rename, attr, conflict, redact, break (damage recorded in the log) (repeatable)"},
			&cli.IntFlag{Name: "limit", Value: 20, Usage: "events per page (at least 1)"},
			&cli.Uint64Flag{Name: "before", Usage: "only events before sequence number SEQ (the previous page)"},
			&cli.Uint64Flag{Name: "after", Usage: "only events after sequence number SEQ, paging forward (0: from the first event)"},
			&cli.BoolFlag{Name: "json", Usage: "print the events as JSON lines, as stored"},
			&cli.BoolFlag{Name: "verify", Usage: "check the hash chain of the whole log and say where it breaks"},
		},
		Action: func(c *cli.Context) error {
			q := eventlog.Query{KeyPrefix: c.String("key"), Run: c.String("run"), Limit: c.Int("limit"), Before: c.Uint64("before"), After: c.Uint64("after"), Forward: c.IsSet("after")}
			var err error
			if q.Since, err = parseWhen("since", c.String("since")); err != nil {
				return err
			}
			if q.Until, err = parseWhen("until", c.String("until")); err != nil {
				return err
			}
			if q.Ops, err = eventlog.ParseOps(c.StringSlice("op")); err != nil {
				return fmt.Errorf("--op %w", err)
			}
			return withEventSys(c, func(ctx context.Context, sys eventlog.Sys) error {
				if c.Bool("verify") {
					return verifyLog(c, ctx, sys)
				}
				return eventlog.Show(ctx, sys, logger(c, false), q, os.Geteuid(), c.App.Writer, c.App.ErrWriter, c.Bool("json"))
			})
		},
	}
}

func verifyLog(c *cli.Context, ctx context.Context, sys eventlog.Sys) error {
	lc, err := memfs.VerifyLog(ctx, sys, os.Geteuid())
	return cmp.Or(err, lc.Print(c.App.Writer, c.App.ErrWriter)) // the failure, once the verdicts are out
}

// withEventSys runs fn over the event log of a live mount (--mount) or of
// the store.
func withEventSys(c *cli.Context, fn func(context.Context, eventlog.Sys) error) error {
	t, err := locate(c)
	if err != nil {
		return err
	}
	if t.mnt != "" {
		sys, err := t.Client.Events()
		if err != nil {
			return err
		}
		return fn(c.Context, sys)
	}
	spec := t.Spec
	if err := spec.MustExist(); err != nil {
		return err
	}
	st, err := openStoreAs(spec, true, logger(c, false))
	if err != nil {
		if errors.Is(err, backend.ErrStoreInUse) {
			return fmt.Errorf("%w\n  to read the log of a live mount: memfs log --mount MOUNTPOINT", err)
		}
		return err
	}
	defer st.Close()
	return fn(c.Context, st)
}
