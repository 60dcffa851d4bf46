package main

import (
	"context"
	"crypto/rand"
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

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/session"
)

// newSessionID names one mount or command run in the event log.
func newSessionID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// eventSink appends a flush's events to the log, tagged with the session.
func eventSink(l *eventlog.Log, id string) func(context.Context, []session.Event) error {
	return func(ctx context.Context, evs []session.Event) error {
		out := make([]eventlog.Event, len(evs))
		for i, e := range evs {
			out[i] = eventlog.Event{Op: e.Op, Key: e.Key, OldKey: e.OldKey, Size: e.Size, SHA256: e.SHA256,
				Writer: e.Writer, Session: id}
		}
		_, err := l.Append(ctx, out)
		return err
	}
}

func logCommand() *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "show the event log: every change that reached the store, newest last",
		Description: "Pages back from the end of the log: --limit events (default 20), then\n" +
			"--before SEQ for the page before. Reads a store, or a live mount with --mount\n" +
			"(through .memfs/events/). --verify checks the whole hash chain instead.",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.StringFlag{Name: "mount", Usage: "read the log of the live mount at DIR"},
			&cli.StringFlag{Name: "key", Usage: "only events whose key (or old key) starts with PREFIX"},
			&cli.StringFlag{Name: "since", Usage: "only events at or after T (RFC 3339, YYYY-MM-DD, or a duration ago such as 24h)"},
			&cli.StringFlag{Name: "until", Usage: "only events before T"},
			&cli.StringSliceFlag{Name: "op", Usage: "only these operations: write, delete, rename, attr (repeatable)"},
			&cli.IntFlag{Name: "limit", Value: 20, Usage: "events per page"},
			&cli.Uint64Flag{Name: "before", Usage: "only events before sequence number SEQ (the previous page)"},
			&cli.Uint64Flag{Name: "after", Usage: "only events after sequence number SEQ, paging forward"},
			&cli.BoolFlag{Name: "json", Usage: "print the events as JSON lines, as stored"},
			&cli.BoolFlag{Name: "verify", Usage: "check the hash chain of the whole log and say where it breaks"},
		},
		Action: func(c *cli.Context) error {
			q := eventlog.Query{KeyPrefix: c.String("key"), Limit: c.Int("limit"), Before: c.Uint64("before"), After: c.Uint64("after")}
			var err error
			if q.Since, err = parseWhen("since", c.String("since")); err != nil {
				return err
			}
			if q.Until, err = parseWhen("until", c.String("until")); err != nil {
				return err
			}
			for _, op := range c.StringSlice("op") {
				if !slices.Contains([]string{eventlog.OpWrite, eventlog.OpDelete, eventlog.OpRename, eventlog.OpAttr}, op) {
					return fmt.Errorf("--op %q: want write, delete, rename or attr", op)
				}
				q.Ops = append(q.Ops, op)
			}
			if q.Limit <= 0 {
				return fmt.Errorf("--limit %d: want at least 1", q.Limit)
			}
			return withEventSys(c, func(ctx context.Context, sys eventlog.Sys) error {
				if c.Bool("verify") {
					return verifyLog(c, ctx, sys)
				}
				l, err := eventlog.Open(ctx, sys, logger(c, false))
				if err != nil {
					return err
				}
				page, err := l.Query(ctx, q)
				if err != nil {
					return err
				}
				return printEvents(c, q, page)
			})
		},
	}
}

func verifyLog(c *cli.Context, ctx context.Context, sys eventlog.Sys) error {
	r, err := eventlog.Verify(ctx, sys)
	if err != nil {
		return err
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", w)
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
		key := e.Key
		if e.Op == eventlog.OpRename {
			key = e.OldKey + " -> " + e.Key
		}
		who := fmt.Sprintf("%s[%d] uid %d", e.Writer.Comm, e.Writer.PID, e.Writer.UID)
		if e.Writer.Agent != "" {
			who += " agent " + e.Writer.Agent
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
	if m := c.String("mount"); m != "" {
		if c.IsSet("store") {
			return errors.New("give --store or --mount, not both")
		}
		if _, err := os.Stat(filepath.Join(m, ".memfs", "events")); err != nil {
			return fmt.Errorf("%s is not a memfs mount with an event log: %w", m, err)
		}
		return fn(c.Context, mountSys{dir: filepath.Join(m, ".memfs")})
	}
	spec, err := parseStore(c.String("store"))
	if err != nil {
		return err
	}
	st, err := openStore(spec, logger(c, false))
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
	if err := backend.ValidateKey(name); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(m.dir, filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, backend.NotFound("load", name)
	}
	return b, err
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
